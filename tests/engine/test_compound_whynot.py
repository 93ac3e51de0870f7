"""Why-not (skips, due, next fires) for compound workflow schedules, through the facade on
SQLite and PostgreSQL: a time instant of an AND tree that passes before its events occurred is a
``compound_unsatisfied`` skip; consecutive ones are one range."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta
from typing import Any

import pytest
from test_compound_fires import SID, World, at

from tocsin import AllOf, AnyOf, Cron, TableUpdated
from tocsin.settings import Settings

EVERY_MINUTE = Cron("* * * * *", timezone="UTC")


@pytest.fixture
def world(store_url: str, settings: Settings) -> Iterator[World]:
    w = World(store_url, settings)
    w.open()
    try:
        yield w
    finally:
        if w.t is not None:
            w.t.close()


def _skips(w: World) -> list[tuple[str, str, str, int]]:
    assert w.t is not None
    items = w.t.schedules.skips(SID)["items"]
    return [(s["reason"], s["first_instant"], s["last_instant"], s["count"]) for s in items]


def test_ten_unsatisfied_minutes_are_one_range_then_an_event_fires(world: World) -> None:
    world.define(AllOf(EVERY_MINUTE, TableUpdated(world.tables[0])))
    world.t.sync_schedules(now=at("08:00"))  # type: ignore[union-attr]
    for minute in range(1, 11):
        assert world.tick(at("08:00") + timedelta(minutes=minute)) == 0
        if minute == 5:
            world.restart()  # the range goes on across a restart (merged in the store)
    unsatisfied = ("compound_unsatisfied", "2026-03-02T08:01:00", "2026-03-02T08:10:00", 10)
    assert _skips(world) == [unsatisfied]
    world.event(0, at("08:10") + timedelta(seconds=30))
    assert world.tick(at("08:11")) == 1  # the next instant fires
    assert world.fired() == [at("08:11")]
    assert world.tick(at("08:12")) == 0  # the latch was reset by the fire
    assert _skips(world) == [
        ("compound_unsatisfied", "2026-03-02T08:12:00", "2026-03-02T08:12:00", 1),
        unsatisfied,
    ]
    assert world.tick(at("08:13")) == 0
    assert _skips(world)[0] == (
        "compound_unsatisfied", "2026-03-02T08:12:00", "2026-03-02T08:13:00", 2,
    )  # fmt: skip


def test_downtime_is_not_counted_as_unsatisfied(world: World) -> None:
    world.define(AllOf(EVERY_MINUTE, TableUpdated(world.tables[0])))
    world.t.sync_schedules(now=at("08:00"))  # type: ignore[union-attr]
    assert world.tick(at("08:01")) == 0
    assert world.tick(at("08:30")) == 0  # 08:02 .. 08:29 coalesced onto 08:30: one looked at
    assert _skips(world) == [  # as a plain cron schedule records its downtime
        ("compound_unsatisfied", "2026-03-02T08:30:00", "2026-03-02T08:30:00", 1),
        ("coalesced", "2026-03-02T08:02:00", "2026-03-02T08:29:00", 28),
        ("compound_unsatisfied", "2026-03-02T08:01:00", "2026-03-02T08:01:00", 1),
    ]


def test_a_tree_that_never_waits_for_events_records_nothing(world: World) -> None:
    world.define(AnyOf(EVERY_MINUTE, TableUpdated(world.tables[0])))
    world.t.sync_schedules(now=at("08:00"))  # type: ignore[union-attr]
    for minute in range(1, 4):
        assert world.tick(at("08:00") + timedelta(minutes=minute)) == 1
    assert _skips(world) == []


def test_a_paused_compound_schedule_records_no_unsatisfied_instant(world: World) -> None:
    world.define(AllOf(EVERY_MINUTE, TableUpdated(world.tables[0])))
    world.t.sync_schedules(now=at("08:00"))  # type: ignore[union-attr]
    world.t.schedules.pause(SID, now=at("08:00"))  # type: ignore[union-attr]
    for minute in range(1, 4):
        assert world.tick(at("08:00") + timedelta(minutes=minute)) == 0
    assert [s[0] for s in _skips(world)] == []


# --- the global dry run (t.due) -----------------------------------------------------------------


def _entry(w: World, when: datetime) -> dict[str, Any]:
    assert w.t is not None
    found = w.t.due(at=when)
    return next(e for e in found["fires"] + found["not_firing"] if e.get("schedule_id") == SID)


def test_due_says_which_events_an_and_tree_waits_for(world: World) -> None:
    e1, e2 = TableUpdated(world.tables[0]), TableUpdated(world.tables[1])
    world.define(AllOf(Cron("0 9 * * *", timezone="UTC"), e1, e2))
    world.t.sync_schedules(now=at("08:00"))  # type: ignore[union-attr]
    early = _entry(world, at("08:30"))
    assert early["status"] == "not_due" and early["next_at"] == "2026-03-02T09:00:00"
    assert [w["subject"] for w in early["waiting_for"]] == world.tables
    world.event(0, at("08:40"))
    nine = _entry(world, at("09:00"))
    assert nine["status"] == "skipped" and nine["reason"] == "compound_unsatisfied"
    assert nine["instant"] == "2026-03-02T09:00:00"
    assert [w["subject"] for w in nine["waiting_for"]] == [world.tables[1]]  # E1 happened
    world.event(1, at("08:50"))
    fires = _entry(world, at("09:00"))
    assert fires["status"] == "fires" and fires["scheduled_for"] == ["2026-03-02T09:00:00"]
    assert world.tick(at("09:00")) == 1 and world.fired() == [at("09:00")]  # as it said
    after = _entry(world, at("09:00", day=1))
    assert after["reason"] == "compound_unsatisfied" and len(after["waiting_for"]) == 2


def test_due_is_read_only_and_agrees_with_the_tick(world: World) -> None:
    world.define(AllOf(EVERY_MINUTE, TableUpdated(world.tables[0])))
    world.t.sync_schedules(now=at("08:00"))  # type: ignore[union-attr]
    plan = {3: True, 4: False, 7: True, 8: True}  # minute -> an event just before it
    for minute in range(1, 10):
        when = at("08:00") + timedelta(minutes=minute)
        if plan.get(minute):
            world.event(0, when - timedelta(seconds=20))
        entry = _entry(world, when)
        assert _entry(world, when) == entry  # asking twice changes nothing (no event consumed)
        fired = world.tick(when)
        assert (entry["status"] == "fires") == (fired == 1), minute
        assert entry.get("runs", 0) == fired
        if fired == 0:
            assert entry["reason"] == "compound_unsatisfied"
    assert world.fired() == [at("08:03"), at("08:07"), at("08:08")]


def test_next_fires_read_each_instant_in_its_time_triggers_zone(world: World) -> None:
    """The schedule's zone is UTC; each instant is shown in the zone of the leaf it comes from."""
    berlin = Cron("0 9 * * *", timezone="Europe/Berlin")
    taipei = Cron("0 9 * * *", timezone="Asia/Taipei")
    world.define(AnyOf(AllOf(berlin, TableUpdated(world.tables[0])), taipei))
    world.t.sync_schedules(now=at("08:00"))  # type: ignore[union-attr]
    found = world.t.schedules.next_fires(SID, n=2, now=at("08:00"))  # type: ignore[union-attr]
    assert [(i["at"], i["local"], i["zone"]) for i in found["items"]] == [
        ("2026-03-03T01:00:00", "2026-03-03T09:00:00+08:00", "Asia/Taipei"),
        ("2026-03-03T08:00:00", "2026-03-03T09:00:00+01:00", "Europe/Berlin"),
    ]


