"""SPEC §13 compound triggers through the facade, on SQLite and PostgreSQL: one test per row of
the seed's compound table, each with a restart (close, reopen on the same database) between the
event and the instant; latches durable, each event counted once, every latch reset on a fire."""

from __future__ import annotations

import uuid
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

import pytest

from tocsin import AllOf, AnyOf, Cron, Schedule, TableUpdated
from tocsin.core.schedules.tree import Node
from tocsin.service import Tocsin
from tocsin.settings import Settings
from workflows.helpers import ReportIn, ReportOut, send_report

T0 = datetime(2026, 3, 2, 8, 0, tzinfo=UTC)  # a Monday, 08:00 UTC
NINE = T0.replace(hour=9)
SID = "wf_watch"


def at(hhmm: str, day: int = 0) -> datetime:
    hour, minute = hhmm.split(":")
    return T0.replace(hour=int(hour), minute=int(minute)) + timedelta(days=day)


@dataclass
class World:
    """One database, reopened at will; two tables whose writes are the events E1 and E2."""

    url: str
    settings: Settings
    t: Tocsin | None = None
    tables: list[str] = field(default_factory=list)

    def open(self, tree_of: object = None) -> Tocsin:
        self.t = Tocsin.open(self.url, settings=self.settings)
        if not self.tables:
            for name in ("E1", "E2"):
                made = self.t.create_table("chatroom", str(uuid.uuid4()), name, {"N": "number"})
                self.tables.append(str(made["id"]))
        return self.t

    def define(self, tree: Node) -> None:
        from tocsin import workflow

        sched = Schedule(trigger=tree, timezone="UTC", overlap="allow", input_data={"user_id": "x"})
        wf = (
            workflow(id="watch", input=ReportIn, output=ReportOut, schedule=sched)
            .then(send_report)
            .commit()
        )
        assert self.t is not None
        self.t.register_workflows([wf])
        self.wf = wf

    def restart(self) -> Tocsin:
        assert self.t is not None
        self.t.close()
        self.t = Tocsin.open(self.url, settings=self.settings, workflows=[self.wf])
        return self.t

    def event(self, index: int, when: datetime) -> None:
        assert self.t is not None
        self.t.insert_record(self.tables[index], {"N": 1}, now=when)

    def tick(self, when: datetime) -> int:
        assert self.t is not None
        return self.t.tick(now=when)["schedules_fired"]

    def fired(self) -> list[datetime]:
        assert self.t is not None
        items = self.t.schedules.fires(SID, limit=100)["items"]
        return sorted(i["scheduled_for"] for i in items)


@pytest.fixture
def world(store_url: str, settings: Settings) -> Iterator[World]:
    w = World(store_url, settings)
    w.open()
    try:
        yield w
    finally:
        if w.t is not None:
            w.t.close()


def T1() -> Cron:
    return Cron("0 9 * * *", timezone="UTC")


def test_and_t1_e1_fires_at_t1_only_if_e1_happened(world: World) -> None:
    e1 = TableUpdated(world.tables[0])
    world.define(AllOf(T1(), e1))
    world.t.sync_schedules(now=T0)  # type: ignore[union-attr]
    assert world.tick(at("08:30")) == 0
    world.event(0, at("08:40"))
    assert world.tick(at("08:45")) == 0  # latched, waiting for 09:00
    world.restart()
    assert world.tick(NINE) == 1
    assert world.tick(at("09:01")) == 0
    assert world.tick(at("09:00", day=1)) == 0  # latch reset by the fire: no E1 since
    assert world.fired() == [NINE]


def test_or_t1_e1_fires_at_t1_and_when_e1_occurs(world: World) -> None:
    world.define(AnyOf(T1(), TableUpdated(world.tables[0])))
    world.t.sync_schedules(now=T0)  # type: ignore[union-attr]
    world.event(0, at("08:40"))
    world.restart()
    assert world.tick(at("08:45")) == 1  # the event, consumed after the restart
    assert world.tick(NINE) == 1
    assert world.tick(at("09:30")) == 0  # the event counted once
    assert world.fired() == [at("08:40"), NINE]


def test_and_t1_t2_fires_when_instants_coincide_and_warns(world: World) -> None:
    with pytest.warns(UserWarning, match="single, more specific time trigger"):
        world.define(AllOf(T1(), Cron("0 * * * *", timezone="UTC")))
    world.t.sync_schedules(now=T0)  # type: ignore[union-attr]
    assert world.tick(at("08:00") + timedelta(seconds=1)) == 0
    world.restart()
    assert world.tick(NINE) == 1
    assert world.tick(at("10:00")) == 0  # hourly alone is not enough
    world.restart()
    assert world.tick(at("09:00", day=1)) == 1
    assert world.fired() == [NINE, at("09:00", day=1)]


