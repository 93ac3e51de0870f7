"""One decision for every kind of schedule, through the public facade: for random schedules of
every kind — a table's interval, daily and cron triggers, workflow cron schedules, workflow tree
schedules (time and event leaves), lanes (catch-up ``all | latest | none``, some paused) — and
random sequences of table writes and tick instants:

- what ``t.due(at)`` says fires is what ``t.tick(now=at)`` then fires, target by target and
  instant by instant;
- for lanes and plain workflow schedules, that is what ``decide`` says for the state the
  facade shows (``next_fire_at``, pause, catch-up, an active run), page after page;
- ``next_fires`` (a table trigger's, a workflow schedule's, a lane's) lists the instants the tick
  then fires, when ticked at each of them.

Small stores, few examples (a fresh facade per example on one database); both backends.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta
from typing import Any

from engine_support import NOW, clock_trigger, finish_all, runs_of
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from tocsin import AllOf, AnyOf, Cron, Lane, Schedule, TableUpdated, step, workflow
from tocsin.core.schedules.decide import State, Timing, cron_trigger, decide
from tocsin.core.schedules.lane import LaneSchedule
from tocsin.core.time.instants import to_iso
from tocsin.service import Tocsin
from tocsin.settings import Settings

ZONES = st.sampled_from(["UTC", "America/New_York", "Asia/Taipei"])
CRONS = st.sampled_from(["*/15 * * * *", "0 * * * *", "0 9 * * *", "30 2 * * 1-5"])
CLOCKS = st.one_of(
    st.sampled_from([900, 3600, 86400]).map(lambda s: {"type": "interval", "every_seconds": s}),
    st.builds(
        lambda h, m, tz: {"type": "daily", "at": f"{h:02d}:{m:02d}", "timezone": tz},
        st.integers(0, 23),
        st.sampled_from([0, 30]),
        ZONES,
    ),
    CRONS.map(lambda e: {"type": "cron", "expression": e}),
)
PLAIN = st.fixed_dictionaries(
    {
        "cron": CRONS,
        "timezone": ZONES,
        "overlap": st.sampled_from(["skip", "allow"]),
        "catch_up": st.sampled_from(["latest", "none", "all"]),
        "max_catch_up": st.integers(1, 4),
        "paused": st.booleans(),
    }
)
TREES = st.sampled_from(["any", "all", "one"])
LANES = st.fixed_dictionaries(
    {
        "cron": CRONS,
        "timezone": ZONES,
        "catch_up": st.sampled_from(["all", "latest", "none"]),
        "paused": st.sampled_from([None, None, "resume", "stay"]),
    }
)
#: the ticks after the setup's: minutes after the previous one, and table writes before it
STEPS = st.lists(
    st.tuples(st.integers(1, 36 * 60), st.lists(st.integers(0, 100), max_size=2)),
    min_size=1,
    max_size=3,
)


def _noop(data: dict[str, Any], ctx: Any) -> dict[str, Any]:
    return data


def _source(window: Any, ctx: Any) -> list[Any]:
    return []


def _lane(lane_id: str, spec: dict[str, Any]) -> Lane:
    return Lane(
        id=lane_id,
        schedule=Schedule(cron=spec["cron"], timezone=spec["timezone"]),
        policy_version="v1",
        source=_source,
        select=lambda c: True,
        handler=lambda accepted, contract: None,
        catch_up=spec["catch_up"],
    )


def _tree(kind: str, table_id: str) -> Any:
    leaf = Cron("0 * * * *", timezone="UTC")
    if kind == "one":
        return Cron("*/15 * * * *", timezone="UTC")
    event = TableUpdated(table_id)
    return AnyOf(leaf, event) if kind == "any" else AllOf(leaf, event)


@contextmanager
def _facade(url: str, base: Settings, lanes: list[Lane]) -> Iterator[Tocsin]:
    t = Tocsin.open(url, settings=base, lanes=lanes)
    try:
        yield t
    finally:
        t.close()


class World:
    """One example's schedules of every kind on a fresh facade."""

    def __init__(self, t: Tocsin, lanes: dict[str, dict[str, Any]]) -> None:
        self.t = t
        self.lanes = lanes
        self.tables: list[str] = []  # the table of clock triggers
        self.events = ""  # the table whose writes are the trees' events
        self.plain: dict[str, dict[str, Any]] = {}
        self.trees: list[str] = []

    # --- what fired, by target: (kind, id) → instants -----------------------------------

    def fired(self) -> dict[tuple[str, ...], list[str]]:
        out: dict[tuple[str, ...], list[str]] = {}
        for table_id in self.tables:
            for run in runs_of(self.t, table_id):
                key = ("trigger", table_id, run["trigger_id"])
                out.setdefault(key, []).append(_iso(run["scheduled_for"]))
        ours = set(self.plain) | set(self.trees)
        for run in self.t.workflow_runs(workflow_id="dry", limit=500)["items"]:
            if run["schedule_id"] in ours:
                key = ("schedule", run["schedule_id"])
                out.setdefault(key, []).append(_iso(run["scheduled_for"]))
        for lane_id in self.lanes:
            for item in self.t.lanes.fires(lane_id, limit=500)["items"]:
                if item["kind"] == "fire":
                    out.setdefault(("lane", lane_id), []).append(_iso(item["scheduled_for"]))
        return {k: sorted(v) for k, v in out.items()}

    def tick(self, at: datetime) -> dict[tuple[str, ...], list[str]]:
        """Tick at ``at``: the instants it fired, by target."""
        before = self.fired()
        self.t.tick(now=at)
        after = self.fired()
        new = {k: sorted(set(v) - set(before.get(k, []))) for k, v in after.items()}
        return {k: v for k, v in new.items() if v}

    # --- what the decision says ---------------------------------------------------------

    def busy(self) -> set[str]:
        runs = self.t.workflow_runs(workflow_id="dry", limit=500)["items"]
        return {r["schedule_id"] for r in runs if r["status"] in ("pending", "running")}

    def decided(self, at: datetime) -> dict[tuple[str, ...], list[str]]:
        """What ``decide`` fires at ``at`` for the lanes and plain schedules, from the state the
        facade shows, paged as the tick pages."""
        out: dict[tuple[str, ...], list[str]] = {}
        for lane_id, spec in self.lanes.items():
            view = self.t.lanes.get(lane_id)
            if view["paused"]:
                continue
            timing = LaneSchedule(lane_id, spec["cron"], spec["timezone"], spec["catch_up"])
            following, fires = view["next_fire_at"], []
            while following is not None and following <= at:
                decision = decide(timing.timing(), State(following), (), at)
                fires += decision.fires
                following = decision.next_due_at
            if fires:
                out[("lane", lane_id)] = sorted(_iso(f) for f in fires)
        busy = self.busy()
        for sid in self.plain:
            row = self.t.schedules.get(sid)
            if row["paused"] or row["next_fire_at"] is None or row["next_fire_at"] > at:
                continue
            timing = Timing(
                sid,
                cron_trigger(row["cron"], row["timezone"]),
                catch_up=row["catch_up"],
                max_catch_up=row["max_catch_up"],
                overlap=row["overlap"],
            )
            state = State(row["next_fire_at"], active_run=sid in busy)
            fires = decide(timing, state, (), at).fires
            if fires:
                out[("schedule", sid)] = sorted(_iso(f) for f in fires)
        return out


