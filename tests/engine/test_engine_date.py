"""date_column_reached in the tick: identity per value, saturation, cursor paging (§4.1, §6)."""

from __future__ import annotations

import math
from datetime import datetime, timedelta
from typing import Any

from engine_support import (
    NOW,
    date_trigger,
    hours,
    make_table,
    minutes,
    runs_of,
    write_raw_cells,
)

from tocsin.service import Tocsin
from tocsin.store import state as store_state

PAST = "2026-08-27T01:00"
FUTURE = "2026-09-30T09:00"


def _state(t: Tocsin, table_id: str, trigger_id: str) -> dict[str, Any]:
    with t.store.read() as tx:
        state = store_state.get_state(tx, table_id=table_id, trigger_id=trigger_id)
    assert state is not None
    return state


def test_a_value_fires_once_and_a_new_value_re_arms(tocsin: Tocsin) -> None:
    table_id = make_table(tocsin)
    record = tocsin.insert_record(table_id, {"Due": PAST, "Status": "Open"}, now=NOW)
    [saved] = tocsin.set_triggers(table_id, [date_trigger()], now=NOW)
    assert tocsin.tick(now=NOW)["runs_created"] == 1
    [run] = runs_of(tocsin, table_id)
    assert run["record_id"] == record["id"] and run["source"] == "schedule"
    payload = tocsin.get_run(table_id, run["id"])["payload"]
    assert payload == {"id": record["id"], "data": {"Due": PAST, "Status": "Open"}}
    assert run["definition"] == saved
    assert run["scheduled_for"] == datetime.fromisoformat(PAST + "+00:00")
    assert tocsin.tick(now=NOW + hours(1))["runs_created"] == 0

    tocsin.update_record(table_id, record["id"], {"Due": "2026-08-27T03:00"}, now=NOW)
    assert tocsin.tick(now=NOW + hours(2))["runs_created"] == 1  # a value never seen re-arms
    tocsin.update_record(table_id, record["id"], {"Due": PAST}, now=NOW)
    assert tocsin.tick(now=NOW + hours(3))["runs_created"] == 0  # an old value does not


def test_identity_uses_the_normalized_minute(tocsin: Tocsin) -> None:
    table_id = make_table(tocsin)
    record = tocsin.insert_record(table_id, {"Due": "2026-08-27T01:00:05Z"}, now=NOW)
    tocsin.set_triggers(table_id, [date_trigger()], now=NOW)
    assert tocsin.tick(now=NOW)["runs_created"] == 1
    # same minute, an offset that is dropped: the same identity
    tocsin.update_record(table_id, record["id"], {"Due": "2026-08-27T01:00:40+08:00"}, now=NOW)
    assert tocsin.tick(now=NOW + minutes(1))["runs_created"] == 0


def test_a_failed_run_still_holds_its_value(tocsin: Tocsin) -> None:
    from engine_support import finish

    table_id = make_table(tocsin)
    tocsin.insert_record(table_id, {"Due": PAST}, now=NOW)
    tocsin.set_triggers(table_id, [date_trigger()], now=NOW)
    tocsin.tick(now=NOW)
    [run] = runs_of(tocsin, table_id)
    finish(tocsin, run["id"], "failed", now=NOW)
    assert tocsin.tick(now=NOW + minutes(5))["runs_created"] == 0


def test_no_skip_if_overdue_on_the_first_tick(tocsin: Tocsin) -> None:
    table_id = make_table(tocsin)
    old = [{"Due": f"2025-0{m}-01T00:00"} for m in range(1, 10)]
    tocsin.insert_records(table_id, [*old, {"Due": FUTURE}], now=NOW)
    tocsin.set_triggers(table_id, [date_trigger(offset=-1440)], now=NOW)
    arm = tocsin.preview(table_id, now=NOW)["triggers"][0]
    assert arm["due_now"] == 9 and arm["scheduled_for_future"] == 1
    assert "overdue_records_will_fire" in arm["warnings"]
    assert tocsin.tick(now=NOW)["runs_created"] == 9


def test_offset_moves_the_fire_time(tocsin: Tocsin) -> None:
    table_id = make_table(tocsin)
    tocsin.insert_record(table_id, {"Due": "2026-08-28T05:00"}, now=NOW)
    tocsin.set_triggers(table_id, [date_trigger(offset=-1440)], now=NOW)
    assert tocsin.tick(now=datetime.fromisoformat("2026-08-27T04:59+00:00"))["runs_created"] == 0
    assert tocsin.tick(now=datetime.fromisoformat("2026-08-27T05:00+00:00"))["runs_created"] == 1


def test_when_filters_rows(tocsin: Tocsin) -> None:
    table_id = make_table(tocsin)
    tocsin.insert_records(
        table_id, [{"Due": PAST, "Status": "Done"}, {"Due": PAST, "Status": "Open"}], now=NOW
    )
    when = [{"column": "Status", "op": "neq", "value": "Done"}]
    tocsin.set_triggers(table_id, [date_trigger(when=when)], now=NOW)
    arm = tocsin.preview(table_id, now=NOW)["triggers"][0]
    assert (arm["when_filter_mismatch"], arm["due_now"]) == (1, 1)
    assert tocsin.tick(now=NOW)["runs_created"] == 1
    [run] = runs_of(tocsin, table_id)
    assert tocsin.get_run(table_id, run["id"])["payload"]["data"]["Status"] == "Open"


