"""The tick as a whole: rotation, isolation of broken parts, idle tables, sweeps (SPEC §6)."""

from __future__ import annotations

from typing import Any

import pytest
from engine_support import (
    NOW,
    date_trigger,
    finish_all,
    hours,
    interval,
    make_table,
    minutes,
    notify,
    runs_of,
    write_raw_triggers,
)

from tocsin.engine import sweeps, tick, tick_plan
from tocsin.service import Tocsin
from tocsin.store import claims, ledger
from tocsin.store import runs as store_runs

PAST = "2026-08-27T01:00"


def test_response_shape(tocsin: Tocsin) -> None:
    assert tocsin.tick(now=NOW) == {
        "tables_scanned": 0,
        "tables_with_schedules": 0,
        "runs_created": 0,
        "trigger_runs_requeued": 0,
        "staged_changes_requeued": 0,
        "schedules_fired": 0,
        "lanes_fired": 0,
        "workflow_runs_requeued": 0,
        "lane_attempts_requeued": 0,
    }


def test_rotation_reaches_every_table_in_turn(tocsin: Tocsin) -> None:
    tables = [make_table(tocsin) for _ in range(5)]
    for table_id in tables:
        tocsin.insert_record(table_id, {"Due": PAST}, now=NOW)
        tocsin.set_triggers(table_id, [date_trigger()], now=NOW)
    counts = [tocsin.tick(now=NOW + minutes(i), table_limit=2) for i in range(3)]
    assert [c["tables_scanned"] for c in counts] == [2, 2, 2]
    assert [c["runs_created"] for c in counts] == [2, 2, 1]
    assert all(len(runs_of(tocsin, table_id)) == 1 for table_id in tables)


def test_idle_tables_and_triggers_are_not_loaded(tocsin: Tocsin) -> None:
    """Cost grows with due work: clock-only tables wait for their next window (DESIGN §5)."""
    for _ in range(6):
        tocsin.set_triggers(make_table(tocsin), [interval(3600)], now=NOW)
    for _ in range(3):  # row events only: nothing to schedule, never a candidate
        tocsin.set_triggers(make_table(tocsin), [{"on": "created", "actions": notify()}], now=NOW)
    first = tocsin.tick(now=NOW)
    assert (first["tables_scanned"], first["runs_created"]) == (6, 6)
    for at in (NOW + minutes(1), NOW + minutes(59)):
        assert tocsin.tick(now=at)["tables_scanned"] == 0
    # a pending run keeps its table a candidate; once done, the next window is the next load
    assert tocsin.tick(now=NOW + hours(1))["tables_scanned"] == 6


def test_tables_with_schedules_counts_scanned_tables_that_have_schedule_triggers(
    tocsin: Tocsin,
) -> None:
    scheduled = make_table(tocsin)
    tocsin.set_triggers(scheduled, [interval()], now=NOW)
    counts = tocsin.tick(now=NOW)
    assert (counts["tables_scanned"], counts["tables_with_schedules"]) == (1, 1)


BROKEN: list[Any] = [
    {"id": "trg_aaaaaaaaaaaa", "on": "schedule", "schedule": {"type": "monthly"}, "actions": []},
    {"on": "schedule", "schedule": {"type": "interval", "every_seconds": 3600}, "actions": []},
    {
        "id": "trg_bbbbbbbbbbbb",
        "on": "schedule",
        "schedule": {"type": "interval", "every_seconds": 5},
        "actions": [],
    },
    {
        "id": "trg_cccccccccccc",
        "on": "schedule",
        "schedule": {"type": "daily", "at": "01:30", "timezone": "Nowhere/City"},
        "actions": [],
    },
    {
        "id": "trg_dddddddddddd",
        "on": "schedule",
        "schedule": {"type": "date_column_reached", "column": "Gone"},
        "actions": [],
    },
    {"id": "trg_eeeeeeeeeeee", "on": "schedule", "actions": []},
    "not even an object",
]
EXPECTED_CODES = [
    ["unsupported_schedule_type"],
    ["trigger_id_missing"],
    ["interval_seconds_invalid"],
    ["timezone_invalid"],
    ["schedule_column_missing"],
    ["schedule_object_missing"],
    ["stored_schedule_invalid"],
]


