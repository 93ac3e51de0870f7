"""Clock triggers in the tick: first window, coalescing, one active run (SPEC §4.2–§4.4, §5.3)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from engine_support import (
    NOW,
    clock_trigger,
    finish,
    finish_all,
    hours,
    interval,
    make_table,
    minutes,
    runs_of,
)

from tocsin.service import Tocsin


def test_interval_fires_at_the_next_tick_then_every_period(tocsin: Tocsin) -> None:
    table_id = make_table(tocsin)
    [saved] = tocsin.set_triggers(table_id, [interval(3600)], now=NOW)
    assert tocsin.tick(now=NOW + minutes(1))["runs_created"] == 1
    [run] = runs_of(tocsin, table_id)
    assert run["record_id"] is None and "payload" not in run  # a page leaves it out (§8)
    assert tocsin.get_run(table_id, run["id"])["payload"] == {}
    assert run["source"] == "schedule" and run["status"] == "pending"
    assert run["trigger_id"] == saved["id"] and run["scheduled_for"] == NOW
    assert run["definition"] == saved
    finish_all(tocsin, table_id, now=NOW + minutes(2))
    assert tocsin.tick(now=NOW + minutes(59))["runs_created"] == 0
    assert tocsin.tick(now=NOW + hours(1))["runs_created"] == 1


def test_downtime_coalesces_to_one_run_for_the_latest_window(tocsin: Tocsin) -> None:
    table_id = make_table(tocsin)
    tocsin.set_triggers(table_id, [interval(3600)], now=NOW)
    tocsin.tick(now=NOW)
    finish_all(tocsin, table_id, now=NOW)
    later = NOW + hours(5) + minutes(30)  # five hourly windows missed
    assert tocsin.tick(now=later)["runs_created"] == 1
    assert tocsin.tick(now=later)["runs_created"] == 0
    runs = runs_of(tocsin, table_id)
    assert len(runs) == 2 and runs[-1]["scheduled_for"] == NOW + hours(5)


def test_one_active_run_blocks_later_windows(tocsin: Tocsin) -> None:
    table_id = make_table(tocsin)
    tocsin.set_triggers(table_id, [interval(3600)], now=NOW)
    tocsin.tick(now=NOW)
    for h in (1, 2, 3):
        assert tocsin.tick(now=NOW + hours(h))["runs_created"] == 0  # still pending
    preview = tocsin.preview(table_id, now=NOW + hours(3))["triggers"][0]
    assert preview["active_run"] is True and preview["due_now"] is False
    assert preview["due_at"] == "2026-08-27T08:02:13"
    finish_all(tocsin, table_id, now=NOW + hours(3))
    assert tocsin.tick(now=NOW + hours(3) + minutes(1))["runs_created"] == 1
    assert runs_of(tocsin, table_id)[-1]["scheduled_for"] == NOW + hours(3)


def test_a_failed_run_consumes_its_window(tocsin: Tocsin) -> None:
    table_id = make_table(tocsin)
    tocsin.set_triggers(table_id, [interval(3600)], now=NOW)
    tocsin.tick(now=NOW)
    [run] = runs_of(tocsin, table_id)
    finish(tocsin, run["id"], "failed", now=NOW + minutes(1))
    assert tocsin.tick(now=NOW + minutes(2))["runs_created"] == 0
    arm = tocsin.preview(table_id, now=NOW + minutes(2))["triggers"][0]
    assert arm["last_consumed_window_at"] == "2026-08-27T05:02:13"
    assert arm["due_at"] is None and arm["due_now"] is False
    assert tocsin.tick(now=NOW + hours(1))["runs_created"] == 1


def test_deleting_runs_never_re_arms(tocsin: Tocsin) -> None:
    """The state row, not the run log, is the memory (SPEC §5.1)."""
    table_id = make_table(tocsin)
    tocsin.set_triggers(table_id, [interval(3600)], now=NOW)
    tocsin.tick(now=NOW)
    finish_all(tocsin, table_id, now=NOW)
    assert tocsin.tick(now=NOW + minutes(30))["runs_created"] == 0


def test_daily_saved_after_its_slot_fires_once_then_next_day(tocsin: Tocsin) -> None:
    # 10:00 in Taipei (UTC+8) = 02:00 UTC; today's 01:30 slot (17:30 UTC yesterday) has passed
    saved_at = datetime(2026, 8, 27, 2, 0, tzinfo=UTC)
    table_id = make_table(tocsin, now=saved_at)
    daily = clock_trigger({"type": "daily", "at": "01:30", "timezone": "Asia/Taipei"})
    tocsin.set_triggers(table_id, [daily], now=saved_at)
    assert tocsin.tick(now=saved_at + minutes(1))["runs_created"] == 1
    [first] = runs_of(tocsin, table_id)
    assert first["scheduled_for"] == datetime(2026, 8, 26, 17, 30, tzinfo=UTC)
    finish_all(tocsin, table_id, now=saved_at + minutes(2))
    assert tocsin.tick(now=datetime(2026, 8, 27, 17, 29, tzinfo=UTC))["runs_created"] == 0
    assert tocsin.tick(now=datetime(2026, 8, 27, 17, 30, tzinfo=UTC))["runs_created"] == 1
    assert runs_of(tocsin, table_id)[-1]["scheduled_for"] == datetime(
        2026, 8, 27, 17, 30, tzinfo=UTC
    )


def test_cron_never_backfills_before_its_anchor(tocsin: Tocsin) -> None:
    saved_at = datetime(2026, 8, 27, 10, 0, tzinfo=UTC)
    table_id = make_table(tocsin, now=saved_at)
    tocsin.set_triggers(
        table_id, [clock_trigger({"type": "cron", "expression": "0 9 * * *"})], now=saved_at
    )
    assert tocsin.tick(now=saved_at)["runs_created"] == 0
    assert tocsin.tick(now=datetime(2026, 8, 28, 8, 59, tzinfo=UTC))["runs_created"] == 0
    assert tocsin.tick(now=datetime(2026, 8, 28, 9, 0, tzinfo=UTC))["runs_created"] == 1
    [run] = runs_of(tocsin, table_id)
    assert run["scheduled_for"] == datetime(2026, 8, 28, 9, 0, tzinfo=UTC)


def test_cron_in_a_zone_fires_on_local_time(tocsin: Tocsin) -> None:
    saved_at = datetime(2026, 8, 27, 2, 0, tzinfo=UTC)  # 10:00 Taipei
    table_id = make_table(tocsin, now=saved_at)
    cron = clock_trigger({"type": "cron", "expression": "0 9 * * *", "timezone": "Asia/Taipei"})
    tocsin.set_triggers(table_id, [cron], now=saved_at)
    assert tocsin.tick(now=datetime(2026, 8, 28, 0, 59, tzinfo=UTC))["runs_created"] == 0
    assert tocsin.tick(now=datetime(2026, 8, 28, 1, 0, tzinfo=UTC))["runs_created"] == 1


def test_trashed_table_is_silent(tocsin: Tocsin) -> None:
    table_id = make_table(tocsin)
    tocsin.set_triggers(table_id, [interval(3600)], now=NOW)
    tocsin.trash_table(table_id, now=NOW)
    assert tocsin.tick(now=NOW + hours(2))["runs_created"] == 0
    tocsin.restore_table(table_id, now=NOW + hours(2))
    assert tocsin.tick(now=NOW + hours(2))["runs_created"] == 1  # latest window only


def _fires_over(
    t: Tocsin, schedule: dict[str, Any], start: datetime, end: datetime
) -> list[datetime]:
    """Tick every 10 minutes from ``start`` to ``end`` (runs end ``done`` at once): the windows
    that got a run."""
    table_id = make_table(t, now=start)
    t.set_triggers(table_id, [clock_trigger(schedule)], now=start)
    at = start
    while at <= end:
        t.tick(now=at)
        finish_all(t, table_id, now=at)
        at += minutes(10)
    return [r["scheduled_for"] for r in runs_of(t, table_id)]


NY = "America/New_York"  # 2026-03-08 02:00 EST → 03:00 EDT; 2026-11-01 02:00 EDT → 01:00 EST


def test_daily_across_dst_is_neither_skipped_nor_doubled(tocsin: Tocsin) -> None:
    """fold=0: a nonexistent or repeated wall time takes the pre-transition offset (§4.3)."""
    spring = _fires_over(
        tocsin,
        {"type": "daily", "at": "02:30", "timezone": NY},
        datetime(2026, 3, 7, 12, 0, tzinfo=UTC),
        datetime(2026, 3, 9, 12, 0, tzinfo=UTC),
    )
    # 03-07 02:30 EST is before the save (12:00 UTC = 07:00 EST), so it is today's slot at once
    assert spring == [
        datetime(2026, 3, 7, 7, 30, tzinfo=UTC),
        datetime(2026, 3, 8, 7, 30, tzinfo=UTC),  # 02:30 does not exist: EST offset (03:30 EDT)
        datetime(2026, 3, 9, 6, 30, tzinfo=UTC),
    ]
    fall = _fires_over(
        tocsin,
        {"type": "daily", "at": "01:30", "timezone": NY},
        datetime(2026, 10, 31, 12, 0, tzinfo=UTC),
        datetime(2026, 11, 2, 12, 0, tzinfo=UTC),
    )
    assert fall == [
        datetime(2026, 10, 31, 5, 30, tzinfo=UTC),
        datetime(2026, 11, 1, 5, 30, tzinfo=UTC),  # 01:30 happens twice: the first (EDT) only
        datetime(2026, 11, 2, 6, 30, tzinfo=UTC),
    ]


def test_cron_across_dst_skips_the_gap_and_fires_a_repeated_minute_once(tocsin: Tocsin) -> None:
    """A nonexistent local minute never fires; a repeated one fires on its first occurrence."""
    spring = _fires_over(
        tocsin,
        {"type": "cron", "expression": "30 2 * * *", "timezone": NY},
        datetime(2026, 3, 7, 12, 0, tzinfo=UTC),
        datetime(2026, 3, 9, 12, 0, tzinfo=UTC),
    )
    assert spring == [datetime(2026, 3, 9, 6, 30, tzinfo=UTC)]
    fall = _fires_over(
        tocsin,
        {"type": "cron", "expression": "30 1 * * *", "timezone": NY},
        datetime(2026, 10, 31, 12, 0, tzinfo=UTC),
        datetime(2026, 11, 2, 12, 0, tzinfo=UTC),
    )
    assert fall == [
        datetime(2026, 11, 1, 5, 30, tzinfo=UTC),
        datetime(2026, 11, 2, 6, 30, tzinfo=UTC),
    ]
