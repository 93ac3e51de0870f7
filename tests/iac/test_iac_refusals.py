"""``iac.mark_refused`` (pure): which entries of a plan a save's check refuses, each named with
its own refusal; the check is a stand-in here (the service hands it the real one)."""

from __future__ import annotations

from typing import Any

import pytest

from tocsin import iac
from tocsin.errors import ValidationError


def no_repeats(config: list[dict[str, Any]]) -> None:
    """Refuses a repeated id, and more than two triggers (a table-wide rule)."""
    ids = [t["id"] for t in config if "id" in t]
    if len(set(ids)) < len(ids):
        raise ValidationError(f"trigger id '{ids[-1]}' appears more than once")
    if len(config) > 2:
        raise ValidationError(f"at most 2 triggers; got {len(config)}")


def plan_of(*triggers: dict[str, Any]) -> iac.TableDocumentPlan:
    documents = iac.TableDocuments("Cases", [dict(t) for t in triggers])
    return iac.plan_table(documents, [])


def test_a_passing_config_is_left_as_planned() -> None:
    plan = plan_of({"id": "a", "on": "created"}, {"id": "b", "on": "created"})
    iac.mark_refused(plan, no_repeats)
    assert [e["action"] for e in plan.entries] == ["create", "create"]


def test_each_refused_trigger_is_marked_with_its_own_refusal() -> None:
    plan = plan_of(
        {"id": "a", "on": "created"},
        {"id": "a", "on": "updated"},
        {"name": "third", "on": "created"},
        {"on": "deleted"},
    )
    iac.mark_refused(plan, no_repeats)
    assert [(e["action"], e.get("detail")) for e in plan.entries] == [
        ("create", None),
        ("invalid", "table 'Cases', trigger 'a': trigger id 'a' appears more than once"),
        ("create", None),
        ("invalid", "table 'Cases', trigger #4: at most 2 triggers; got 3"),
    ]


def test_a_refusal_no_single_trigger_explains_is_raised() -> None:
    """Only a check that answers differently the second time (the table changed in between)
    refuses the whole config yet passes it trigger by trigger: that refusal is raised as is."""
    calls: list[int] = []

    def first_call_only(config: list[dict[str, Any]]) -> None:
        calls.append(len(config))
        if len(calls) == 1:
            raise ValidationError("refused once")

    plan = plan_of({"id": "a", "on": "created"}, {"id": "b", "on": "created"})
    with pytest.raises(ValidationError, match="refused once"):
        iac.mark_refused(plan, first_call_only)
    assert calls == [2, 1, 2]