def test_or_t1_t2_fires_at_either(world: World) -> None:
    world.define(AnyOf(T1(), Cron("30 9 * * *", timezone="UTC")))
    world.t.sync_schedules(now=T0)  # type: ignore[union-attr]
    assert world.tick(NINE) == 1
    world.restart()
    assert world.tick(at("09:30")) == 1
    assert world.tick(at("09:45")) == 0
    assert world.fired() == [NINE, at("09:30")]


def test_and_e1_e2_fires_when_both_occurred(world: World) -> None:
    world.define(AllOf(TableUpdated(world.tables[0]), TableUpdated(world.tables[1])))
    world.t.sync_schedules(now=T0)  # type: ignore[union-attr]
    world.event(0, at("08:10"))
    world.event(0, at("08:11"))  # E1 twice: still one latch
    assert world.tick(at("08:15")) == 0
    world.restart()
    world.event(1, at("08:20"))
    assert world.tick(at("08:25")) == 1
    world.event(1, at("08:30"))  # E2 again, E1 reset by the fire: no fire
    assert world.tick(at("08:35")) == 0
    assert world.fired() == [at("08:20")]
    view = world.t.schedules.get(SID, now=at("08:36"))  # type: ignore[union-attr]
    left, right = view["trigger"]["tree"]["all"]
    assert left["latched_since"] is None and right["latched_since"] == at("08:30")


def test_or_e1_e2_fires_when_either_occurred(world: World) -> None:
    world.define(AnyOf(TableUpdated(world.tables[0]), TableUpdated(world.tables[1])))
    world.t.sync_schedules(now=T0)  # type: ignore[union-attr]
    world.event(0, at("08:10"))
    world.restart()
    assert world.tick(at("08:15")) == 1
    world.event(1, at("08:20"))
    world.restart()
    assert world.tick(at("08:25")) == 1
    assert world.tick(at("08:30")) == 0
    assert world.fired() == [at("08:10"), at("08:20")]


def test_and_t1_or_e1_e2_fires_at_t1_if_either_occurred(world: World) -> None:
    e1, e2 = TableUpdated(world.tables[0]), TableUpdated(world.tables[1])
    world.define(AllOf(T1(), AnyOf(e1, e2)))
    world.t.sync_schedules(now=T0)  # type: ignore[union-attr]
    world.event(1, at("08:20"))
    assert world.tick(at("08:25")) == 0
    world.restart()
    assert world.tick(NINE) == 1
    assert world.tick(at("09:00", day=1)) == 0  # nothing happened since the fire
    world.event(0, at("12:00", day=1))
    world.restart()
    assert world.tick(at("09:00", day=2)) == 1
    assert world.fired() == [NINE, at("09:00", day=2)]


def test_or_t1_and_e1_e2_fires_at_t1_or_when_both_occurred(world: World) -> None:
    e1, e2 = TableUpdated(world.tables[0]), TableUpdated(world.tables[1])
    world.define(AnyOf(T1(), AllOf(e1, e2)))
    world.t.sync_schedules(now=T0)  # type: ignore[union-attr]
    world.event(0, at("08:10"))
    assert world.tick(at("08:15")) == 0
    world.restart()
    world.event(1, at("08:20"))
    assert world.tick(at("08:25")) == 1
    world.event(0, at("08:50"))  # E1 alone: latched, and reset by the 09:00 fire
    assert world.tick(NINE) == 1
    world.event(1, at("09:10"))
    assert world.tick(at("09:15")) == 0
    assert world.fired() == [at("08:20"), NINE]


def test_downtime_coalesces_and_an_event_after_the_instant_waits(world: World) -> None:
    world.define(AllOf(Cron("0 * * * *", timezone="UTC"), TableUpdated(world.tables[0])))
    world.t.sync_schedules(now=T0)  # type: ignore[union-attr]
    world.event(0, at("08:10"))
    world.restart()  # down from 08:10 to 11:30: 09:00, 10:00, 11:00 were missed
    assert world.tick(at("11:30")) == 1
    assert world.fired() == [at("11:00")]  # the latest missed instant, once
    world.event(0, at("11:40"))
    world.restart()
    assert world.tick(at("13:05")) == 1  # coalesced onto 13:00; the 11:40 event counts
    assert world.fired() == [at("11:00"), at("13:00")]


