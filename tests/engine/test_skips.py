"""The skip ledger of table triggers, on SQLite and PostgreSQL: one test per reason
the tick (or a restore) records, with the range compaction shown."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest
from engine_support import (
    NOW,
    clock_trigger,
    finish_all,
    hours,
    interval,
    make_table,
    minutes,
    runs_of,
    write_raw_triggers,
)

from tocsin.errors import NotFound
from tocsin.service import Tocsin
from tocsin.store import skips as store_skips

WEEK = timedelta(days=7)


def _skips(t: Tocsin, table_id: str, trigger_id: str) -> list[dict[str, object]]:
    return list(t.skips(table_id, trigger_id)["items"])


def test_a_week_of_every_minute_downtime_is_one_coalesced_row(tocsin: Tocsin) -> None:
    table_id = make_table(tocsin)
    [saved] = tocsin.set_triggers(table_id, [interval(60)], now=NOW)
    tocsin.tick(now=NOW)
    finish_all(tocsin, table_id, now=NOW)
    assert tocsin.tick(now=NOW + WEEK)["runs_created"] == 1
    assert runs_of(tocsin, table_id)[-1]["scheduled_for"] == NOW + WEEK
    page = tocsin.skips(table_id, saved["id"])
    assert page["total"] == 1
    assert page["items"] == [
        {
            "reason": "coalesced",
            "first_instant": "2026-08-27T05:03:13",
            "last_instant": "2026-09-03T05:01:13",
            "count": 10_079,
            "count_is_lower_bound": False,
        }
    ]
    tocsin.tick(now=NOW + WEEK)  # nothing new: nothing recorded
    assert tocsin.skips(table_id, saved["id"])["total"] == 1


def test_an_on_time_trigger_records_nothing(tocsin: Tocsin) -> None:
    table_id = make_table(tocsin)
    [saved] = tocsin.set_triggers(table_id, [interval(3600)], now=NOW)
    for h in range(4):
        tocsin.tick(now=NOW + hours(h) + minutes(1))
        finish_all(tocsin, table_id, now=NOW + hours(h) + minutes(2))
    assert len(runs_of(tocsin, table_id)) == 4
    assert _skips(tocsin, table_id, saved["id"]) == []


def test_cron_downtime_counts_its_instants(tocsin: Tocsin) -> None:
    table_id = make_table(tocsin)
    cron = clock_trigger({"type": "cron", "expression": "0 9 * * *", "timezone": "UTC"})
    [saved] = tocsin.set_triggers(table_id, [cron], now=NOW)
    first = NOW.replace(hour=9, minute=0, second=0)
    tocsin.tick(now=first)
    finish_all(tocsin, table_id, now=first)
    tocsin.tick(now=first + timedelta(days=30))
    [row] = _skips(tocsin, table_id, saved["id"])
    assert row["reason"] == "coalesced" and row["count"] == 29
    assert row["first_instant"] == "2026-08-28T09:00:00"
    assert row["last_instant"] == "2026-09-25T09:00:00"


def test_windows_replaced_behind_an_active_run_merge_into_one_active_run_row(
    tocsin: Tocsin,
) -> None:
    table_id = make_table(tocsin)
    [saved] = tocsin.set_triggers(table_id, [interval(3600)], now=NOW)
    tocsin.tick(now=NOW)  # the run stays pending: the fence holds
    for h in range(1, 6):
        assert tocsin.tick(now=NOW + hours(h))["runs_created"] == 0
        tocsin.tick(now=NOW + hours(h) + minutes(1))  # a tick that sees no new window
    # windows 1h..4h were replaced while the fence held (5h is still due): one merged row
    assert _skips(tocsin, table_id, saved["id"]) == [
        {
            "reason": "active_run",
            "first_instant": "2026-08-27T06:02:13",
            "last_instant": "2026-08-27T09:02:13",
            "count": 4,
            "count_is_lower_bound": False,
        }
    ]
    finish_all(tocsin, table_id, now=NOW + hours(5) + minutes(2))
    assert tocsin.tick(now=NOW + hours(5) + minutes(3))["runs_created"] == 1
    assert runs_of(tocsin, table_id)[-1]["scheduled_for"] == NOW + hours(5)
    assert len(_skips(tocsin, table_id, saved["id"])) == 1  # the fired window is no skip


def test_a_spring_forward_gap_is_a_dst_gap_skip(tocsin: Tocsin) -> None:
    table_id = make_table(tocsin)
    cron = clock_trigger({"type": "cron", "expression": "30 2 * * *", "timezone": "Europe/Paris"})
    start = NOW.replace(year=2027, month=3, day=26, hour=12)
    [saved] = tocsin.set_triggers(table_id, [cron], now=start)
    day = timedelta(days=1)
    for n in range(1, 4):  # 27th 02:30 fires, the 28th has no 02:30, the 29th fires
        tocsin.tick(now=start + n * day)
        finish_all(tocsin, table_id, now=start + n * day)
    assert [r["scheduled_for"].day for r in runs_of(tocsin, table_id)] == [27, 29]
    [row] = _skips(tocsin, table_id, saved["id"])
    assert row["reason"] == "dst_gap" and row["count"] == 1
    assert row["first_instant"] == row["last_instant"] == "2027-03-28T01:00:00"  # the jump


def test_windows_owed_while_trashed_are_table_trashed(tocsin: Tocsin) -> None:
    table_id = make_table(tocsin)
    [saved] = tocsin.set_triggers(table_id, [interval(60)], now=NOW)
    tocsin.tick(now=NOW)
    finish_all(tocsin, table_id, now=NOW)
    tocsin.trash_table(table_id, now=NOW + minutes(1))
    assert tocsin.tick(now=NOW + hours(1))["runs_created"] == 0
    tocsin.restore_table(table_id, now=NOW + hours(2))
    rows = _skips(tocsin, table_id, saved["id"])
    assert [(r["reason"], r["count"]) for r in rows] == [("table_trashed", 119)]
    assert tocsin.tick(now=NOW + hours(2))["runs_created"] == 1  # the latest window still fires
    assert runs_of(tocsin, table_id)[-1]["scheduled_for"] == NOW + hours(2)
    assert [r["reason"] for r in _skips(tocsin, table_id, saved["id"])] == ["table_trashed"]


def test_a_due_window_of_a_broken_config_is_invalid_config(tocsin: Tocsin) -> None:
    table_id = make_table(tocsin)
    [saved] = tocsin.set_triggers(table_id, [interval(60)], now=NOW)
    tocsin.tick(now=NOW)
    finish_all(tocsin, table_id, now=NOW)
    broken = {**saved, "schedule": {"type": "interval", "every_seconds": -1}}
    write_raw_triggers(tocsin, table_id, [broken], now=NOW)
    for m in (1, 2, 3):
        assert tocsin.tick(now=NOW + minutes(m))["runs_created"] == 0
    [row] = _skips(tocsin, table_id, saved["id"])
    assert row["reason"] == "invalid_config" and row["count_is_lower_bound"] is True
    assert row["first_instant"] == "2026-08-27T05:03:13"


def test_skips_of_an_unknown_trigger_or_table_are_404(tocsin: Tocsin) -> None:
    table_id = make_table(tocsin)
    tocsin.set_triggers(table_id, [interval(60)], now=NOW)
    with pytest.raises(NotFound):
        tocsin.skips(table_id, "trg_nope")
    with pytest.raises(NotFound):
        tocsin.skips("00000000-0000-4000-8000-000000000000", "trg_nope")


def test_the_store_merges_adjacent_ranges_and_never_counts_twice(tocsin: Tocsin) -> None:
    from tocsin.core.schedules.skips import SkipRange

    def rng(first: int, last: int, after: int | None) -> SkipRange:
        at = None if after is None else NOW + minutes(after)
        m = NOW + minutes(first)
        return SkipRange("trigger", "t1", "coalesced", m, NOW + minutes(last), last - first + 1, at)

    with tocsin.store.begin() as tx:
        store_skips.record_skips(tx, ranges=[rng(1, 3, 0)], now=NOW)
        store_skips.record_skips(tx, ranges=[rng(4, 5, 3), rng(6, 9, 5)], now=NOW)  # adjacent
        store_skips.record_skips(tx, ranges=[rng(12, 12, 11)], now=NOW)  # a gap: a new row
        store_skips.record_skips(tx, ranges=[rng(12, 12, 11)], now=NOW)  # seen again
    with tocsin.store.read() as tx:
        rows, total = store_skips.list_skips(tx, target_kind="trigger", target_id="t1")
    assert total == 2
    assert [(r.first, r.last, r.count) for r in rows] == [
        (NOW + minutes(12), NOW + minutes(12), 1),
        (NOW + minutes(1), NOW + minutes(9), 9),
    ]
    # another table's trigger with the same id: its own ranges, never merged into these
    theirs = SkipRange("trigger", "t1", "coalesced", NOW + minutes(10), NOW + minutes(11), 2)
    with tocsin.store.begin() as tx:
        store_skips.record_skips(
            tx, ranges=[replace(theirs, after=NOW + minutes(9), table_id="tab-b")], now=NOW
        )
    with tocsin.store.read() as tx:
        assert store_skips.list_skips(tx, target_kind="trigger", target_id="t1")[1] == 2
        rows, total = store_skips.list_skips(
            tx, target_kind="trigger", table_id="tab-b", target_id="t1"
        )
    assert total == 1 and (rows[0].first, rows[0].count) == (NOW + minutes(10), 2)


def test_a_paused_table_trigger_records_its_windows_at_resume(tocsin: Tocsin) -> None:
    """The windows a pause kept from firing are one ``paused`` range."""
    table_id = make_table(tocsin)
    [saved] = tocsin.set_triggers(table_id, [interval(60)], now=NOW)
    assert tocsin.tick(now=NOW)["runs_created"] == 1
    finish_all(tocsin, table_id, now=NOW)
    tocsin.pause_trigger(table_id, saved["id"], now=NOW + minutes(1))
    assert tocsin.tick(now=NOW + minutes(10))["runs_created"] == 0
    assert _skips(tocsin, table_id, saved["id"]) == []  # recorded at resume
    tocsin.resume_trigger(table_id, saved["id"], now=NOW + minutes(20))
    tocsin.resume_trigger(table_id, saved["id"], now=NOW + minutes(21))  # idempotent
    assert _skips(tocsin, table_id, saved["id"]) == [
        {
            "reason": "paused",
            "first_instant": "2026-08-27T05:03:13",
            "last_instant": "2026-08-27T05:22:13",
            "count": 20,
            "count_is_lower_bound": False,
        }
    ]
    assert tocsin.tick(now=NOW + minutes(21))["runs_created"] == 1  # the next window fires
