"""What a workflow schedule fires and skips at ``now``: one pure decision (SPEC §12, §13).

A schedule's timing is a trigger tree (:mod:`tocsin.core.schedules.tree`): a plain cron schedule is
the tree of one ``Cron`` leaf under the strict DST policy (:func:`cron_trigger`,
``repeated="first"``: a repeated wall time fires once, a nonexistent one never). So a plain cron
schedule and a tree with one such leaf decide identically, by construction.

The instants the schedule *could fire* at are the tree's time instants at which it would be
satisfied had every event leaf occurred (every instant of a plain cron). Those in
``(evaluated_at, now]`` (a plain schedule: ``next_due_at .. now``) are *owed*; then:

- paused (the decision taken at resume): nothing fires, every owed instant is skipped
  (``paused``); events are not latched;
- ``overlap="skip"`` with a run still pending or running (``active_run``): nothing fires, every
  owed instant is skipped (``active_run``); events are latched and held;
- ``catch_up="latest"`` (default; SPEC §5.3's coalescing): the latest owed instant is looked
  at, the older owed instants are skipped (``coalesced``);
- ``catch_up="none"``: the latest owed instant is looked at only when it is the only one owed
  (the schedule is on time); after downtime every owed instant is skipped (``coalesced``);
- ``catch_up="all"``: the newest ``max_catch_up`` owed instants are looked at, oldest first; the
  older ones are skipped (``coalesced``); ``backlog="page"`` (a lane) looks at the *oldest* ones
  and leaves the newer owed (``next_due_at <= now``: the caller decides again).

The looked-at instants and the events are then merged in time order, an event before an instant
at the same time: an event latches its leaves; the tree fires where it is satisfied (a fire
resets every latch); a looked-at instant where it is not, but would be had its events occurred,
is skipped ``compound_unsatisfied`` (only a tree with event leaves). Under ``overlap="skip"`` the
first fire's run is active: later events latch and hold, later instants are skipped
``active_run`` (``catch_up="all"`` fires each instant it looks at, as a plain schedule does).
Latches that satisfy the tree from an earlier decision that could not fire (held) fire at
``now``. A decision that fires records the spring-forward gaps it passed whose wall times a time
leaf (``missing="skip"``) matches (``dst_gap``).

Skips name ``(target, id)``. A ``windowed`` schedule (a lane) gives each fire its data window
(:func:`tocsin.core.schedules.catch_up.windowed`: under ``catch_up="latest"`` the merged one).

Pure: no I/O, no clock; memoised per tree (instants are pure functions of the tree).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from functools import lru_cache
from typing import Literal

from tocsin.core.contract.lane import Window
from tocsin.core.schedules import catch_up, skips
from tocsin.core.schedules.skips import SkipRange
from tocsin.core.schedules.timeline import Timeline, shifted, timeline
from tocsin.core.schedules.tree import Cron, Node
from tocsin.core.schedules.tree_eval import Occurrence, match_events, satisfied, waits_for_events
from tocsin.core.time import cron

CatchUp = Literal["latest", "none", "all"]
Overlap = Literal["skip", "allow"]
Backlog = Literal["coalesce", "page"]
CATCH_UP: tuple[CatchUp, ...] = ("latest", "none", "all")
DEFAULT_MAX_CATCH_UP = 100
MAX_MAX_CATCH_UP = 10_000
#: the DST policy of plain cron schedules (and of the strict dialect): a repeated wall time
#: fires once, at its first occurrence
CRON_REPEATED: cron.Repeated = "first"
#: how often a fire held back by an active run is looked at again
HELD_RECHECK = timedelta(seconds=5)
_TICK = timedelta(microseconds=1)
_MEMO_SIZE = 4096

Seen = Sequence[tuple[str, str, datetime]]  # (kind, subject, occurred_at)


@dataclass(frozen=True, slots=True)
class Timing:
    """A schedule's timing and policies (its spec; the state is :class:`State`): a workflow
    schedule's by default, a lane's by :func:`tocsin.core.schedules.lane.lane_timing`."""

    id: str
    trigger: Node
    catch_up: str = "latest"
    max_catch_up: int = DEFAULT_MAX_CATCH_UP
    overlap: str = "skip"
    paused: bool = False
    target: str = skips.SCHEDULE
    windowed: bool = False
    backlog: Backlog = "coalesce"


@dataclass(frozen=True, slots=True)
class State:
    """Where a schedule stands: ``next_due_at`` (when it is next worth deciding), the instant up
    to which its instants were consumed (``evaluated_at``; None: the owed instants start at
    ``next_due_at``, a plain schedule's row), its event latches (leaf path → first occurrence)
    and whether a run it fired is still pending or running."""

    next_due_at: datetime | None
    evaluated_at: datetime | None = None
    latches: Mapping[str, datetime] = field(default_factory=dict)
    active_run: bool = False


@dataclass(frozen=True, slots=True)
class Decision:
    """The instants to fire (in decision order), the skipped ranges, and the state after;
    ``windows``: each fire's data window (a ``windowed`` schedule's, else empty)."""

    fires: tuple[datetime, ...]
    skips: tuple[SkipRange, ...]
    next_due_at: datetime | None
    state: State
    windows: tuple[Window, ...] = ()

    def reasons(self) -> list[str]:
        return [s.reason for s in self.skips]


def cron_trigger(expression: str, timezone: str) -> Cron:
    """A plain cron schedule's tree: one ``Cron`` leaf under the strict DST policy (raises
    :class:`~tocsin.errors.ConfigError` for an expression or zone that does not read)."""
    return _cron_leaf(expression, timezone)


@lru_cache(maxsize=_MEMO_SIZE)
def _cron_leaf(expression: str, timezone: str) -> Cron:
    return Cron(expression, timezone=timezone, repeated=CRON_REPEATED)


def decide(schedule: Timing, state: State, events: Seen, now: datetime) -> Decision:
    """The decision at ``now``; ``events``: the pending ``(kind, subject, occurred_at)``."""
    decision = _decide(schedule, state, events, now)
    if not schedule.windowed:  # a windowed schedule is plain: its owed instants start at next_due
        return decision
    line = timeline(schedule.trigger)
    fires, windows = catch_up.windowed(line, decision.fires, state.next_due_at)
    return replace(decision, fires=fires, windows=windows)


def _decide(schedule: Timing, state: State, events: Seen, now: datetime) -> Decision:
    line = timeline(schedule.trigger)
    if state.evaluated_at is None:
        cursor = None if state.next_due_at is None else shifted(state.next_due_at, -_TICK)
        first = state.next_due_at
    else:
        cursor = state.evaluated_at
        first = line.next_could(cursor)
    owed = first is not None and first <= now
    latest = max(line.latest_could(now) or first, first) if owed and first is not None else None
    busy = schedule.overlap == "skip" and state.active_run
    if first == latest and not (schedule.paused or busy or line.events or state.latches):
        return _on_time(line, schedule, state, first, now)  # one instant owed, or none
    out: list[SkipRange] = []
    sid, kind = schedule.id, schedule.target
    if schedule.paused:
        if first is not None and latest is not None:
            out += line.ranges(sid, skips.PAUSED, first, shifted(latest, _TICK), kind)
        after = _new_state(line, state, state.latches, now)
        return Decision((), tuple(out), after.next_due_at, after)
    looked: list[datetime] = []
    if first is not None and latest is not None and cursor is not None:
        if busy:
            out += line.ranges(sid, skips.ACTIVE_RUN, first, shifted(latest, _TICK), kind)
        elif schedule.catch_up == "none" and first < latest:
            out += line.ranges(sid, skips.COALESCED, first, shifted(latest, _TICK), kind)
        else:
            looked = catch_up.looked(
                line, schedule.catch_up, schedule.max_catch_up, schedule.backlog, first, latest
            )
            out += catch_up.coalesced(line, (kind, sid), schedule.backlog, first, looked)
    occurrences = match_events(line.tree, events) if line.events else []
    walk = _walk(line, schedule, state, occurrences, looked, now, busy=busy)
    out += [_one(schedule, skips.ACTIVE_RUN, at, line) for at in walk.held]
    out += [_one(schedule, skips.COMPOUND_UNSATISFIED, at, line) for at in walk.unsatisfied]
    paged = looked[-1] if looked and latest is not None and looked[-1] < latest else None
    if walk.fires and first is not None and latest is not None:
        out += line.gaps(sid, first, paged or latest, kind)
    after = _new_state(line, state, walk.latches, now)
    if paged is not None:  # backlog="page": the newer owed instants are decided next
        after = replace(after, next_due_at=line.next_could(paged))
    return Decision(tuple(walk.fires), tuple(out), after.next_due_at, after)


def next_due(trigger: Node, latches: Mapping[str, datetime], now: datetime) -> datetime | None:
    """When a schedule is next worth deciding: its tree's next instant after ``now``, or sooner,
    in :data:`HELD_RECHECK`, while its latches already satisfy it (a fire held back by an active
    run under ``overlap="skip"``: it fires at the first decision after the run ended)."""
    return _next_due(timeline(trigger), latches, now)


def _next_due(line: Timeline, latches: Mapping[str, datetime], now: datetime) -> datetime | None:
    following = line.next(now)
    if latches and satisfied(line.tree, latches, ()):
        recheck = shifted(now, HELD_RECHECK)
        return recheck if following is None else min(recheck, following)
    return following


def _new_state(
    line: Timeline, state: State, latches: Mapping[str, datetime], now: datetime
) -> State:
    evaluated = None if state.evaluated_at is None else max(now, state.evaluated_at)
    following = _next_due(line, latches, now)
    return State(following, evaluated, dict(latches), state.active_run)


def _on_time(
    line: Timeline, schedule: Timing, state: State, owed: datetime | None, now: datetime
) -> Decision:
    """A time-only tree owing one instant (it fires) or none: nothing to coalesce or walk."""
    following = line.next(now)
    evaluated = None if state.evaluated_at is None else max(now, state.evaluated_at)
    after = State(following, evaluated, {}, state.active_run)
    if owed is None:
        return Decision((), (), following, after)
    gaps = line.gaps(schedule.id, owed, owed, schedule.target) if line.gapped else ()
    return Decision((owed,), tuple(gaps), following, after)


@dataclass(slots=True)
class _Walk:
    fires: list[datetime] = field(default_factory=list)
    latches: dict[str, datetime] = field(default_factory=dict)
    unsatisfied: list[datetime] = field(default_factory=list)
    held: list[datetime] = field(default_factory=list)  # could fire, a run was active
    events_open: bool = True  # an event that satisfies the tree fires
    times_open: bool = True  # a looked-at instant that satisfies the tree fires
    closes: tuple[bool, bool] = (False, False)  # (events, times) closed by a fire

    def fire(self, at: datetime) -> None:
        self.fires.append(at)
        self.latches.clear()
        self.events_open = self.events_open and not self.closes[0]
        self.times_open = self.times_open and not self.closes[1]


def _walk(
    line: Timeline,
    schedule: Timing,
    state: State,
    occurrences: Sequence[Occurrence],
    looked: list[datetime],
    now: datetime,
    *,
    busy: bool,
) -> _Walk:
    """Merge events and looked-at instants in time order (an event first at a tie)."""
    skip = schedule.overlap == "skip"
    once = skip and schedule.catch_up != "all"  # a fire's run is active: no second instant
    walk = _Walk(latches=dict(state.latches), closes=(skip, once))
    walk.events_open = walk.times_open = not busy
    if not line.events and not walk.latches:  # time only (a plain cron): each instant fires
        fired = looked[:1] if once else looked
        walk.fires, walk.held = list(fired), looked[len(fired) :]
        return walk
    tree = line.tree
    if walk.events_open and walk.latches and satisfied(tree, walk.latches, ()):
        walk.fire(now)  # held from an earlier decision that could not fire
    steps = [(o.at, 0, o.paths) for o in occurrences] + [(at, 1, ()) for at in looked]
    for at, kind, paths in sorted(steps, key=lambda s: (s[0], s[1])):
        if kind == 0:
            for path in paths:
                walk.latches.setdefault(path, at)
            if walk.events_open and satisfied(tree, walk.latches, ()):
                walk.fire(at)
            continue
        active = line.active(at)
        if satisfied(tree, walk.latches, active):
            if walk.times_open:
                walk.fire(at)
            else:
                walk.held.append(at)
        elif waits_for_events(tree, walk.latches, active):
            walk.unsatisfied.append(at)
    return walk


def _one(schedule: Timing, reason: str, at: datetime, line: Timeline) -> SkipRange:
    """One instant as a range, mergeable into the range ending at the previous instant."""
    return SkipRange(schedule.target, schedule.id, reason, at, at, 1, after=line.prev_could(at))


__all__ = [
    "CATCH_UP",
    "CRON_REPEATED",
    "DEFAULT_MAX_CATCH_UP",
    "HELD_RECHECK",
    "MAX_MAX_CATCH_UP",
    "Backlog",
    "CatchUp",
    "Decision",
    "Overlap",
    "State",
    "Timing",
    "cron_trigger",
    "decide",
    "next_due",
]
