"""The tick and the preview share one evaluator, so they cannot disagree (STYLE R3, SPEC §7).

Through the facade only (``Tocsin.tick``, ``Tocsin.preview``), on both backends, for tables with
clock triggers only, date triggers only, and both (the property must reach every kind of table
the planner sees). Each example builds one or two tables of its shape (so a tick plans several
tables at once), generated records and schedules, and earlier ticks whose runs ended ``done``,
``failed`` or stayed pending, some with triggers paused or resumed before them. Then, at one
instant, for every trigger:

- clock arm: the tick creates exactly ``int(due_now)`` runs (none when nothing is due);
- date arm: when ``due_now`` > 0 the tick creates exactly that many (it stops at the page the
  preview classified); when nothing is due on a page that holds every live record
  (``truncated`` false) it creates none;
- afterwards ``already_fired`` has absorbed ``due_now`` (tables that fit in one page).

Examples share the test's store; each trashes its tables at the end, so the next example's ticks
see only its own tables.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import pytest
from engine_support import (
    NOW,
    clock_trigger,
    date_trigger,
    finish_all,
    make_table,
    runs_of,
    write_raw_cells,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tocsin.service import Tocsin

SHAPES = ("clock", "date", "both")
CELLS = st.one_of(
    st.none(),
    st.sampled_from(["garbage", "9999-12-31T23:59", "0001-01-01T00:00"]),
    st.integers(-3 * 24 * 60, 3 * 24 * 60).map(
        lambda m: (NOW + timedelta(minutes=m)).strftime("%Y-%m-%dT%H:%M")
    ),
)
CLOCKS = st.one_of(
    st.sampled_from([60, 3600, 86400]).map(lambda s: {"type": "interval", "every_seconds": s}),
    st.builds(
        lambda h, m, tz: {"type": "daily", "at": f"{h:02d}:{m:02d}"} | tz,
        st.integers(0, 23),
        st.integers(0, 59),
        st.sampled_from([{}, {"timezone": "Asia/Taipei"}, {"timezone": "America/New_York"}]),
    ),
    st.sampled_from(["*/15 * * * *", "0 9 * * *", "30 2 * * 1-5", "0 0 1 * *"]).map(
        lambda e: {"type": "cron", "expression": e}
    ),
)
PRE_TICKS = st.lists(
    st.tuples(
        st.integers(0, 2 * 24 * 60),
        st.sampled_from(["done", "failed", None]),
        st.sampled_from([None, None, "pause", "resume"]),  # paused triggers agree too
    ),
    max_size=3,
)


@st.composite
def table_setups(draw: st.DrawFn, shape: str) -> dict[str, Any]:
    """One table of ``shape``: its records' Due cells and its triggers (date first)."""
    triggers: list[dict[str, Any]] = []
    if shape in ("date", "both"):
        triggers.append(date_trigger(offset=draw(st.integers(-1440, 1440))))
    if shape in ("clock", "both"):
        clocks = draw(st.lists(CLOCKS, min_size=1, max_size=2))
        triggers += [clock_trigger(c, name=f"clock{k}") for k, c in enumerate(clocks)]
    return {"cells": draw(st.lists(CELLS, max_size=8)), "triggers": triggers}


def _created(t: Tocsin, table_id: str) -> dict[str, int]:
    counts: dict[str, int] = {}
    for run in runs_of(t, table_id):
        counts[run["trigger_id"]] = counts.get(run["trigger_id"], 0) + 1
    return counts


def _build(t: Tocsin, setup: dict[str, Any]) -> str:
    table_id = make_table(t)
    for cell in setup["cells"]:
        record = t.insert_record(table_id, {"Status": "Open"}, now=NOW)
        write_raw_cells(t, table_id, record["id"], {"Due": cell, "Status": "Open"}, now=NOW)
    t.set_triggers(table_id, setup["triggers"], now=NOW)
    return table_id


def _pause_or_resume(t: Tocsin, table_id: str, verb: str, now: datetime) -> None:
    """Pause (or resume) every other schedule trigger of the table, the first one included."""
    for trigger in t.get_triggers(table_id)[::2]:
        if verb == "pause":
            t.pause_trigger(table_id, trigger["id"], now=now)
        else:
            t.resume_trigger(table_id, trigger["id"], now=now)


def _check_agreement(t: Tocsin, table_ids: list[str], now: datetime, limit: int) -> None:
    previews = {tid: t.preview(tid, now=now, record_limit=limit) for tid in table_ids}
    arms = {tid: p["triggers"] for tid, p in previews.items()}
    before = {tid: _created(t, tid) for tid in table_ids}
    t.tick(now=now, record_limit=limit)
    for tid in table_ids:
        after = _created(t, tid)
        for arm in arms[tid]:
            trigger_id = arm["trigger_id"]
            made = after.get(trigger_id, 0) - before[tid].get(trigger_id, 0)
            if arm["kind"] == "date_column_reached":
                if arm["due_now"] or not arm["truncated"]:
                    assert made == arm["due_now"], (arm, made)
            else:
                assert made == int(arm["due_now"]), (arm, made)
        if previews[tid]["live_records"] > limit:
            continue
        again = t.preview(tid, now=now, record_limit=limit)["triggers"]
        for old, new in zip(arms[tid], again, strict=True):
            if old["kind"] == "date_column_reached":
                assert new["due_now"] == 0, new
                assert new["already_fired"] == old["already_fired"] + old["due_now"], (old, new)


@pytest.mark.parametrize("shape", SHAPES)
@settings(
    max_examples=8,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
def test_preview_due_now_is_what_the_next_tick_creates(
    tocsin: Tocsin, shape: str, data: st.DataObject
) -> None:
    setups = data.draw(st.lists(table_setups(shape), min_size=1, max_size=2), label="tables")
    pre_ticks = data.draw(PRE_TICKS, label="pre_ticks")
    extra = data.draw(st.integers(0, 2 * 24 * 60), label="extra")
    limit = data.draw(st.integers(1, 12), label="record_limit")
    table_ids = [_build(tocsin, setup) for setup in setups]
    try:
        last = 0
        for delta, outcome, pausing in sorted(pre_ticks, key=lambda p: p[0]):
            at = NOW + timedelta(minutes=delta)
            if pausing is not None:
                for table_id in table_ids:
                    _pause_or_resume(tocsin, table_id, pausing, at)
            tocsin.tick(now=at, record_limit=limit)
            if outcome is not None:
                for table_id in table_ids:
                    finish_all(tocsin, table_id, outcome, now=at)
            last = delta
        _check_agreement(tocsin, table_ids, NOW + timedelta(minutes=last + extra), limit)
    finally:
        for table_id in table_ids:
            tocsin.trash_table(table_id, now=NOW)