def test_broken_stored_triggers_are_skipped_and_shown_in_the_preview(tocsin: Tocsin) -> None:
    table_id = make_table(tocsin)
    [good] = tocsin.set_triggers(table_id, [interval(3600)], now=NOW)
    # a valid schedule trigger written without its state row
    orphan = dict(good, id="trg_ffffffffffff")
    write_raw_triggers(tocsin, table_id, [*BROKEN, good, orphan], now=NOW)
    assert tocsin.tick(now=NOW)["runs_created"] == 1
    assert {r["trigger_id"] for r in runs_of(tocsin, table_id)} == {good["id"]}
    arms = tocsin.preview(table_id, now=NOW)["triggers"]
    invalid = [a for a in arms if a["kind"] == "invalid"]
    assert [a["error_codes"] for a in invalid] == [*EXPECTED_CODES, ["schedule_state_missing"]]
    assert invalid[0]["stored_schedule_type"] == "monthly"
    assert invalid[0]["trigger_id"] == "trg_aaaaaaaaaaaa"
    assert all(a["config_status"] == "invalid" and a["warnings"] == [] for a in invalid)
    assert [a["kind"] for a in arms if a["kind"] != "invalid"] == ["interval"]


def test_duplicate_ids_are_invalid(tocsin: Tocsin) -> None:
    table_id = make_table(tocsin)
    [good] = tocsin.set_triggers(table_id, [interval(3600)], now=NOW)
    write_raw_triggers(tocsin, table_id, [good, good], now=NOW)
    assert tocsin.tick(now=NOW)["runs_created"] == 0
    arms = tocsin.preview(table_id, now=NOW)["triggers"]
    assert [a["error_codes"] for a in arms] == [["trigger_id_duplicate"]] * 2


def test_a_config_that_is_not_a_list_never_fails_the_tick(tocsin: Tocsin) -> None:
    broken, fine = make_table(tocsin), make_table(tocsin)
    tocsin.set_triggers(fine, [interval()], now=NOW)
    with tocsin.store.begin() as tx:
        from tocsin.store import records

        records.set_table_triggers(tx, table_id=broken, triggers={"oops": 1}, now=NOW)  # type: ignore[arg-type]
    assert tocsin.tick(now=NOW)["runs_created"] == 1
    assert tocsin.preview(broken, now=NOW)["triggers"] == []


def test_a_trigger_that_raises_is_skipped_and_others_proceed(
    tocsin: Tocsin, monkeypatch: pytest.MonkeyPatch
) -> None:
    table_id = make_table(tocsin)
    bad, good = tocsin.set_triggers(table_id, [interval(), interval()], now=NOW)
    real = tick_plan.decide_clock_trigger

    def flaky(trigger: Any, state: Any, now: Any, active: bool) -> Any:
        decided = real(trigger, state, now, active)
        if trigger.trigger_id == bad["id"]:
            raise RuntimeError("broken trigger")  # its decision is dropped
        return decided

    monkeypatch.setattr(tick_plan, "decide_clock_trigger", flaky)
    assert tocsin.tick(now=NOW)["runs_created"] == 1
    assert [r["trigger_id"] for r in runs_of(tocsin, table_id)] == [good["id"]]
    monkeypatch.undo()
    assert tocsin.tick(now=NOW)["runs_created"] == 1  # its window was not consumed