def _iso(value: Any) -> str:
    return to_iso(value) if isinstance(value, datetime) else str(value)


def _promised(due: dict[str, Any]) -> dict[tuple[str, ...], tuple[int, list[str]]]:
    out: dict[tuple[str, ...], tuple[int, list[str]]] = {}
    for entry in due["fires"]:
        if entry["kind"] == "trigger":
            key: tuple[str, ...] = ("trigger", entry["table_id"], entry["trigger_id"])
        elif entry["kind"] == "schedule":
            key = ("schedule", entry["schedule_id"])
        else:
            key = ("lane", entry["lane_id"])
        out[key] = (entry["runs"], sorted(entry.get("scheduled_for", [])))
    return out


def _check_step(world: World, at: datetime) -> None:
    due = world.t.due(at=at)
    promised = _promised(due)
    decided = world.decided(at)
    made = world.tick(at)
    ours = {k for k in made if k[0] != "trigger" or k[1] in world.tables}
    assert {k: len(made[k]) for k in ours} == {k: n for k, (n, _) in promised.items()}, due
    for key, (_, instants) in promised.items():
        assert set(instants) <= set(made[key]), (key, instants, made[key])
    for key, instants in decided.items():
        assert made.get(key) == instants, (key, instants, made.get(key))
    for key in made:
        if key[0] == "lane" or key[1] in world.plain:
            assert key in decided, (key, made[key])
    for table_id in world.tables:
        finish_all(world.t, table_id, "done", now=at)