def test_schedule_view_shows_latches_and_next_instant(world: World) -> None:
    world.define(AllOf(T1(), TableUpdated(world.tables[0])))
    world.t.sync_schedules(now=T0)  # type: ignore[union-attr]
    world.event(0, at("08:10"))
    world.tick(at("08:15"))
    view = world.t.schedules.get(SID, now=at("08:20"))  # type: ignore[union-attr]
    assert view["cron"] is None and view["next_fire_at"] == NINE
    trig = view["trigger"]
    assert trig["next_instant"] == NINE and trig["satisfied_now"] is False
    time_leaf, event_leaf = trig["tree"]["all"]
    assert time_leaf["next"] == NINE and time_leaf["repeated"] == "both"
    assert event_leaf["latched_since"] == at("08:10")
    assert "table" in trig["description"] and "UTC" in trig["description"]
    # the words name the table by its name, not its id (which stays in the tree)
    assert event_leaf["table_id"] == world.tables[0] and event_leaf["name"] == "E1"
    assert trig["description"].endswith(" and table 'E1' was updated)")
    assert world.tables[0] not in trig["description"]
    (listed,) = world.t.schedules.list()["items"]  # type: ignore[union-attr]
    assert listed["description"] == view["description"] == trig["description"]


def test_overlap_skip_holds_the_fire_until_the_run_ends(world: World) -> None:
    from tocsin import workflow

    sched = Schedule(trigger=TableUpdated(world.tables[0]), input_data={"user_id": "x"})
    wf = workflow(id="watch", input=ReportIn, output=ReportOut, schedule=sched)
    world.wf = wf.then(send_report).commit()
    world.t.register_workflows([world.wf])  # type: ignore[union-attr]
    world.t.sync_schedules(now=T0)  # type: ignore[union-attr]
    world.event(0, at("08:10"))
    assert world.tick(at("08:11")) == 1  # its run is pending: the schedule is busy
    world.event(0, at("08:12"))
    assert world.tick(at("08:13")) == 0  # latched, held back
    world.restart()
    world.t.work(now=at("08:14"))  # type: ignore[union-attr]
    assert world.tick(at("08:15")) == 1  # fired now that the run ended
    assert world.fired() == [at("08:10"), at("08:15")]


def test_schedule_succeeded_and_workflow_succeeded_events(world: World) -> None:
    from tocsin import ScheduleSucceeded, WorkflowSucceeded, workflow

    first = Schedule(id="a", trigger=TableUpdated(world.tables[0]), input_data={"user_id": "x"})
    chained = Schedule(
        id="b",
        trigger=AllOf(ScheduleSucceeded("wf_watch__a"), WorkflowSucceeded("watch")),
        input_data={"user_id": "y"},
        overlap="allow",
    )
    wf = workflow(id="watch", input=ReportIn, output=ReportOut, schedule=[first, chained])
    world.wf = wf.then(send_report).commit()
    t = world.t
    assert t is not None
    t.register_workflows([world.wf])
    t.sync_schedules(now=T0)
    world.event(0, at("08:10"))
    assert world.tick(at("08:11")) == 1  # schedule a
    t.work(now=at("08:12"))  # its run succeeds: both events, same transaction
    world.restart()
    assert world.tick(at("08:13")) == 1  # schedule b
    items = world.t.schedules.fires("wf_watch__b")["items"]  # type: ignore[union-attr]
    assert [i["scheduled_for"] for i in items] == [at("08:12")]


def test_definition_changed_event_on_sync(world: World) -> None:
    from tocsin import DefinitionChanged, StepContext, step, workflow

    def v1(data: ReportIn, ctx: StepContext) -> ReportOut:
        return ReportOut(ok=True, user_id=data.user_id + "-v1")

    def v2(data: ReportIn, ctx: StepContext) -> ReportOut:
        return ReportOut(ok=True, user_id=data.user_id + "-v2")

    def build(fn: object) -> object:
        s = step(id="s", input=ReportIn, output=ReportOut)(fn)  # type: ignore[arg-type]
        return workflow(id="model", input=ReportIn, output=ReportOut).then(s).commit()

    watcher = Schedule(trigger=DefinitionChanged("model"), input_data={"user_id": "x"})
    world.wf = (
        workflow(id="watch", input=ReportIn, output=ReportOut, schedule=watcher)
        .then(send_report)
        .commit()
    )
    t = world.t
    assert t is not None
    t.register_workflows([world.wf, build(v1)])  # type: ignore[list-item]
    t.sync_schedules(now=T0)  # first sync: the hash is recorded, no event
    assert world.tick(at("08:01")) == 0
    t.sync_schedules(now=at("08:02"))  # same code: no event
    assert world.tick(at("08:03")) == 0
    t.workflows.pop("model")
    t.register_workflows([build(v2)])  # type: ignore[list-item]
    t.sync_schedules(now=at("08:04"))
    assert world.tick(at("08:05")) == 1
    assert world.fired() == [at("08:04")]


