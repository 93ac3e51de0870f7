"""Hypothesis: IaC converges over generated valid configs (SPEC §11).

Configs mix all four schedule kinds (date_column_reached, interval, daily, cron), row-event
triggers, ``when`` predicates and several action types, with explicit defaults written in at
random. For each: apply the id-less documents to an empty table, then

- plan → every entry noop (each document adopts the trigger its apply created);
- export → plan is noop, and exporting again gives identical bytes;
- the export with explicit defaults written in (and without ids) still plans noop;
- applying the documents again changes nothing: the export's bytes are the same.

Runs on SQLite and PostgreSQL (the conftest ``tocsin`` fixture); a fresh scope per example.
"""

from __future__ import annotations

import copy
import uuid
from datetime import UTC, datetime
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tocsin import iac
from tocsin.service import Tocsin

NOW = datetime(2026, 8, 27, 5, 2, 13, tzinfo=UTC)
COLUMNS = {"Due": "datetime", "Day": "date", "Status": "text", "N": "number"}
ZONES = ["UTC", "Asia/Taipei", "America/New_York", "Europe/London"]
CRONS = [
    "0 9 * * 1-5",
    "*/15 * * * *",
    "0  0 1 * *",
    "30 8-18/2 * * *",
    "0 9 15 * 5",
    "5 4 * 1,7 *",
]
PROPERTY = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

text = st.text(st.characters(codec="utf-8", exclude_characters="\x00"), min_size=1, max_size=8)
words = text.filter(lambda s: bool(s.strip()))


def _optional(key: str, values: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    return st.one_of(st.just({}), values.map(lambda v: {key: v}))


date_schedule = st.builds(
    lambda column, extra: {"type": "date_column_reached", "column": column, **extra},
    st.sampled_from(["Due", "Day"]),
    _optional("offset_minutes", st.integers(-43200, 43200) | st.just(0)),
)
interval_schedule = st.builds(
    lambda every: {"type": "interval", "every_seconds": every}, st.integers(60, 2592000)
)
daily_schedule = st.builds(
    lambda h, m, extra: {"type": "daily", "at": f"{h:02d}:{m:02d}", **extra},
    st.integers(0, 23),
    st.integers(0, 59),
    _optional("timezone", st.sampled_from(ZONES)),
)
cron_schedule = st.builds(
    lambda expression, extra: {"type": "cron", "expression": expression, **extra},
    st.sampled_from(CRONS),
    _optional("timezone", st.sampled_from(ZONES)),
)
predicate = st.one_of(
    st.builds(lambda v: {"column": "Status", "op": "neq", "value": v}, words),
    st.builds(lambda v: {"column": "N", "op": "gt", "value": v}, st.integers(-100, 100)),
    st.just({"column": "Status", "op": "is_empty"}),
    st.builds(lambda v: {"column": "Status", "op": "in", "value": v}, st.lists(words, max_size=3)),
)
action = st.one_of(
    st.builds(lambda m: {"type": "notify", "message": m}, words),
    st.builds(
        lambda p: {"type": "webhook", "url": "https://example.com/hook", "payload": p},
        st.dictionaries(words, st.integers() | words, max_size=2),
    ),
    st.builds(lambda w: {"type": "start_workflow", "workflow_id": w}, st.sampled_from(["a", "b"])),
)


@st.composite
def trigger(draw: st.DrawFn) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if draw(st.booleans()):
        out["name"] = draw(text)
    on = draw(st.sampled_from(["schedule", "schedule", "schedule", "created", "updated"]))
    out["on"] = on
    schedule = None
    if on == "schedule":
        kinds = st.one_of(date_schedule, interval_schedule, daily_schedule, cron_schedule)
        schedule = draw(kinds)
    if not (schedule and schedule["type"] == "cron") and draw(st.booleans()):
        out["when"] = draw(st.lists(predicate, max_size=2))
    if schedule is not None:
        out["schedule"] = schedule
    out["actions"] = draw(st.lists(action, min_size=1, max_size=3))
    return out


def with_explicit_defaults(document: dict[str, Any]) -> dict[str, Any]:
    """The document with every omittable default written out, and without ids."""
    out = copy.deepcopy({k: v for k, v in document.items() if k != "id"})
    schedule = out.get("schedule") or {}
    if schedule.get("type") == "date_column_reached":
        schedule.setdefault("offset_minutes", 0)
    if schedule.get("type") in ("daily", "cron"):
        schedule.setdefault("timezone", "UTC")
    out.setdefault("when", None)
    for item in out["actions"]:
        item.pop("id", None)
    return out


def all_noop(plan: list[dict[str, Any]]) -> bool:
    return all(entry["action"] == "noop" for entry in plan)


@PROPERTY
@given(config=st.lists(trigger(), min_size=1, max_size=4))
def test_iac_converges(tocsin: Tocsin, config: list[dict[str, Any]]) -> None:
    scope_id = str(uuid.uuid4())
    tocsin.create_table("chatroom", scope_id, "Cases", COLUMNS, now=NOW)
    tocsin.create_table("chatroom", scope_id, "Bystander", COLUMNS, now=NOW)
    documents = [{"table": "Cases", **t} for t in config]

    applied = tocsin.apply("chatroom", scope_id, documents, now=NOW)
    assert [e["action"] for e in applied] == ["create"] * len(config)
    assert all_noop(tocsin.plan("chatroom", scope_id, documents))

    exported = tocsin.export("chatroom", scope_id)
    assert len(exported) == len(config)
    assert all_noop(tocsin.plan("chatroom", scope_id, exported))
    text_ = iac.dumps(exported)
    assert iac.dumps(tocsin.export("chatroom", scope_id)) == text_
    assert iac.loads(text_) == exported

    defaults = [with_explicit_defaults(d) for d in exported]
    assert all_noop(tocsin.plan("chatroom", scope_id, defaults))
    assert all_noop(tocsin.apply("chatroom", scope_id, defaults, now=NOW))
    assert all_noop(tocsin.apply("chatroom", scope_id, documents, now=NOW))
    assert iac.dumps(tocsin.export("chatroom", scope_id)) == text_