def test_due_for_events_only_and_paused_trees(world: World) -> None:
    world.define(AllOf(TableUpdated(world.tables[0]), TableUpdated(world.tables[1])))
    world.t.sync_schedules(now=at("08:00"))  # type: ignore[union-attr]
    world.event(1, at("08:10"))
    waiting = _entry(world, at("08:15"))
    assert waiting["status"] == "not_due" and waiting["next_at"] is None
    assert [w["subject"] for w in waiting["waiting_for"]] == [world.tables[0]]
    world.t.schedules.pause(SID, now=at("08:20"))  # type: ignore[union-attr]
    assert _entry(world, at("08:25"))["reason"] == "paused"


def test_next_fires_of_a_compound_schedule_are_its_trees_instants(world: World) -> None:
    world.define(AllOf(Cron("0 9 * * *", timezone="UTC"), TableUpdated(world.tables[0])))
    world.t.sync_schedules(now=at("08:00"))  # type: ignore[union-attr]
    found = world.t.schedules.next_fires(SID, n=3, now=at("08:00"))  # type: ignore[union-attr]
    assert [(i["at"], i["status"]) for i in found["items"]] == [
        (f"2026-03-0{d}T09:00:00", "could_fire") for d in (2, 3, 4)
    ]
    world.t.schedules.pause(SID, now=at("08:00"))  # type: ignore[union-attr]
    assert world.t.schedules.next_fires(SID, now=at("08:00"))["items"] == []  # type: ignore[union-attr]
