"""A schedule whose firing raises does not hold back the others of its kind (``engine.passes``):
its page is rolled back, each schedule the page claimed fires again in a transaction of its own,
the broken one is logged and skipped, and it fires normally once fixed — for the workflow cron
schedules, the trigger-tree schedules (their due pages and their event pages) and the lanes."""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from lanes.lane_support import Probe, make_lane
from tocsin import AnyOf, Cron, Schedule, TableUpdated, workflow
from tocsin.service import Tocsin
from tocsin.store import lanes as store_lanes
from tocsin.store import schedules as store_schedules
from tocsin.store import trigger_events as store_events
from tocsin.store.tx import Tx
from workflows.helpers import NOW, ReportIn, ReportOut, minutes, send_report

NINE = NOW.replace(hour=9) + timedelta(days=1)  # the trees' instant, after NOW
EVERY_MINUTE = "* * * * *"


def errors(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelname == "ERROR"]


def watch(tocsin: Tocsin, table_id: str) -> None:
    """The workflow ``watch``, whose declared schedule ``wf_watch`` fires at 09:00 UTC or when
    ``table_id`` is written."""
    tree = AnyOf(Cron("0 9 * * *", timezone="UTC"), TableUpdated(table_id=table_id))
    sched = Schedule(trigger=tree, timezone="UTC", overlap="allow", input_data={"user_id": "x"})
    wf = (
        workflow(id="watch", input=ReportIn, output=ReportOut, schedule=sched)
        .then(send_report)
        .commit()
    )
    tocsin.register_workflows([wf])
    tocsin.sync_schedules(now=NOW)


def fired(tocsin: Tocsin, sid: str) -> list[datetime]:
    items = tocsin.schedules.fires(sid, limit=100)["items"]
    return sorted(i["scheduled_for"] for i in items if i["publish_status"] == "published")


