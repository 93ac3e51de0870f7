"""A table trigger's fire history (``Tocsin.triggers.fires`` / ``.history``), on SQLite and
PostgreSQL: its scheduled runs read as fires (scheduled vs actual time, run, status), the skip
ranges interleaved by time, paged by the fires as a workflow schedule's history."""

from __future__ import annotations

import pytest
from engine_support import NOW, date_trigger, finish_all, hours, interval, make_table, minutes

from tocsin.errors import NotFound, ValidationError
from tocsin.service import Tocsin


def _shape(page: dict[str, object]) -> list[tuple[str, object, object]]:
    items = page["items"]
    assert isinstance(items, list)
    return [
        ("fire", i["scheduled_for"], i["run_status"])
        if i["kind"] == "fire"
        else ("skip", i["reason"], i["count"])
        for i in items
    ]


def test_fires_are_the_scheduled_runs_with_the_skips_between_them(tocsin: Tocsin) -> None:
    table_id = make_table(tocsin)
    [saved] = tocsin.set_triggers(table_id, [interval(3600)], now=NOW)
    tid = saved["id"]
    tocsin.tick(now=NOW + minutes(1))  # the first window, fired a minute late
    finish_all(tocsin, table_id, now=NOW + minutes(2))
    tocsin.tick(now=NOW + hours(4))  # down: the latest window fires, the three before it coalesce
    tocsin.run_trigger(table_id, tid, now=NOW + hours(4) + minutes(5))  # run-now: no fire

    fires = tocsin.triggers.fires(table_id, tid)
    assert fires["total"] == 2
    newest, oldest = fires["items"]
    assert (oldest["scheduled_for"], oldest["fired_at"]) == (NOW, NOW + minutes(1))
    assert oldest["run_status"] == "done" and oldest["run_id"] == oldest["id"]
    assert (newest["scheduled_for"], newest["fired_at"]) == (NOW + hours(4), NOW + hours(4))
    assert newest["run_status"] == "pending"
    assert {f["run_id"] for f in fires["items"]} == {
        r["id"]
        for r in tocsin.list_runs(table_id, trigger_id=tid, now=NOW)["items"]
        if r["source"] == "schedule"
    }

    history = tocsin.triggers.history(table_id, tid)
    assert _shape(history) == [
        ("fire", NOW + hours(4), "pending"),
        ("skip", "coalesced", 3),
        ("fire", NOW, "done"),
    ]
    assert (history["total"], history["skips_left_off"]) == (2, 0)
    # paged by the fires: each skip range shows on exactly one page
    first = tocsin.triggers.history(table_id, tid, limit=1)
    second = tocsin.triggers.history(table_id, tid, skip=1, limit=1)
    assert _shape(first) == [("fire", NOW + hours(4), "pending")]
    assert _shape(second) == [("skip", "coalesced", 3), ("fire", NOW, "done")]


def test_date_trigger_fires_and_paused_values_show_too(tocsin: Tocsin) -> None:
    table_id = make_table(tocsin, {"Due": "datetime"})
    [saved] = tocsin.set_triggers(table_id, [date_trigger("Due")], now=NOW)
    tid = saved["id"]
    due = NOW + hours(1)
    tocsin.insert_records(table_id, [{"Due": due.isoformat()}], now=NOW)
    tocsin.tick(now=due + minutes(1))
    tocsin.pause_trigger(table_id, tid, now=due + minutes(2))
    tocsin.insert_records(table_id, [{"Due": (due + hours(1)).isoformat()}], now=due)
    tocsin.resume_trigger(table_id, tid, now=due + hours(2))
    tocsin.tick(now=due + hours(2))
    assert _shape(tocsin.triggers.history(table_id, tid)) == [
        ("skip", "paused", 1),
        ("fire", due, "pending"),
    ]


def test_an_unknown_trigger_or_table_is_404_and_a_bad_page_400(tocsin: Tocsin) -> None:
    table_id = make_table(tocsin)
    [saved] = tocsin.set_triggers(table_id, [interval(60)], now=NOW)
    with pytest.raises(NotFound):
        tocsin.triggers.history(table_id, "trg_000000000099")
    with pytest.raises(NotFound):
        tocsin.triggers.fires("00000000-0000-4000-8000-000000000000", saved["id"])
    with pytest.raises(ValidationError):
        tocsin.triggers.fires(table_id, saved["id"], limit=0)
    assert tocsin.triggers.history(table_id, saved["id"], skip=5)["items"] == []


def test_an_empty_history(tocsin: Tocsin) -> None:
    table_id = make_table(tocsin)
    [saved] = tocsin.set_triggers(table_id, [interval(60)], now=NOW)
    page = tocsin.triggers.history(table_id, saved["id"])
    assert page == {"items": [], "total": 0, "skip": 0, "limit": 50, "skips_left_off": 0}
