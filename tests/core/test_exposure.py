"""``core.config.exposure``: which actions reach app code, and the token ids a save stamps on
them."""

from __future__ import annotations

from typing import Any

import pytest

from tocsin.core.config.exposure import SAVED_BY, Saver, stamp_grants, target_of, without_grants
from tocsin.errors import PermissionDenied

PURGE = {"id": "a1", "type": "start_workflow", "workflow_id": "admin-purge"}
GREET = {"id": "a2", "type": "start_workflow", "workflow_id": "greet"}
NOTE = {"id": "a3", "type": "notify", "message": "hi"}


def config(*actions: dict[str, Any], alerts: list[dict[str, Any]] | None = None) -> list[Any]:
    trigger: dict[str, Any] = {"id": "t1", "on": "created", "actions": [dict(a) for a in actions]}
    if alerts is not None:
        trigger["on_failure"] = [dict(a) for a in alerts]
    return [trigger]


def saver(token_id: str = "tok-1", *, may_write: bool = False) -> Saver:
    return Saver(token_id=token_id, may_write=may_write, exposed=lambda k, t: t == "greet")


def test_target_of_names_the_app_code_an_action_reaches() -> None:
    assert target_of(PURGE) == ("start_workflow", "admin-purge")
    assert target_of({"type": "invoke_command", "command": "wipe"}) == ("invoke_command", "wipe")
    assert target_of(NOTE) is None
    assert target_of({"type": "start_workflow"}) is None  # malformed: validation refuses it


def test_a_new_action_is_stamped_or_refused() -> None:
    [stamped] = stamp_grants(config(GREET, NOTE), None, saver())
    assert stamped["actions"] == [{**GREET, SAVED_BY: "tok-1"}, NOTE]
    with pytest.raises(PermissionDenied):
        stamp_grants(config(PURGE), None, saver())
    with pytest.raises(PermissionDenied):
        stamp_grants(config(NOTE, alerts=[PURGE]), None, saver())
    [written] = stamp_grants(config(NOTE, alerts=[PURGE]), None, saver(may_write=True))
    assert written["on_failure"] == [{**PURGE, SAVED_BY: "tok-1"}]


def test_an_unchanged_action_keeps_what_was_stored_and_a_changed_one_is_checked() -> None:
    stored = config({**PURGE, SAVED_BY: "writer"}, {**GREET, SAVED_BY: "writer"})
    [kept] = stamp_grants(config(PURGE, GREET), stored, saver("plain"))
    assert [a[SAVED_BY] for a in kept["actions"]] == ["writer", "writer"]
    [moved] = stamp_grants(config(PURGE, {**GREET, "input": {"x": 1}}), stored, saver("plain"))
    assert [a[SAVED_BY] for a in moved["actions"]] == ["writer", "plain"]
    with pytest.raises(PermissionDenied):
        stamp_grants(config({**PURGE, "input": {"x": 1}}), stored, saver("plain"))
    with pytest.raises(PermissionDenied):  # the same action under another id is a new one
        stamp_grants(config({**PURGE, "id": "a9"}), stored, saver("plain"))


def test_the_trusted_facade_stamps_nothing_and_keeps_what_was_stored() -> None:
    stored = config({**PURGE, SAVED_BY: "writer"})
    [kept] = stamp_grants(config(PURGE, GREET), stored, None)
    assert kept["actions"] == [{**PURGE, SAVED_BY: "writer"}, GREET]
    [changed] = stamp_grants(config({**PURGE, "input": 1}), stored, None)
    assert SAVED_BY not in changed["actions"][0]


def test_without_grants_shows_a_config_as_authors_see_it() -> None:
    stored = config({**PURGE, SAVED_BY: "writer"}, alerts=[{**GREET, SAVED_BY: "w"}])
    assert without_grants(stored) == config(PURGE, alerts=[GREET])
    assert stored[0]["actions"][0][SAVED_BY] == "writer"  # a copy: the stored config is intact
    assert without_grants(None) is None
    assert without_grants([1, {"actions": "x"}]) == [1, {"actions": "x"}]
