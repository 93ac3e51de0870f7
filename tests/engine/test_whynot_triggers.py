"""Why-not for table triggers on SQLite and PostgreSQL: next fires, run-now, the dry run."""

from __future__ import annotations

from datetime import timedelta

import pytest
from engine_support import (
    NOW,
    clock_trigger,
    date_trigger,
    finish_all,
    hours,
    interval,
    make_table,
    minutes,
    runs_of,
    write_raw_triggers,
)

from tocsin.errors import NotFound, ValidationError
from tocsin.service import Tocsin


def test_next_fires_of_a_daily_trigger_in_utc_and_its_zone_across_dst(tocsin: Tocsin) -> None:
    table_id = make_table(tocsin)
    daily = clock_trigger({"type": "daily", "at": "09:00", "timezone": "America/New_York"})
    now = NOW.replace(month=10, day=30, hour=20)  # New York leaves DST on Sunday 1 Nov 2026
    [saved] = tocsin.set_triggers(table_id, [daily], now=now)
    tocsin.tick(now=now)  # today's 09:00 slot (due at save) fires
    out = tocsin.next_fires(table_id, saved["id"], n=3, now=now + minutes(1))
    assert [(i["at"], i["local"], i["status"]) for i in out["items"]] == [
        ("2026-10-31T13:00:00", "2026-10-31T09:00:00-04:00", "scheduled"),
        ("2026-11-01T14:00:00", "2026-11-01T09:00:00-05:00", "scheduled"),
        ("2026-11-02T14:00:00", "2026-11-02T09:00:00-05:00", "scheduled"),
    ]


def test_next_fires_shows_the_due_window_held_by_the_fence(tocsin: Tocsin) -> None:
    table_id = make_table(tocsin)
    [saved] = tocsin.set_triggers(table_id, [interval(3600)], now=NOW)
    out = tocsin.next_fires(table_id, saved["id"], n=2, now=NOW)
    assert [(i["at"], i["status"]) for i in out["items"]] == [
        ("2026-08-27T05:02:13", "due"),
        ("2026-08-27T06:02:13", "scheduled"),
    ]
    tocsin.tick(now=NOW)  # pending run: the fence holds the next window
    out = tocsin.next_fires(table_id, saved["id"], n=2, now=NOW + hours(1) + minutes(1))
    assert [(i["at"], i["status"], i["zone"]) for i in out["items"]] == [
        ("2026-08-27T06:02:13", "waiting_for_active_run", "UTC"),
        ("2026-08-27T07:02:13", "scheduled", "UTC"),
    ]


def test_next_fires_refuses_date_and_invalid_triggers_and_unknown_ids(tocsin: Tocsin) -> None:
    table_id = make_table(tocsin)
    date, clock = tocsin.set_triggers(table_id, [date_trigger(), interval(60)], now=NOW)
    with pytest.raises(ValidationError):
        tocsin.next_fires(table_id, date["id"], now=NOW)
    with pytest.raises(ValidationError):
        tocsin.next_fires(table_id, clock["id"], n=0, now=NOW)
    with pytest.raises(NotFound):
        tocsin.next_fires(table_id, "trg_missing", now=NOW)
    broken = {**clock, "schedule": {"type": "interval", "every_seconds": 0}}
    write_raw_triggers(tocsin, table_id, [date, broken], now=NOW)
    with pytest.raises(ValidationError):
        tocsin.next_fires(table_id, clock["id"], now=NOW)


def test_run_now_neither_blocks_nor_consumes_the_next_scheduled_occurrence(
    tocsin: Tocsin,
) -> None:
    table_id = make_table(tocsin)
    [saved] = tocsin.set_triggers(table_id, [interval(3600)], now=NOW)
    tocsin.tick(now=NOW)
    finish_all(tocsin, table_id, now=NOW)
    manual = tocsin.run_trigger(table_id, saved["id"], now=NOW + minutes(59))
    assert manual["source"] == "manual" and manual["status"] == "pending"
    assert manual["identity"].startswith("manual:")
    # the manual run is still pending at the next window: the window fires all the same
    assert tocsin.tick(now=NOW + hours(1))["runs_created"] == 1
    runs = runs_of(tocsin, table_id)
    assert [r["source"] for r in runs] == ["schedule", "manual", "schedule"]
    assert runs[-1]["scheduled_for"] == NOW + hours(1)
    again = tocsin.run_trigger(table_id, saved["id"], now=NOW + hours(1))
    assert again["id"] != manual["id"]  # every run-now is its own occurrence
    with pytest.raises(NotFound):
        tocsin.run_trigger(table_id, "trg_missing", now=NOW)


def test_due_at_a_future_instant_says_what_fires_and_why_not(tocsin: Tocsin) -> None:
    table_id = make_table(tocsin)
    hourly, daily = tocsin.set_triggers(
        table_id,
        [interval(3600), clock_trigger({"type": "daily", "at": "23:00"})],
        now=NOW,
    )
    trashed = make_table(tocsin)
    [gone] = tocsin.set_triggers(trashed, [interval(60)], now=NOW)
    tocsin.trash_table(trashed, now=NOW)
    tocsin.tick(now=NOW)
    finish_all(tocsin, table_id, now=NOW)
    at = NOW + hours(1)
    due = tocsin.due(at=at)
    mine = [e for e in due["fires"] if e.get("table_id") == table_id]
    assert [(e["trigger_id"], e["runs"], e["scheduled_for"]) for e in mine] == [
        (hourly["id"], 1, ["2026-08-27T06:02:13"])
    ]
    why = {e["trigger_id"]: e for e in due["not_firing"] if e["kind"] == "trigger"}
    assert why[daily["id"]]["reason"] == "not_due"
    assert why[daily["id"]]["next_at"] == "2026-08-27T23:00:00"
    assert why[gone["id"]]["reason"] == "table_trashed"
    assert tocsin.list_runs(table_id, now=at)["total"] == 1  # read-only: nothing written
    assert tocsin.tick(now=at)["runs_created"] == 1


def test_due_explains_a_fence_and_a_broken_config(tocsin: Tocsin) -> None:
    table_id = make_table(tocsin)
    [saved] = tocsin.set_triggers(table_id, [interval(3600)], now=NOW)
    tocsin.tick(now=NOW)
    due = tocsin.due(at=NOW + hours(2))
    [entry] = [e for e in due["not_firing"] if e.get("trigger_id") == saved["id"]]
    assert entry["reason"] == "active_run" and entry["due_at"] == "2026-08-27T07:02:13"
    broken = {**saved, "schedule": {"type": "interval", "every_seconds": 0}}
    write_raw_triggers(tocsin, table_id, [broken], now=NOW)
    due = tocsin.due(at=NOW + timedelta(hours=2))
    [entry] = [e for e in due["not_firing"] if e.get("trigger_id") == saved["id"]]
    assert entry["reason"] == "invalid_config" and entry["error_codes"]