def test_unknown_ids_are_refused_at_sync_and_nothing_is_written(world: World) -> None:
    from tocsin import ConfigError, WorkflowSucceeded

    world.define(AnyOf(TableUpdated("no-such-table"), T1()))
    with pytest.raises(ConfigError, match="unknown table 'no-such-table'"):
        world.t.sync_schedules(now=T0)  # type: ignore[union-attr]
    assert world.t.schedules.list()["total"] == 0  # type: ignore[union-attr]
    world.t.workflows.clear()  # type: ignore[union-attr]
    world.define(WorkflowSucceeded("ghost"))
    with pytest.raises(ConfigError, match="unknown workflow 'ghost'"):
        world.t.sync_schedules(now=T0)  # type: ignore[union-attr]


def test_imperative_create_takes_the_json_tree(world: World) -> None:
    world.define(T1())
    t = world.t
    assert t is not None
    tree = {"any": [{"cron": "0 9 * * *"}, {"event": "table_updated", "table_id": world.tables[0]}]}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        made = t.schedules.create(workflow_id="watch", trigger=tree, timezone="UTC", now=T0)
    assert made["trigger"]["tree"]["any"][0]["timezone"] == "UTC"
    world.event(0, at("08:10"))
    assert world.tick(at("08:11")) == 1  # the imperative OR fires on the event


NY = "America/New_York"


@pytest.mark.parametrize(
    ("leaf", "day", "expected"),
    [
        # fall back: 01:30 happens at 05:30 UTC (EDT) and again at 06:30 UTC (EST)
        (Cron("30 1 * * *", timezone=NY), 1, ["05:30", "06:30"]),
        (Cron("30 1 * * *", timezone=NY, repeated="first"), 1, ["05:30"]),
        # spring forward: 02:00 jumps to 03:00, so 02:30 never happens
        (Cron("30 2 * * *", timezone=NY), 8, []),
        (Cron("30 2 * * *", timezone=NY, repeated="first"), 8, []),
        (Cron("30 2 * * *", timezone=NY, missing="shift"), 8, ["07:00"]),  # 03:00 EDT
    ],
)
def test_dst_policy_per_time_trigger(
    world: World, leaf: Cron, day: int, expected: list[str]
) -> None:
    month = 11 if day == 1 else 3
    start = datetime(2026, month, day, 3, 0, tzinfo=UTC)
    world.define(leaf)
    world.t.sync_schedules(now=start)  # type: ignore[union-attr]
    for quarter in range(1, 32):  # ticks every 15 minutes until 10:45 UTC
        world.tick(start + timedelta(minutes=15 * quarter))
        if quarter == 12:
            world.restart()
    fired = [f.strftime("%H:%M") for f in world.fired()]
    assert fired == expected


def test_pause_ignores_events_and_resume_has_no_backlog(world: World) -> None:
    world.define(AnyOf(T1(), TableUpdated(world.tables[0])))
    t = world.t
    assert t is not None
    t.sync_schedules(now=T0)
    t.schedules.pause(SID, now=at("08:05"))
    world.event(0, at("08:10"))
    assert world.tick(NINE) == 0  # paused: neither the event nor 09:00
    t.schedules.resume(SID, now=at("09:30"))
    world.restart()
    assert world.tick(at("09:31")) == 0  # the pause's instant and event are not replayed
    world.event(0, at("09:40"))
    assert world.tick(at("09:41")) == 1
    assert world.fired() == [at("09:40")]


def test_a_new_tree_at_sync_resets_the_latches(world: World) -> None:
    e1, e2 = TableUpdated(world.tables[0]), TableUpdated(world.tables[1])
    world.define(AllOf(e1, e2))
    t = world.t
    assert t is not None
    t.sync_schedules(now=T0)
    world.event(0, at("08:10"))
    world.tick(at("08:11"))
    t.workflows.clear()
    world.define(AllOf(e2, e1))
    assert t.sync_schedules(now=at("08:20"))["rescheduled"] == [SID]
    world.event(1, at("08:30"))
    assert world.tick(at("08:31")) == 0  # the 08:10 latch did not survive the new tree
    view = t.schedules.get(SID, now=at("08:32"))
    assert [leaf["latched_since"] for leaf in view["trigger"]["tree"]["all"]] == [at("08:30"), None]


