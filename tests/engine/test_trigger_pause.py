"""Pause and resume of table schedule triggers through the facade (engine.pause).

Pause → nothing fires at the next tick and the table is not even claimed → a triggers config
save keeps it paused → resume from ``now`` fires nothing backlogged → the next window fires. The
preview says why nothing fires; tick and preview agree throughout.
"""

from __future__ import annotations

from datetime import timedelta

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
)

from tocsin import messages
from tocsin.errors import Conflict, NotFound
from tocsin.service import Tocsin

WEEK = timedelta(days=7)


def _arm(t: Tocsin, table_id: str, now: object) -> dict[str, object]:
    [arm] = t.preview(table_id, now=now)["triggers"]  # type: ignore[arg-type]
    return arm


def test_a_paused_clock_trigger_fires_nothing_and_resumes_without_backlog(tocsin: Tocsin) -> None:
    table_id = make_table(tocsin)
    [saved] = tocsin.set_triggers(table_id, [interval(3600)], now=NOW)
    tid = saved["id"]
    assert tocsin.tick(now=NOW)["runs_created"] == 1
    finish_all(tocsin, table_id, now=NOW + minutes(1))

    view = tocsin.pause_trigger(table_id, tid, now=NOW + minutes(10))
    assert view["paused"] is True and view["paused_at"] == "2026-08-27T05:12:13"
    again = tocsin.pause_trigger(table_id, tid, now=NOW + minutes(20))  # idempotent
    assert again["paused_at"] == view["paused_at"]

    tick = tocsin.tick(now=NOW + hours(1))
    assert tick["runs_created"] == 0 and tick["tables_scanned"] == 0  # not even claimed
    arm = _arm(tocsin, table_id, NOW + hours(1))
    assert arm["paused"] is True and arm["due_now"] is False and arm["due_at"] is None
    assert arm["warnings"] == ["trigger_paused"]

    # a config save (the same trigger, renamed) never unpauses
    tocsin.set_triggers(table_id, [{**saved, "name": "renamed"}], now=NOW + hours(2))
    assert _arm(tocsin, table_id, NOW + hours(2))["paused"] is True
    assert tocsin.tick(now=NOW + WEEK)["runs_created"] == 0

    resumed_at = NOW + WEEK + minutes(30)
    view = tocsin.resume_trigger(table_id, tid, now=resumed_at)
    assert view["paused"] is False and view["paused_at"] is None
    assert view["next_due_at"] == "2026-09-03T06:02:13"  # the next window after now
    assert tocsin.resume_trigger(table_id, tid, now=resumed_at)["paused"] is False
    arm = _arm(tocsin, table_id, resumed_at)
    assert "paused" not in arm and arm["due_now"] is False
    assert tocsin.tick(now=resumed_at)["runs_created"] == 0  # a week of pause: no backlog
    assert tocsin.tick(now=NOW + WEEK + minutes(59))["runs_created"] == 0
    assert _arm(tocsin, table_id, NOW + WEEK + hours(1))["due_now"] is True
    assert tocsin.tick(now=NOW + WEEK + hours(1))["runs_created"] == 1
    assert [r["scheduled_for"] for r in runs_of(tocsin, table_id)] == [NOW, NOW + WEEK + hours(1)]


def test_a_paused_trigger_does_not_keep_its_table_due_nor_silence_the_others(
    tocsin: Tocsin,
) -> None:
    table_id = make_table(tocsin)
    paused, hourly = tocsin.set_triggers(
        table_id, [interval(60, name="minutely"), interval(3600, name="hourly")], now=NOW
    )
    tocsin.pause_trigger(table_id, paused["id"], now=NOW)
    assert tocsin.tick(now=NOW)["runs_created"] == 1  # the hourly one
    finish_all(tocsin, table_id, now=NOW)
    for m in (1, 2, 30):  # the minutely trigger is paused: the table is not due until 06:02
        assert tocsin.tick(now=NOW + minutes(m))["tables_scanned"] == 0
    assert tocsin.tick(now=NOW + hours(1))["runs_created"] == 1
    assert {r["trigger_id"] for r in runs_of(tocsin, table_id)} == {hourly["id"]}


