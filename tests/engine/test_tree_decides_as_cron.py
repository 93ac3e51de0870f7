"""A schedule with a trigger tree decides as a plain cron schedule does (one decision,
``core.decide``), and one tick pages through every pending event and every due tree schedule;
through the facade, on SQLite and PostgreSQL.

Each comparison runs a plain ``Schedule(cron=…)`` and a ``Schedule(trigger=Cron(…))`` of the same
expression side by side on one database and compares their fires and skip ranges (reason, first,
last, count)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from tocsin import AllOf, Cron, Schedule, TableUpdated, workflow
from tocsin.service import Tocsin
from tocsin.settings import Settings
from tocsin.workflows import Workflow
from workflows.helpers import ReportIn, ReportOut, send_report

T0 = datetime(2026, 3, 2, 8, 0, tzinfo=UTC)  # a Monday, 08:00 UTC
NINE = T0.replace(hour=9)
NY = "America/New_York"


def at(hhmm: str, day: int = 0) -> datetime:
    hour, minute = hhmm.split(":")
    return T0.replace(hour=int(hour), minute=int(minute)) + timedelta(days=day)


def flow(wid: str, schedule: Schedule | list[Schedule]) -> Workflow:
    wf = workflow(id=wid, input=ReportIn, output=ReportOut, schedule=schedule)
    return wf.then(send_report).commit()


def pair(expression: str, tz: str = "UTC", **kw: Any) -> list[Workflow]:
    """A plain cron schedule (``wf_plain``) and its one-leaf tree (``wf_tree``) under the same
    DST policy (``repeated="first"``)."""
    data = {"user_id": "x"}
    plain = Schedule(cron=expression, timezone=tz, input_data=data, **kw)
    leaf = Cron(expression, timezone=tz, repeated="first")
    tree = Schedule(trigger=leaf, timezone=tz, input_data=data, **kw)
    return [flow("plain", plain), flow("tree", tree)]


@pytest.fixture
def t(store_url: str, settings: Settings) -> Iterator[Tocsin]:
    opened = Tocsin.open(store_url, settings=settings)
    try:
        yield opened
    finally:
        opened.close()


def skips(t: Tocsin, sid: str) -> list[tuple[str, str, str, int]]:
    items = t.schedules.skips(sid, limit=100)["items"]
    return [(s["reason"], s["first_instant"], s["last_instant"], s["count"]) for s in items]


def fires(t: Tocsin, sid: str) -> list[datetime]:
    return sorted(i["scheduled_for"] for i in t.schedules.fires(sid, limit=500)["items"])


def same(t: Tocsin) -> list[tuple[str, str, str, int]]:
    """The plain schedule's skips, once checked equal to the tree's (fires too)."""
    assert fires(t, "wf_tree") == fires(t, "wf_plain")
    assert skips(t, "wf_tree") == skips(t, "wf_plain")
    return skips(t, "wf_plain")


def test_paused_instants_are_recorded_as_for_a_plain_schedule(t: Tocsin) -> None:
    t.register_workflows(pair("0 * * * *", overlap="allow"))
    t.sync_schedules(now=T0)
    assert t.tick(now=NINE)["schedules_fired"] == 2
    for sid in ("wf_plain", "wf_tree"):
        t.schedules.pause(sid, now=at("09:30"))
    for hour in ("10:00", "11:00", "12:00"):
        assert t.tick(now=at(hour))["schedules_fired"] == 0
    for sid in ("wf_plain", "wf_tree"):
        t.schedules.resume(sid, now=at("12:30"))
    assert t.tick(now=at("13:00"))["schedules_fired"] == 2
    assert same(t) == [("paused", "2026-03-02T10:00:00", "2026-03-02T12:00:00", 3)]
    assert fires(t, "wf_tree") == [NINE, at("13:00")]


def test_a_week_down_is_coalesced_as_for_a_plain_schedule(t: Tocsin) -> None:
    t.register_workflows(pair("* * * * *", overlap="allow"))
    t.sync_schedules(now=T0)
    assert t.tick(now=at("08:01"))["schedules_fired"] == 2
    assert t.tick(now=at("08:01", day=7))["schedules_fired"] == 2
    week = 7 * 24 * 60
    assert same(t) == [("coalesced", "2026-03-02T08:02:00", "2026-03-09T08:00:00", week - 1)]
    assert fires(t, "wf_tree") == [at("08:01"), at("08:01", day=7)]


def test_an_active_run_is_recorded_as_for_a_plain_schedule(t: Tocsin) -> None:
    t.register_workflows(pair("* * * * *"))  # overlap="skip", the default
    t.sync_schedules(now=at("08:59"))
    assert t.tick(now=NINE)["schedules_fired"] == 2  # each run pending: both busy
    assert t.tick(now=at("09:01"))["schedules_fired"] == 0
    assert t.tick(now=at("09:03"))["schedules_fired"] == 0
    t.work(now=at("09:03"))
    assert t.tick(now=at("09:04"))["schedules_fired"] == 2
    assert same(t) == [("active_run", "2026-03-02T09:01:00", "2026-03-02T09:03:00", 3)]


def test_catch_up_all_and_none_decide_as_for_a_plain_schedule(t: Tocsin) -> None:
    t.register_workflows(pair("*/10 * * * *", catch_up="all", max_catch_up=3, overlap="allow"))
    t.sync_schedules(now=T0)
    assert t.tick(now=NINE)["schedules_fired"] == 6  # 08:40, 08:50, 09:00 each
    assert same(t) == [("coalesced", "2026-03-02T08:10:00", "2026-03-02T08:30:00", 3)]
    t.workflows.clear()
    t.register_workflows(pair("*/10 * * * *", catch_up="none", overlap="allow"))
    t.sync_schedules(now=at("09:05"))
    assert t.tick(now=at("09:45"))["schedules_fired"] == 0
    assert same(t)[0] == ("coalesced", "2026-03-02T09:10:00", "2026-03-02T09:40:00", 4)


def test_a_spring_forward_gap_is_a_dst_gap_as_for_a_plain_schedule(t: Tocsin) -> None:
    t.register_workflows(pair("30 2 * * *", tz=NY, overlap="allow"))
    start = datetime(2026, 3, 7, 12, 0, tzinfo=UTC)  # the gap is in the night of 8 March
    t.sync_schedules(now=start)
    for day in range(1, 4):
        t.tick(now=start + timedelta(days=day))
    assert same(t) == [("dst_gap", "2026-03-08T07:00:00", "2026-03-08T07:00:00", 1)]
    assert len(fires(t, "wf_tree")) == 2  # 9 and 10 March


def test_an_and_due_with_1101_pending_events_fires_in_one_tick(t: Tocsin) -> None:
    a, b = (
        str(t.create_table("chatroom", str(uuid.uuid4()), name, {"N": "number"})["id"])
        for name in ("A", "B")
    )
    watch = Schedule(
        trigger=AllOf(Cron("0 9 * * *"), TableUpdated(a)),
        timezone="UTC",
        input_data={"user_id": "x"},
    )
    other = Schedule(  # listens to B: its writes are events waiting in the outbox
        trigger=AllOf(Cron("0 10 * * *"), TableUpdated(b)),
        timezone="UTC",
        input_data={"user_id": "y"},
    )
    t.register_workflows([flow("watch", watch), flow("other", other)])
    t.sync_schedules(now=T0)
    for i in range(1100):
        t.insert_record(b, {"N": i}, now=at("08:00") + timedelta(seconds=2 * i))
    t.insert_record(a, {"N": 1}, now=at("08:59"))  # the 1,101st write, the last
    assert t.tick(now=NINE)["schedules_fired"] == 1
    assert fires(t, "wf_watch") == [NINE]
    assert skips(t, "wf_watch") == []  # not compound_unsatisfied: A was written before 09:00
    assert t.tick(now=at("10:00"))["schedules_fired"] == 1  # B's latch held for 10:00


def test_1005_tree_schedules_due_at_once_fire_in_one_tick_and_due_agrees(t: Tocsin) -> None:
    entries = [
        Schedule(id=f"s{i}", trigger=Cron("0 9 * * *"), timezone="UTC", input_data={"user_id": "x"})
        for i in range(1005)
    ]
    t.register_workflows([flow("many", entries)])
    t.sync_schedules(now=T0)
    due = t.due(at=NINE)
    firing = [e for e in due["fires"] if e.get("kind") == "schedule"]
    assert len(firing) == 1005
    assert t.tick(now=NINE)["schedules_fired"] == 1005
    assert t.tick(now=at("09:01"))["schedules_fired"] == 0
