"""SPEC §5.4: a clock run's enqueue dedup key, on the run the facade answers: the local date
``%Y%m%d`` of a zoned daily (the UTC date of a UTC daily), the UTC minute ``%Y%m%dT%H%M`` of an
interval or a cron run (whatever the cron's zone); none for a date-column or a manual run."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from engine_support import NOW, clock_trigger, date_trigger, interval, make_table, runs_of

from tocsin.service import Tocsin


def test_clock_runs_carry_their_dedup_key(tocsin: Tocsin) -> None:
    table_id = make_table(tocsin)
    triggers = [
        clock_trigger({"type": "daily", "at": "07:30", "timezone": "Asia/Taipei"}, name="tpe"),
        clock_trigger({"type": "daily", "at": "23:00"}, name="utc"),
        clock_trigger(
            {"type": "cron", "expression": "15 1 * * *", "timezone": "Asia/Taipei"}, name="cron"
        ),
        interval(3600, name="hourly"),
        date_trigger(name="due"),
    ]
    saved = tocsin.set_triggers(table_id, triggers, now=NOW)
    ids = {t["name"]: t["id"] for t in saved}
    tocsin.insert_record(table_id, {"Due": "2026-08-27T06:00:00"}, now=NOW)
    later = NOW + timedelta(days=1)  # 2026-08-28T05:02:13Z
    tocsin.tick(now=later)
    runs = {r["trigger_id"]: r for r in runs_of(tocsin, table_id)}
    expected = {
        # 07:30 in Taipei on 08-28 is 2026-08-27T23:30Z: the local date, not the UTC one
        "tpe": (datetime(2026, 8, 27, 23, 30, tzinfo=UTC), "20260828"),
        "utc": (datetime(2026, 8, 27, 23, 0, tzinfo=UTC), "20260827"),
        # 01:15 in Taipei on 08-28 is 2026-08-27T17:15Z: the UTC minute
        "cron": (datetime(2026, 8, 27, 17, 15, tzinfo=UTC), "20260827T1715"),
        "hourly": (later.replace(second=13), "20260828T0502"),
    }
    for name, (scheduled_for, key) in expected.items():
        run = runs[ids[name]]
        assert (run["scheduled_for"], run["dedup_key"]) == (scheduled_for, key), name
        assert tocsin.get_run(table_id, run["id"])["dedup_key"] == key
    assert runs[ids["due"]]["dedup_key"] is None
    manual = tocsin.run_trigger(table_id, ids["tpe"], now=later)
    assert manual["source"] == "manual" and manual["dedup_key"] is None