def test_writes_nobody_listens_to_leave_no_event(world: World) -> None:
    from tocsin.store import trigger_events as store_events

    world.define(AnyOf(TableUpdated(world.tables[0])))
    t = world.t
    assert t is not None
    world.event(1, at("07:00"))  # before the schedule exists: nobody listens yet
    t.sync_schedules(now=T0)
    world.event(1, at("08:10"))  # the other table
    with t.store.read() as tx:
        assert store_events.count_events(tx) == 0
    world.event(0, at("08:20"))
    with t.store.read() as tx:
        assert store_events.count_events(tx) == 1
    assert world.tick(at("08:21")) == 1
    with t.store.read() as tx:
        assert store_events.count_events(tx) == 0


def test_listening_is_exact_even_with_like_wildcards_in_ids(world: World) -> None:
    from tocsin import WorkflowSucceeded
    from tocsin.core.schedules.tree import subscription_keys, to_json
    from tocsin.store import trigger_events as store_events

    tree = AnyOf(WorkflowSucceeded("my_wf"), WorkflowSucceeded("100%"))
    assert subscription_keys(to_json(tree)) == (
        " workflow_succeeded:100% workflow_succeeded:my_wf "
    )
    world.define(tree)
    t = world.t
    assert t is not None
    from tocsin.store import schedules as store_schedules

    with t.store.begin() as tx:
        store_schedules.insert_schedule(
            tx,
            values={
                "id": SID, "workflow_id": "watch", "source": "imperative", "cron": "",
                "timezone": "UTC", "overlap": "allow", "input_data": None, "initial_state": None,
                "request_context": None, "metadata": None, "paused_at": None, "next_fire_at": None,
                "last_fire_id": None, "trigger_tree": to_json(tree), "latches": None,
                "evaluated_at": T0, "created_at": T0, "updated_at": T0,
            },
        )  # fmt: skip
        events = [("workflow_succeeded", s) for s in ("myXwf", "100", "1000", "my_wf", "100%")]
        store_events.insert_events(tx, events=events, now=T0)
    with t.store.read() as tx:
        assert store_events.count_events(tx) == 2  # only my_wf and 100%
    # the batch form (a batch of finished runs): the same exact matching, each its own instant
    later = [(k, s, T0 + timedelta(minutes=i)) for i, (k, s) in enumerate(events)]
    with t.store.begin() as tx:
        store_events.insert_events_at(tx, events=later)
    with t.store.begin() as tx:
        got = store_events.claim_events(tx, limit=10)
    assert [(e.subject, e.occurred_at) for e in got[2:]] == [
        ("my_wf", T0 + timedelta(minutes=3)),
        ("100%", T0 + timedelta(minutes=4)),
    ]


def test_a_stored_tree_that_no_longer_reads_fails_once_and_stops(world: World) -> None:
    from tocsin.store import schedules as store_schedules

    t = world.t
    assert t is not None
    world.define(T1())
    broken = {"all": [{"cron": "0 9 * * *", "timezone": "Gone/Zone"}]}
    with t.store.begin() as tx:
        store_schedules.insert_schedule(
            tx,
            values={
                "id": SID, "workflow_id": "watch", "source": "imperative", "cron": "",
                "timezone": "UTC", "overlap": "allow", "input_data": None, "initial_state": None,
                "request_context": None, "metadata": None, "paused_at": None, "next_fire_at": T0,
                "last_fire_id": None, "trigger_tree": broken, "latches": None,
                "evaluated_at": T0, "created_at": T0, "updated_at": T0,
            },
        )  # fmt: skip
    assert world.tick(NINE) == 0  # the tick goes on
    (fire,) = t.schedules.fires(SID)["items"]
    assert fire["publish_status"] == "publish_failed" and "Gone/Zone" in fire["error"]
    with t.store.read() as tx:
        row = store_schedules.get_schedule(tx, schedule_id=SID)
        assert row is not None and row.next_fire_at is None
    assert world.tick(at("09:00", day=1)) == 0
    assert len(t.schedules.fires(SID)["items"]) == 1
    view = t.schedules.get(SID)  # still readable, and so is the list
    assert view["trigger"] is None and "Gone/Zone" in view["description"]
    assert t.schedules.list()["total"] == 1