def test_date_column_fires_at_midnight_utc(tocsin: Tocsin) -> None:
    table_id = make_table(tocsin)
    tocsin.insert_record(table_id, {"Day": "2026-08-28"}, now=NOW)
    tocsin.set_triggers(table_id, [date_trigger("Day")], now=NOW)
    assert tocsin.tick(now=datetime.fromisoformat("2026-08-27T23:59+00:00"))["runs_created"] == 0
    assert tocsin.tick(now=datetime.fromisoformat("2026-08-28T00:00+00:00"))["runs_created"] == 1


def test_boundary_cells_saturate_and_bad_cells_never_raise(tocsin: Tocsin) -> None:
    table_id = make_table(tocsin)
    ids = tocsin.insert_records(
        table_id,
        [{"Due": "9999-12-31T23:59"}, {"Due": "0001-01-01T00:00"}, {"Due": None}, {"Due": PAST}],
        now=NOW,
    )
    write_raw_cells(tocsin, table_id, ids[3], {"Due": "not a date"}, now=NOW)
    bad = tocsin.insert_records(table_id, [{"Due": PAST}, {"Due": PAST}], now=NOW)
    write_raw_cells(tocsin, table_id, bad[0], {"Due": 20260101}, now=NOW)
    write_raw_cells(tocsin, table_id, bad[1], {"Due": "2026-02-30T00:00"}, now=NOW)
    tocsin.set_triggers(
        table_id, [date_trigger(offset=43200), date_trigger(offset=-43200)], now=NOW
    )
    # 9999-12-31 + 30 days clamps to the max (never due); 0001-01-01 - 30 days to the min (due)
    for arm in tocsin.preview(table_id, now=NOW)["triggers"]:
        assert (arm["scheduled_for_future"], arm["due_now"]) == (1, 1)
        assert (arm["missing_schedule_value"], arm["invalid_schedule_value"]) == (1, 3)
    assert tocsin.tick(now=NOW)["runs_created"] == 2
    assert {r["record_id"] for r in runs_of(tocsin, table_id)} == {ids[1]}


def test_trashed_records_do_not_fire(tocsin: Tocsin) -> None:
    table_id = make_table(tocsin)
    record = tocsin.insert_record(table_id, {"Due": PAST}, now=NOW)
    tocsin.set_triggers(table_id, [date_trigger()], now=NOW)
    tocsin.trash_record(table_id, record["id"], now=NOW)
    assert tocsin.tick(now=NOW)["runs_created"] == 0
    tocsin.restore_record(table_id, record["id"], now=NOW)
    assert tocsin.tick(now=NOW + minutes(1))["runs_created"] == 1


def _insert_in_order(t: Tocsin, table_id: str, cells: list[str]) -> list[str]:
    """One record per cell, created one second apart so the cursor order is the list order."""
    ids = []
    for i, due in enumerate(cells):
        ids.append(t.insert_record(table_id, {"Due": due}, now=NOW + timedelta(seconds=i))["id"])
    return ids


def test_cursor_advances_up_to_ten_more_pages_then_stops_at_due_rows(tocsin: Tocsin) -> None:
    limit, total = 2, 30
    table_id = make_table(tocsin)
    cells = [FUTURE] * total
    cells[24] = PAST  # the 25th row, in the 13th page
    ids = _insert_in_order(tocsin, table_id, cells)
    [saved] = tocsin.set_triggers(table_id, [date_trigger()], now=NOW)
    at = NOW + minutes(1)
    # 1 + 10 pages = 22 rows examined, none due; the cursor moves to the last examined row
    assert tocsin.tick(now=at, record_limit=limit)["runs_created"] == 0
    assert _state(tocsin, table_id, saved["id"]).cursor_id == ids[21]
    arm = tocsin.preview(table_id, now=at, record_limit=limit)["triggers"][0]
    assert (arm["records_scanned"], arm["unscanned"], arm["truncated"]) == (2, 28, True)
    assert tocsin.tick(now=at, record_limit=limit)["runs_created"] == 1
    assert _state(tocsin, table_id, saved["id"]).cursor_id == ids[25]  # stopped at the due page
    # worst-case detection latency: ceil(live / (10 × record_limit)) ticks
    assert math.ceil(total / (10 * limit)) == 2