def test_a_batch_whose_writes_fail_goes_table_by_table_and_a_failing_table_is_skipped(
    tocsin: Tocsin, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The batch's transaction rolls back whole, then each table gets its own; the table whose
    writes still fail is skipped (logged) and ticked again next time."""
    tables = [make_table(tocsin) for _ in range(3)]
    for table_id in tables:
        tocsin.set_triggers(table_id, [interval()], now=NOW)
    real = store_runs.insert_runs

    def broken_for_one(tx: Any, *, runs_: Any, now: Any) -> Any:
        runs_ = list(runs_)  # an iterable, read once
        if any(r.table_id == tables[1] for r in runs_):
            raise RuntimeError("insert down for one table")
        return real(tx, runs_=runs_, now=now)

    monkeypatch.setattr(store_runs, "insert_runs", broken_for_one)
    counts = tocsin.tick(now=NOW)
    assert (counts["tables_scanned"], counts["runs_created"]) == (2, 2)
    assert [len(runs_of(tocsin, t)) for t in tables] == [1, 0, 1]
    monkeypatch.undo()
    assert tocsin.tick(now=NOW)["runs_created"] == 1  # its window was not consumed
    assert [len(runs_of(tocsin, t)) for t in tables] == [1, 1, 1]


def test_a_table_that_raises_does_not_roll_back_the_others(
    tocsin: Tocsin, monkeypatch: pytest.MonkeyPatch
) -> None:
    tables = [make_table(tocsin) for _ in range(3)]
    for table_id in tables:
        tocsin.set_triggers(table_id, [interval()], now=NOW)
    real = tick.plan_table

    def flaky(table_id: str, *args: Any, **kwargs: Any) -> Any:
        if table_id == tables[1]:
            raise RuntimeError("broken table")
        return real(table_id, *args, **kwargs)

    monkeypatch.setattr(tick, "plan_table", flaky)
    counts = tocsin.tick(now=NOW)
    assert (counts["tables_scanned"], counts["runs_created"]) == (2, 2)
    assert [len(runs_of(tocsin, t)) for t in tables] == [1, 0, 1]


def test_a_batch_that_raises_mid_read_closes_its_state_stream_before_the_retry(
    tocsin: Tocsin, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The states are read as the plans consume them: a table that raises part way leaves the
    stream's cursor open unless the read closes it, on the connection the batch hands back (it
    was closed whenever the collector got to it, after that connection had moved on)."""
    tables = [make_table(tocsin) for _ in range(3)]
    for table_id in tables:
        tocsin.set_triggers(table_id, [interval()], now=NOW)
    real_plan, real_stream = tick.plan_table, tick.store_state.stream_states
    streams: list[Any] = []  # kept alive here: only an explicit close ends them

    def stream(*args: Any, **kwargs: Any) -> Any:
        streams.append(real_stream(*args, **kwargs))
        return streams[-1]

    def flaky(table_id: str, *args: Any, **kwargs: Any) -> Any:
        if table_id == tables[0]:
            raise RuntimeError("broken table")
        return real_plan(table_id, *args, **kwargs)

    monkeypatch.setattr(tick.store_state, "stream_states", stream)
    monkeypatch.setattr(tick, "plan_table", flaky)
    counts = tocsin.tick(now=NOW)
    assert (counts["tables_scanned"], counts["runs_created"]) == (2, 2)
    assert len(streams) >= 4  # the batch's, one per table, and the empty batch that ends it
    assert [s.gi_frame for s in streams] == [None] * len(streams)  # none left suspended


def test_a_table_whose_stamp_fails_does_not_roll_back_the_others(
    tocsin: Tocsin, monkeypatch: pytest.MonkeyPatch
) -> None:
    tables = [make_table(tocsin) for _ in range(3)]
    for table_id in tables:
        tocsin.set_triggers(table_id, [interval()], now=NOW)
    real = claims.finish_tables

    def flaky(tx: Any, *, values: Any, now: Any) -> None:
        if any(table_id == tables[1] for table_id, _ in values):
            raise RuntimeError("broken table")
        real(tx, values=values, now=now)

    monkeypatch.setattr(claims, "finish_tables", flaky)
    counts = tocsin.tick(now=NOW)
    assert (counts["tables_scanned"], counts["runs_created"]) == (2, 2)
    assert [len(runs_of(tocsin, t)) for t in tables] == [1, 0, 1]


def test_sweeps_run_every_tick_and_a_raising_sweep_reports_zero(
    tocsin: Tocsin, monkeypatch: pytest.MonkeyPatch
) -> None:
    table_id = make_table(tocsin)
    tocsin.set_triggers(table_id, [interval()], now=NOW)
    tocsin.tick(now=NOW)
    stale = NOW + minutes(10)  # the pending run was never picked up (300 s stale window)
    assert tocsin.tick(now=stale)["trigger_runs_requeued"] == 1

    def boom(*args: Any, **kwargs: Any) -> int:
        raise RuntimeError("sweep down")

    monkeypatch.setattr(sweeps, "requeue_staged_changes", boom)  # the others still sweep
    counts = tocsin.tick(now=stale + minutes(10))  # re-stamped at ``stale``: lost again
    assert counts["trigger_runs_requeued"] == 1 and counts["staged_changes_requeued"] == 0
    monkeypatch.setattr(sweeps, "requeue_lost_runs", boom)
    counts = tocsin.tick(now=stale + minutes(20))
    assert counts["trigger_runs_requeued"] == 0 and counts["staged_changes_requeued"] == 0
    assert counts["lane_attempts_requeued"] == 0


def test_idle_triggers_of_a_due_table_are_not_evaluated(
    tocsin: Tocsin, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Per-trigger next_due_at (DESIGN §5): one due trigger does not re-evaluate its idle peers."""
    table_id = make_table(tocsin)
    hourly, *daily = tocsin.set_triggers(
        table_id, [interval(3600)] + [interval(86400)] * 4, now=NOW
    )
    assert tocsin.tick(now=NOW)["runs_created"] == 5
    finish_all(tocsin, table_id, now=NOW)
    evaluated: list[str] = []
    real = tick_plan.decide_clock_trigger

    def spy(trigger: Any, state: Any, now: Any, active: bool) -> Any:
        evaluated.append(trigger.trigger_id)
        return real(trigger, state, now, active)

    monkeypatch.setattr(tick_plan, "decide_clock_trigger", spy)
    assert tocsin.tick(now=NOW + hours(1))["runs_created"] == 1
    assert evaluated == [hourly["id"]]
    finish_all(tocsin, table_id, now=NOW + hours(1))
    evaluated.clear()
    assert tocsin.tick(now=NOW + hours(24))["runs_created"] == 5
    assert sorted(evaluated) == sorted([hourly["id"], *(t["id"] for t in daily)])


def test_a_refused_clock_run_leaves_its_window_unclaimed(
    tocsin: Tocsin, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run that became active after the check (e.g. a retry) makes the index refuse the insert:
    the ledger claim is undone and the window is not consumed, so it fires once the run ends."""
    table_id = make_table(tocsin)
    [saved] = tocsin.set_triggers(table_id, [interval(3600)], now=NOW)
    assert tocsin.tick(now=NOW)["runs_created"] == 1  # pending: the active run
    monkeypatch.setattr(store_runs, "active_clock_trigger_ids", lambda tx, *, trigger_ids: set())
    assert tocsin.tick(now=NOW + hours(1))["runs_created"] == 0
    with tocsin.store.read() as tx:
        claimed = ledger.fired_identities(
            tx, table_id=table_id, trigger_id=saved["id"], identities=["window:2026-08-27T06:02:13"]
        )
    assert claimed == set()
    monkeypatch.undo()
    finish_all(tocsin, table_id, now=NOW + hours(1))
    assert tocsin.tick(now=NOW + hours(1))["runs_created"] == 1
    assert runs_of(tocsin, table_id)[-1]["scheduled_for"] == NOW + hours(1)


def test_a_row_event_run_sharing_the_id_does_not_block_a_clock_trigger(tocsin: Tocsin) -> None:
    """One active run counts clock runs only, as the partial unique index does (DESIGN §5)."""
    rows, clocked = make_table(tocsin), make_table(tocsin)
    shared = "trg_5a5a5a5a5a5a"
    tocsin.set_triggers(rows, [{"id": shared, "on": "created", "actions": notify()}], now=NOW)
    tocsin.insert_record(rows, {"Status": "Open"}, now=NOW)  # a pending row-event run
    tocsin.set_triggers(clocked, [interval(3600, id=shared)], now=NOW)
    arm = tocsin.preview(clocked, now=NOW)["triggers"][0]
    assert (arm["active_run"], arm["due_now"]) == (False, True)
    assert tocsin.tick(now=NOW)["runs_created"] == 1
    assert len(runs_of(tocsin, clocked)) == 1
