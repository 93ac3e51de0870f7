"""The schedule preview: the §7 document, its invariants, and that it never writes (SPEC §7)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

from engine_support import (
    NOW,
    clock_trigger,
    date_trigger,
    finish_all,
    interval,
    make_table,
    runs_of,
    write_raw_cells,
    write_raw_triggers,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tocsin.service import Tocsin
from tocsin.store import records as store_records
from tocsin.store import state as store_state

AT_FIVE = datetime(2026, 8, 27, 5, 0, tzinfo=UTC)


def _expected(table_id: str, dated_id: str, hourly_id: str) -> dict[str, Any]:
    """The SPEC §7 example document, for this table's ids."""
    return {
        "table_id": table_id,
        "evaluated_at": "2026-08-27T05:02:13",
        "live_records": 2,
        "record_limit": 1000,
        "triggers": [
            {
                "kind": "date_column_reached",
                "trigger_id": dated_id,
                "config_status": "valid",
                "records_scanned": 2,
                "already_fired": 1,
                "missing_schedule_value": 0,
                "invalid_schedule_value": 0,
                "scheduled_for_future": 1,
                "when_filter_mismatch": 0,
                "due_now": 0,
                "unscanned": 0,
                "truncated": False,
                "warnings": [],
            },
            {
                "kind": "interval",
                "trigger_id": hourly_id,
                "config_status": "valid",
                "last_consumed_window_at": "2026-08-27T05:00:00",
                "due_at": None,
                "due_now": False,
                "active_run": False,
                "warnings": ["when_ignored_for_recordless_schedule"],
            },
            {
                "kind": "invalid",
                "trigger_id": "trg_888888888888",
                "stored_schedule_type": "monthly",
                "config_status": "invalid",
                "error_codes": ["unsupported_schedule_type"],
                "warnings": [],
            },
        ],
    }


def test_the_section_7_document(tocsin: Tocsin) -> None:
    table_id = make_table(tocsin, now=AT_FIVE)
    tocsin.insert_records(
        table_id,
        [{"Due": "2026-08-27T04:00", "Status": "Open"}, {"Due": "2026-09-01T09:00"}],
        now=AT_FIVE,
    )
    when = [{"column": "Status", "op": "neq", "value": "Done"}]
    dated, hourly = tocsin.set_triggers(
        table_id, [date_trigger(when=when), interval(3600, when=when)], now=AT_FIVE
    )
    tocsin.tick(now=AT_FIVE)
    finish_all(tocsin, table_id, now=AT_FIVE)
    monthly = clock_trigger({"type": "monthly"}, id="trg_888888888888")
    write_raw_triggers(tocsin, table_id, [dated, hourly, monthly], now=AT_FIVE)
    assert tocsin.preview(table_id, now=NOW) == _expected(table_id, dated["id"], hourly["id"])


def test_clock_arms_for_daily_and_cron(tocsin: Tocsin) -> None:
    table_id = make_table(tocsin)
    tocsin.set_triggers(
        table_id,
        [
            clock_trigger({"type": "daily", "at": "01:30"}),
            clock_trigger({"type": "cron", "expression": "*/15 * * * *"}),
        ],
        now=NOW,
    )
    daily_arm, cron_arm = tocsin.preview(table_id, now=NOW)["triggers"]
    assert daily_arm["kind"] == "daily" and daily_arm["due_at"] == "2026-08-27T01:30:00"
    assert daily_arm["due_now"] is True and daily_arm["last_consumed_window_at"] is None
    assert cron_arm["kind"] == "cron" and cron_arm["due_now"] is False
    assert cron_arm["due_at"] is None and cron_arm["warnings"] == []
    later = tocsin.preview(table_id, now=NOW + timedelta(minutes=13))["triggers"][1]
    assert later["due_at"] == "2026-08-27T05:15:00" and later["due_now"] is True


def _snapshot(t: Tocsin, table_id: str) -> Any:
    with t.store.read() as tx:
        table = store_records.get_table(tx, table_id=table_id)
        states = store_state.get_states(tx, table_id=table_id)
    return table, states, runs_of(t, table_id)


def test_preview_never_writes_nor_leaks_ids_or_cells(tocsin: Tocsin) -> None:
    table_id = make_table(tocsin)
    records = [
        tocsin.insert_record(table_id, {"Due": due, "Status": "Secret-Status"}, now=NOW)
        for due in ("2026-08-27T01:00", "2026-08-27T02:00", "2027-01-01T00:00")
    ]
    tocsin.set_triggers(table_id, [date_trigger(), interval()], now=NOW)
    before = _snapshot(tocsin, table_id)
    for _ in range(3):
        document = tocsin.preview(table_id, now=NOW, record_limit=2)
    assert _snapshot(tocsin, table_id) == before
    text = json.dumps(document)
    for record in records:
        assert record["id"] not in text
    assert "Secret-Status" not in text and "2026-08-27T01:00" not in text
    # the tick then does what the preview said: the page's due rows, and the interval window
    date_arm, clock_arm = document["triggers"]
    expected = date_arm["due_now"] + int(clock_arm["due_now"])
    assert tocsin.tick(now=NOW, record_limit=2)["runs_created"] == expected


CELLS = st.one_of(
    st.none(),
    st.sampled_from(["", "garbage", "2026-02-30", "9999-12-31T23:59", "0001-01-01T00:00"]),
    st.datetimes(min_value=datetime(2026, 8, 1), max_value=datetime(2026, 9, 30)).map(
        lambda d: d.strftime("%Y-%m-%dT%H:%M")
    ),
)
ROWS = st.lists(st.tuples(CELLS, st.sampled_from(["Open", "Done"])), max_size=12)


@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    rows=ROWS,
    offset=st.integers(-43200, 43200),
    limit=st.integers(1, 6),
    ticks=st.integers(0, 3),
)
def test_date_arm_invariants(
    tocsin: Tocsin, rows: list[tuple[Any, str]], offset: int, limit: int, ticks: int
) -> None:
    table_id = make_table(tocsin)
    ids = [tocsin.insert_record(table_id, {"Status": s}, now=NOW)["id"] for _, s in rows]
    for record_id, (cell, status) in zip(ids, rows, strict=True):
        write_raw_cells(tocsin, table_id, record_id, {"Due": cell, "Status": status}, now=NOW)
    when = [{"column": "Status", "op": "eq", "value": "Open"}]
    tocsin.set_triggers(table_id, [date_trigger(offset=offset, when=when)], now=NOW)
    for _ in range(ticks):
        tocsin.tick(now=NOW, record_limit=limit)
    document = tocsin.preview(table_id, now=NOW, record_limit=limit)
    [arm] = document["triggers"]
    six = (
        "already_fired",
        "missing_schedule_value",
        "invalid_schedule_value",
        "scheduled_for_future",
        "when_filter_mismatch",
        "due_now",
    )
    assert arm["records_scanned"] == sum(arm[name] for name in six)
    assert document["live_records"] == arm["records_scanned"] + arm["unscanned"] == len(rows)
    assert arm["truncated"] == (arm["unscanned"] > 0)
    assert arm["records_scanned"] <= limit