def test_cursor_wraps_to_the_start_at_most_once(tocsin: Tocsin) -> None:
    limit = 2
    table_id = make_table(tocsin)
    ids = _insert_in_order(tocsin, table_id, [FUTURE] * 8)
    [saved] = tocsin.set_triggers(table_id, [date_trigger()], now=NOW)
    at = NOW + minutes(1)
    tocsin.tick(now=at, record_limit=limit)  # 8 rows, nothing due: cursor on the last row
    assert _state(tocsin, table_id, saved["id"]).cursor_id == ids[7]
    tocsin.update_record(table_id, ids[2], {"Due": PAST}, now=at)
    # past the end: wrap to the start, find the due row in the second page
    assert tocsin.tick(now=at, record_limit=limit)["runs_created"] == 1
    assert _state(tocsin, table_id, saved["id"]).cursor_id == ids[3]
    # nothing due: one full lap from the cursor, then stop where it began (no second lap)
    assert tocsin.tick(now=at, record_limit=limit)["runs_created"] == 0
    assert _state(tocsin, table_id, saved["id"]).cursor_id == ids[3]


def test_every_row_is_reached_in_turn(tocsin: Tocsin) -> None:
    """A large table never starves new rows: each is examined within the latency bound."""
    limit = 1
    table_id = make_table(tocsin)
    _insert_in_order(tocsin, table_id, [FUTURE] * 25)
    tocsin.set_triggers(table_id, [date_trigger()], now=NOW)
    at = NOW + minutes(1)
    tocsin.tick(now=at, record_limit=limit)
    late = tocsin.insert_record(table_id, {"Due": PAST}, now=at)  # appended at the end
    bound = math.ceil(26 / (10 * limit))
    created = sum(tocsin.tick(now=at, record_limit=limit)["runs_created"] for _ in range(bound))
    assert created == 1
    assert runs_of(tocsin, table_id)[0]["record_id"] == late["id"]


def test_an_idle_date_table_is_not_read_again_until_due_or_written(tocsin: Tocsin) -> None:
    """Per-trigger next_due_at for date triggers too (DESIGN §5): after a whole lap without a
    due row the table sleeps until its earliest future fire instant or the next record write."""
    table_id = make_table(tocsin)
    ids = _insert_in_order(tocsin, table_id, ["2026-08-27T09:00", FUTURE, PAST])
    tocsin.update_record(table_id, ids[0], {"Status": "Open"}, now=NOW)
    open_only = [{"column": "Status", "op": "eq", "value": "Open"}]
    tocsin.set_triggers(table_id, [date_trigger(when=open_only)], now=NOW)
    tocsin.update_record(table_id, ids[2], {"Status": "Done"}, now=NOW)  # due, but filtered out
    assert tocsin.tick(now=NOW)["tables_scanned"] == 1  # one lap: nothing due
    for at in (NOW + minutes(1), NOW + hours(3)):
        assert tocsin.tick(now=at)["tables_scanned"] == 0
    nine = datetime.fromisoformat("2026-08-27T09:00+00:00")
    assert tocsin.tick(now=nine)["runs_created"] == 1  # woken by its earliest fire instant
    _sleeps_after_one_lap(tocsin, nine + minutes(1))

    tocsin.update_record(table_id, ids[2], {"Status": "Open"}, now=nine)  # a write wakes it
    assert tocsin.tick(now=nine + minutes(2))["runs_created"] == 1
    _sleeps_after_one_lap(tocsin, nine + minutes(3))
    late = tocsin.insert_record(table_id, {"Due": PAST, "Status": "Open"}, now=nine)
    assert tocsin.tick(now=nine + minutes(5))["runs_created"] == 1
    _sleeps_after_one_lap(tocsin, nine + minutes(6))
    tocsin.trash_record(table_id, late["id"], now=nine)  # trashing never makes a row due
    assert tocsin.tick(now=nine + minutes(8))["tables_scanned"] == 0


def _sleeps_after_one_lap(t: Tocsin, at: datetime) -> None:
    """A tick that fired rows stopped at their page: the next one finishes the lap, then sleeps."""
    assert t.tick(now=at)["tables_scanned"] == 1
    assert t.tick(now=at + minutes(1))["tables_scanned"] == 0


def test_restoring_a_record_or_saving_the_config_wakes_date_triggers(tocsin: Tocsin) -> None:
    table_id = make_table(tocsin)
    record = tocsin.insert_record(table_id, {"Due": PAST, "Status": "Done"}, now=NOW)
    tocsin.trash_record(table_id, record["id"], now=NOW)
    when = [{"column": "Status", "op": "eq", "value": "Open"}]
    [saved] = tocsin.set_triggers(table_id, [date_trigger(when=when)], now=NOW)
    _sleeps_after_one_lap(tocsin, NOW)
    tocsin.restore_record(table_id, record["id"], now=NOW + minutes(1))
    assert tocsin.tick(now=NOW + minutes(2))["tables_scanned"] == 1  # restored: examined
    assert tocsin.tick(now=NOW + minutes(3))["tables_scanned"] == 0  # still filtered out
    # a `when` edit keeps the schedule (no re-anchoring) but may make rows due
    tocsin.set_triggers(table_id, [dict(saved, when=[])], now=NOW + minutes(4))
    assert tocsin.tick(now=NOW + minutes(5))["runs_created"] == 1
