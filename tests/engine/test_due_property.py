"""The global dry run is the tick, read-only: for random stores and instants, what
``t.due(at=now)`` says fires is exactly what ``t.tick(now=now)`` then creates, per trigger and
per workflow schedule, and every other trigger and schedule is explained with a reason.

Stores: the tables of the tick/preview property (clock, date and both; earlier ticks whose runs
ended or stayed pending), plus imperative workflow schedules of random cron, overlap and
catch-up policy, some paused. Both backends.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import pytest
from engine_support import NOW, finish_all
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_tick_preview_agree import PRE_TICKS, SHAPES, _build, _pause_or_resume, table_setups

from tocsin import Schedule, workflow
from tocsin.service import Tocsin

REASONS = {
    "not_due",
    "no_due_records",
    "active_run",
    "paused",
    "table_trashed",
    "invalid_config",
    "coalesced",
    "dst_gap",
    "evaluation_error",
}
SCHEDULES = st.lists(
    st.fixed_dictionaries(
        {
            "cron": st.sampled_from(["* * * * *", "*/15 * * * *", "0 9 * * *", "30 2 * * 1-5"]),
            "timezone": st.sampled_from(["UTC", "America/New_York"]),
            "overlap": st.sampled_from(["skip", "allow"]),
            "catch_up": st.sampled_from(["latest", "none", "all"]),
            "max_catch_up": st.integers(1, 5),
            "paused": st.booleans(),
        }
    ),
    max_size=3,
)


def _noop(data: dict[str, Any], ctx: Any) -> dict[str, Any]:
    return data


def _flow() -> Any:
    from tocsin import step

    return workflow(id="dry").then(step(id="noop")(_noop)).commit()


def _schedule_runs(t: Tocsin) -> dict[str, int]:
    runs = t.workflow_runs(workflow_id="dry", limit=500)["items"]
    counts: dict[str, int] = {}
    for run in runs:
        counts[run["schedule_id"]] = counts.get(run["schedule_id"], 0) + 1
    return counts


def _check(t: Tocsin, table_ids: list[str], now: datetime, limit: int) -> None:
    due = t.due(at=now, record_limit=limit)
    for entry in due["not_firing"]:
        assert entry["reason"] in REASONS, entry
        assert entry["runs"] == 0
    promised: dict[Any, int] = {}
    for entry in due["fires"]:
        key = entry.get("schedule_id") or (entry["table_id"], entry["trigger_id"])
        promised[key] = entry["runs"]
    before_t, before_s = _per_target(t, table_ids)
    t.tick(now=now, record_limit=limit)
    after_t, after_s = _per_target(t, table_ids)
    made: dict[Any, int] = {}
    for key, n in after_t.items():
        if n - before_t.get(key, 0):
            made[key] = n - before_t.get(key, 0)
    for key, n in after_s.items():
        if n - before_s.get(key, 0):
            made[key] = n - before_s.get(key, 0)
    assert made == promised, (made, due)
    assert sum(promised.values()) == due["runs"]


def _per_target(t: Tocsin, table_ids: list[str]) -> tuple[dict[Any, int], dict[Any, int]]:
    triggers: dict[Any, int] = {}
    for table_id in table_ids:
        for run in t.list_runs(table_id, limit=500, now=NOW)["items"]:
            key = (table_id, run["trigger_id"])
            triggers[key] = triggers.get(key, 0) + 1
    return triggers, _schedule_runs(t)


@pytest.mark.parametrize("shape", SHAPES)
@settings(
    max_examples=6,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
def test_due_is_what_the_tick_creates_and_explains_the_rest(
    tocsin: Tocsin, shape: str, data: st.DataObject
) -> None:
    if "dry" not in tocsin.workflows:
        tocsin.register_workflows([_flow()])
    setups = data.draw(st.lists(table_setups(shape), min_size=1, max_size=2), label="tables")
    schedules = data.draw(SCHEDULES, label="schedules")
    pre_ticks = data.draw(PRE_TICKS, label="pre_ticks")
    extra = data.draw(st.integers(0, 2 * 24 * 60), label="extra")
    limit = data.draw(st.integers(1, 12), label="record_limit")
    table_ids = [_build(tocsin, setup) for setup in setups]
    sids = []
    for s in schedules:
        Schedule(cron=s["cron"], timezone=s["timezone"])  # valid by construction
        made = tocsin.schedules.create(
            workflow_id="dry",
            cron=s["cron"],
            timezone=s["timezone"],
            overlap=s["overlap"],
            catch_up=s["catch_up"],
            max_catch_up=s["max_catch_up"],
            now=NOW,
        )
        sids.append(made["id"])
        if s["paused"]:
            tocsin.schedules.pause(made["id"], now=NOW)
    try:
        last = 0
        for delta, outcome, pausing in sorted(pre_ticks, key=lambda p: p[0]):
            at = NOW + timedelta(minutes=delta)
            if pausing is not None:  # paused table triggers are explained too
                for table_id in table_ids:
                    _pause_or_resume(tocsin, table_id, pausing, at)
            tocsin.tick(now=at, record_limit=limit)
            if outcome is not None:
                for table_id in table_ids:
                    finish_all(tocsin, table_id, outcome, now=at)
            last = delta
        _check(tocsin, table_ids, NOW + timedelta(minutes=last + extra), limit)
    finally:
        for table_id in table_ids:
            tocsin.trash_table(table_id, now=NOW)
        for sid in sids:
            tocsin.schedules.delete(sid)
