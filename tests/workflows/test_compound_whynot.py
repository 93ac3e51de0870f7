"""Issue 17 for compound workflow schedules, through the facade on SQLite and PostgreSQL: a
time instant of an AND tree that passes before its events occurred is a
``compound_unsatisfied`` skip; consecutive ones are one range."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta

import pytest

from tocsin import AllOf, AnyOf, Cron, TableUpdated
from tocsin.settings import Settings

from .test_compound import SID, World, at

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
    assert _skips(world) == [
        ("compound_unsatisfied", "2026-03-02T08:30:00", "2026-03-02T08:30:00", 1),
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