def _next_fires(world: World, at: datetime) -> dict[tuple[str, ...], list[dict[str, Any]]]:
    """The next fires of the table triggers, the unpaused plain schedules with
    ``overlap="allow"`` and the lanes, from ``at``."""
    t, out = world.t, {}
    for table_id in world.tables:
        for trigger in t.get_triggers(table_id):
            got = t.next_fires(table_id, trigger["id"], n=3, now=at)["items"]
            out[("trigger", table_id, trigger["id"])] = got
    for sid, spec in world.plain.items():
        if spec["overlap"] == "allow":
            out[("schedule", sid)] = t.schedules.next_fires(sid, n=3, now=at)["items"]
    for lane_id in world.lanes:
        out[("lane", lane_id)] = t.lanes.next_fires(lane_id, n=3, now=at)["items"]
    return {k: v for k, v in out.items() if v}


def _check_next_fires(world: World, at: datetime) -> None:
    """Ticked at each listed instant in turn (up to the earliest last one listed), each tick
    fires exactly the instants listed at it; a tick at ``at`` first, those listed ``due``."""
    listed = _next_fires(world, at)
    due = {k: [i["at"] for i in v if i["status"] == "due"] for k, v in listed.items()}
    later = {k: [i["at"] for i in v if i["status"] == "scheduled"] for k, v in listed.items()}
    if not listed or not all(later.values()):
        return
    horizon = min(v[-1] for v in later.values())
    instants = sorted({i for v in later.values() for i in v if i <= horizon})
    steps = [(at, {k: v for k, v in due.items() if v})] if any(due.values()) else []
    for instant in instants:
        when = datetime.fromisoformat(instant).replace(tzinfo=at.tzinfo)
        steps.append((when, {k: [instant] for k, v in later.items() if instant in v}))
    for when, expected in steps:
        made = world.tick(when)
        assert {k: v for k, v in made.items() if k in listed} == expected, (when, listed)
        for table_id in world.tables:
            finish_all(world.t, table_id, "done", now=when)


@settings(
    max_examples=4,
    phases=[Phase.explicit, Phase.generate],  # reported as drawn: shrinking a store takes minutes
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
def test_due_the_tick_decide_and_next_fires_agree_for_every_kind(
    store_url: str, settings: Settings, data: st.DataObject
) -> None:
    clocks = data.draw(st.lists(CLOCKS, max_size=2), label="table triggers")
    plain = data.draw(st.lists(PLAIN, max_size=2), label="workflow schedules")
    trees = data.draw(st.lists(TREES, max_size=2), label="tree schedules")
    lane_specs = data.draw(st.lists(LANES, min_size=1, max_size=2), label="lanes")
    steps = data.draw(STEPS, label="steps")
    tag = uuid.uuid4().hex[:8]
    lanes = {f"lane-{tag}-{k}": spec for k, spec in enumerate(lane_specs)}
    definitions = [_lane(lane_id, spec) for lane_id, spec in lanes.items()]
    with _facade(store_url, settings, definitions) as t:
        world = World(t, lanes)
        t.register_workflows([workflow(id="dry").then(step(id="noop")(_noop)).commit()])
        scope = str(uuid.uuid4())
        world.events = t.create_table("chatroom", scope, "Events", {"N": "number"}, now=NOW)["id"]
        if clocks:
            table = t.create_table("chatroom", scope, "Clocks", {"N": "number"}, now=NOW)
            world.tables.append(table["id"])
            triggers = [clock_trigger(c, name=f"clock{k}") for k, c in enumerate(clocks)]
            t.set_triggers(table["id"], triggers, now=NOW)
        for spec in plain:
            made = t.schedules.create(
                workflow_id="dry",
                cron=spec["cron"],
                timezone=spec["timezone"],
                overlap=spec["overlap"],
                catch_up=spec["catch_up"],
                max_catch_up=spec["max_catch_up"],
                now=NOW,
            )
            world.plain[made["id"]] = spec
            if spec["paused"]:
                t.schedules.pause(made["id"], now=NOW)
        for kind in trees:
            tree = _tree(kind, world.events)
            made = t.schedules.create(workflow_id="dry", trigger=tree, timezone="UTC", now=NOW)
            world.trees.append(made["id"])
        world.tick(NOW)  # the lanes' rows are anchored here
        for lane_id, spec in lanes.items():
            if spec["paused"] is not None:
                t.lanes.pause(lane_id, now=NOW)
        try:
            at = NOW
            for gap, writes in steps:
                following = at + timedelta(minutes=gap)
                for offset in sorted(writes):
                    when = at + (following - at) * offset / 100
                    t.insert_record(world.events, {"N": offset}, now=when)
                at = following
                _check_step(world, at)
            for lane_id, spec in lanes.items():
                if spec["paused"] == "resume":
                    t.lanes.resume(lane_id, now=at)
            _check_next_fires(world, at)
        finally:
            for table_id in [*world.tables, world.events]:
                t.trash_table(table_id, now=NOW)
            for sid in [*world.plain, *world.trees]:
                t.schedules.delete(sid)