def test_a_cron_schedule_whose_fire_raises_holds_back_no_other(
    tocsin: Tocsin, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    from workflows.helpers import daily

    tocsin.register_workflows([daily()])
    made = [
        tocsin.schedules.create(
            workflow_id="daily-report", cron=EVERY_MINUTE, timezone="UTC", now=NOW
        )["id"]
        for _ in range(3)
    ]
    broken = made[1]
    advance = store_schedules.advance_schedules

    def advance_but_broken(tx: Tx, *, ids: Sequence[str], **kw: Any) -> None:
        if broken in ids:
            raise RuntimeError("the broken schedule")
        advance(tx, ids=ids, **kw)

    monkeypatch.setattr(store_schedules, "advance_schedules", advance_but_broken)
    late = NOW + minutes(1) + timedelta(seconds=5)
    assert tocsin.tick(now=late)["schedules_fired"] == 2  # the others, in this very tick
    assert [fired(tocsin, sid) for sid in made] == [[NOW + minutes(1)], [], [NOW + minutes(1)]]
    assert f"tick: {broken} skipped" in errors(caplog)
    assert tocsin.tick(now=late)["schedules_fired"] == 0  # broken again: the others are done

    monkeypatch.setattr(store_schedules, "advance_schedules", advance)  # fixed
    assert tocsin.tick(now=late)["schedules_fired"] == 1
    assert [fired(tocsin, sid) for sid in made] == [[NOW + minutes(1)]] * 3
    assert tocsin.schedules.get(broken)["next_fire_at"] == NOW + minutes(2)


def breaking_saves(
    monkeypatch: pytest.MonkeyPatch, broken: str
) -> Any:  # the unpatched function, to restore
    save = store_events.save_trigger_states

    def save_but_broken(tx: Tx, *, states: Sequence[Mapping[str, Any]], now: datetime) -> None:
        if any(s["id"] == broken for s in states):
            raise RuntimeError("the broken tree")
        save(tx, states=states, now=now)

    monkeypatch.setattr(store_events, "save_trigger_states", save_but_broken)
    return save


def test_a_tree_schedule_whose_fire_raises_holds_back_no_other(
    tocsin: Tocsin, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    table = str(tocsin.create_table("chatroom", str(uuid.uuid4()), "E1", {"N": "number"})["id"])
    watch(tocsin, table)
    tree = {"any": [{"cron": "0 9 * * *"}, {"event": "table_updated", "table_id": table}]}
    made = ["wf_watch"] + [
        tocsin.schedules.create(workflow_id="watch", trigger=tree, timezone="UTC", now=NOW)["id"]
        for _ in range(2)
    ]
    broken = made[1]
    save = breaking_saves(monkeypatch, broken)
    late = NINE + timedelta(seconds=5)
    assert tocsin.tick(now=late)["schedules_fired"] == 2
    assert [fired(tocsin, sid) for sid in made] == [[NINE], [], [NINE]]
    assert f"tick: {broken} skipped" in errors(caplog)

    monkeypatch.setattr(store_events, "save_trigger_states", save)  # fixed
    assert tocsin.tick(now=late)["schedules_fired"] == 1
    assert [fired(tocsin, sid) for sid in made] == [[NINE]] * 3
    assert tocsin.schedules.get(broken)["next_fire_at"] == NINE + timedelta(days=1)


def test_an_event_batch_that_raises_holds_back_no_due_tree(
    tocsin: Tocsin, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the broken tree listens to E1; the others are due by the clock, one listening to E2
    e1, e2 = (
        str(tocsin.create_table("chatroom", str(uuid.uuid4()), name, {"N": "number"})["id"])
        for name in ("E1", "E2")
    )
    watch(tocsin, e2)

    def tree(table: str) -> dict[str, Any]:
        return {"any": [{"cron": "0 9 * * *"}, {"event": "table_updated", "table_id": table}]}

    create = tocsin.schedules.create
    broken = create(workflow_id="watch", trigger=tree(e1), timezone="UTC", now=NOW)["id"]
    other = create(workflow_id="watch", trigger=tree(e2), timezone="UTC", now=NOW)["id"]
    save = breaking_saves(monkeypatch, broken)
    written = NINE - minutes(30)
    tocsin.insert_record(e1, {"N": 1}, now=written)  # the batch: E1's event, the broken tree's
    late = NINE + timedelta(seconds=5)
    assert tocsin.tick(now=late)["schedules_fired"] == 2  # wf_watch and other, at 09:00
    assert [fired(tocsin, sid) for sid in ("wf_watch", other, broken)] == [[NINE], [NINE], []]
    skipped = [m for m in errors(caplog) if m.startswith("tick: events:")]
    assert len(skipped) == 1 and skipped[0].endswith(" skipped")

    monkeypatch.setattr(store_events, "save_trigger_states", save)  # fixed
    assert tocsin.tick(now=late)["schedules_fired"] == 1  # the event's fire: its run holds 09:00
    assert fired(tocsin, broken) == [written]
    assert tocsin.schedules.get(broken)["next_fire_at"] == NINE + timedelta(days=1)
    assert tocsin.tick(now=late)["schedules_fired"] == 0


DAY0 = datetime(2026, 9, 7, 4, 0, tzinfo=UTC)
S1 = datetime(2026, 9, 7, 23, 30, tzinfo=UTC)  # 07:30 in Taipei: the lanes' first instant


def test_a_lane_whose_fire_raises_holds_back_no_other(
    tocsin: Tocsin, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    probe = Probe()
    ids = ["lane-a", "lane-b", "lane-c"]
    tocsin.lanes.register([make_lane(probe, lane_id=i) for i in ids])
    assert tocsin.tick(now=DAY0)["lanes_fired"] == 0  # anchored at S1
    broken = "lane-b"
    update = store_lanes.update_lane

    def update_but_broken(tx: Tx, *, lane_id: str, **kw: Any) -> Any:
        if lane_id == broken:
            raise RuntimeError("the broken lane")
        return update(tx, lane_id=lane_id, **kw)

    monkeypatch.setattr(store_lanes, "update_lane", update_but_broken)
    late = S1 + timedelta(seconds=5)
    assert tocsin.tick(now=late)["lanes_fired"] == 2
    rows = {lane["id"]: lane["next_fire_at"] for lane in tocsin.lanes.list()}
    assert rows == {"lane-a": S1 + timedelta(days=1), "lane-b": S1, "lane-c": rows["lane-a"]}
    assert f"tick: {broken}@{S1.isoformat()} skipped" in errors(caplog)

    monkeypatch.setattr(store_lanes, "update_lane", update)  # fixed
    assert tocsin.tick(now=late)["lanes_fired"] == 1
    assert {lane["next_fire_at"] for lane in tocsin.lanes.list()} == {S1 + timedelta(days=1)}
    assert len(tocsin.lanes.contracts(broken)["items"]) == 1


def test_a_lane_backlog_pages_on_within_one_tick_beside_a_broken_lane(
    tocsin: Tocsin, monkeypatch: pytest.MonkeyPatch
) -> None:
    probe = Probe()
    every = Schedule(cron="*/5 * * * *", timezone="UTC")  # catch_up "all": a window each
    tocsin.lanes.register([make_lane(probe, lane_id=i, schedule=every) for i in ("a", "b")])
    assert tocsin.tick(now=DAY0)["lanes_fired"] == 0
    update = store_lanes.update_lane

    def update_but_broken(tx: Tx, *, lane_id: str, **kw: Any) -> Any:
        if lane_id == "b":
            raise RuntimeError("the broken lane")
        return update(tx, lane_id=lane_id, **kw)

    monkeypatch.setattr(store_lanes, "update_lane", update_but_broken)
    later = DAY0 + timedelta(days=2)  # 576 instants: three pages of lane a
    assert tocsin.tick(now=later)["lanes_fired"] == 576
    monkeypatch.setattr(store_lanes, "update_lane", update)
    assert tocsin.tick(now=later)["lanes_fired"] == 576
    assert {lane["next_fire_at"] for lane in tocsin.lanes.list()} == {later + minutes(5)}