def test_a_paused_date_trigger_skips_what_came_due_during_the_pause(tocsin: Tocsin) -> None:
    table_id = make_table(tocsin)
    tocsin.insert_record(table_id, {"Due": "2026-08-27T01:00"}, now=NOW)
    [saved] = tocsin.set_triggers(table_id, [date_trigger()], now=NOW)
    assert tocsin.tick(now=NOW)["runs_created"] == 1
    tocsin.pause_trigger(table_id, saved["id"], now=NOW + minutes(1))
    during = tocsin.insert_record(table_id, {"Due": "2026-08-28T09:00"}, now=NOW + minutes(2))
    after = tocsin.insert_record(table_id, {"Due": "2026-09-10T09:00"}, now=NOW + minutes(2))
    assert tocsin.tick(now=NOW + timedelta(days=2))["runs_created"] == 0
    arm = _arm(tocsin, table_id, NOW + timedelta(days=2))  # the page after the cursor
    assert arm["paused"] is True and arm["paused_since"] == "2026-08-27T05:03:13"
    assert (arm["already_fired"], arm["scheduled_for_future"], arm["due_now"]) == (1, 1, 0)
    assert (arm["records_scanned"], arm["unscanned"], arm["warnings"]) == (2, 1, ["trigger_paused"])

    resumed_at = NOW + timedelta(days=3)
    tocsin.resume_trigger(table_id, saved["id"], now=resumed_at)
    arm = _arm(tocsin, table_id, resumed_at)
    assert "due_while_paused" not in arm and "paused" not in arm
    assert (arm["already_fired"], arm["due_now"], arm["records_scanned"]) == (1, 0, 2)
    assert tocsin.tick(now=resumed_at)["runs_created"] == 0
    assert tocsin.tick(now=NOW + timedelta(days=20))["runs_created"] == 1
    record_ids = [r["record_id"] for r in runs_of(tocsin, table_id)]
    assert after["id"] in record_ids and during["id"] not in record_ids
    # a second pause and resume keeps the first pause's occurrences unfired
    tocsin.pause_trigger(table_id, saved["id"], now=NOW + timedelta(days=21))
    tocsin.resume_trigger(table_id, saved["id"], now=NOW + timedelta(days=22))
    assert tocsin.tick(now=NOW + timedelta(days=22))["runs_created"] == 0


def test_record_writes_do_not_wake_a_paused_date_trigger(tocsin: Tocsin) -> None:
    table_id = make_table(tocsin)
    [saved] = tocsin.set_triggers(table_id, [date_trigger()], now=NOW)
    tocsin.pause_trigger(table_id, saved["id"], now=NOW)
    tocsin.insert_record(table_id, {"Due": "2026-08-27T01:00"}, now=NOW)
    assert tocsin.tick(now=NOW)["runs_created"] == 0
    assert tocsin.tick(now=NOW + minutes(1))["tables_scanned"] == 0  # not due any more


def test_retiring_the_trigger_id_ends_its_pause(tocsin: Tocsin) -> None:
    table_id = make_table(tocsin)
    [saved] = tocsin.set_triggers(table_id, [interval(3600)], now=NOW)
    tocsin.pause_trigger(table_id, saved["id"], now=NOW)
    tocsin.set_triggers(table_id, [], now=NOW)
    tocsin.set_triggers(table_id, [saved], now=NOW + minutes(1))  # revived by its id
    assert "paused" not in _arm(tocsin, table_id, NOW + minutes(1))
    assert tocsin.tick(now=NOW + minutes(1))["runs_created"] == 1


def test_unknown_ids_are_404_and_row_event_triggers_409(tocsin: Tocsin) -> None:
    table_id = make_table(tocsin)
    row_event = {"name": "on-create", "on": "created", "actions": notify()}
    [saved] = tocsin.set_triggers(table_id, [row_event], now=NOW)
    with pytest.raises(Conflict) as refused:
        tocsin.pause_trigger(table_id, saved["id"], now=NOW)
    assert refused.value.detail == messages.trigger_not_pausable(saved["id"], "created")
    with pytest.raises(NotFound) as missing:
        tocsin.resume_trigger(table_id, "trg_000000000099", now=NOW)
    assert missing.value.detail == messages.TRIGGER_NOT_FOUND
    with pytest.raises(NotFound) as no_table:
        tocsin.pause_trigger("00000000-0000-4000-8000-000000000000", saved["id"], now=NOW)
    assert no_table.value.detail == messages.TABLE_NOT_FOUND
