"""What a workflow schedule fires and skips at ``now``: one pure decision (SPEC §12, §13).

A schedule's timing is a trigger tree (:mod:`tocsin.core.compound`): a plain cron schedule is
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
  older ones are skipped (``coalesced``).

The looked-at instants and the events are then merged in time order, an event before an instant
at the same time: an event latches its leaves; the tree fires where it is satisfied (a fire
resets every latch); a looked-at instant where it is not, but would be had its events occurred,
is skipped ``compound_unsatisfied`` (only a tree with event leaves). Under ``overlap="skip"`` the
first fire's run is active: later events latch and hold, later instants are skipped
``active_run`` (``catch_up="all"`` fires each instant it looks at, as a plain schedule does).
Latches that satisfy the tree from an earlier decision that could not fire (held) fire at
``now``. A decision that fires records the spring-forward gaps it passed whose wall times a time
leaf (``missing="skip"``) matches (``dst_gap``).

Pure: no I/O, no clock; memoised per tree (instants are pure functions of the tree).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import lru_cache
from itertools import pairwise
from typing import Literal

from tocsin.core import cron, skips
from tocsin.core.compound import Cron, Event, Node, leaves
from tocsin.core.compound_eval import (
    fires_at,
    latest_in,
    match_events,
    next_of,
    satisfied,
    waits_for_events,
)
from tocsin.core.cron.timeline import Timeline as ZoneTimeline
from tocsin.core.cron.timeline import resolve
from tocsin.core.skips import SkipRange

CatchUp = Literal["latest", "none", "all"]
Overlap = Literal["skip", "allow"]
CATCH_UP: tuple[CatchUp, ...] = ("latest", "none", "all")
DEFAULT_MAX_CATCH_UP = 100
MAX_MAX_CATCH_UP = 10_000
#: the DST policy of plain cron schedules (and of the strict dialect): a repeated wall time
#: fires once, at its first occurrence
CRON_REPEATED: cron.Repeated = "first"
#: how often a fire held back by an active run is looked at again
HELD_RECHECK = timedelta(seconds=5)
#: tree instants walked to find one the tree could fire at (``AND(T1, T2)``: their coincidence)
SEARCH_STEPS = 512
_TICK = timedelta(microseconds=1)
_MEMO_SIZE = 4096

Seen = Sequence[tuple[str, str, datetime]]  # (kind, subject, occurred_at)


@dataclass(frozen=True, slots=True)
class Schedule:
    """A workflow schedule's timing and policies (its spec; the state is :class:`State`)."""

    id: str
    trigger: Node
    catch_up: str = "latest"
    max_catch_up: int = DEFAULT_MAX_CATCH_UP
    overlap: str = "skip"
    paused: bool = False


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
    """The instants to fire (in decision order), the skipped ranges, and the state after."""

    fires: tuple[datetime, ...]
    skips: tuple[SkipRange, ...]
    next_due_at: datetime | None
    state: State

    def reasons(self) -> list[str]:
        return [s.reason for s in self.skips]


def cron_trigger(expression: str, timezone: str) -> Cron:
    """A plain cron schedule's tree: one ``Cron`` leaf under the strict DST policy (raises
    :class:`~tocsin.errors.ConfigError` for an expression or zone that does not read)."""
    return _cron_leaf(expression, timezone)


@lru_cache(maxsize=_MEMO_SIZE)
def _cron_leaf(expression: str, timezone: str) -> Cron:
    return Cron(expression, timezone=timezone, repeated=CRON_REPEATED)


def decide(schedule: Schedule, state: State, events: Seen, now: datetime) -> Decision:
    """The decision at ``now``; ``events``: the pending ``(kind, subject, occurred_at)``."""
    line = timeline(schedule.trigger)
    if state.evaluated_at is None:
        cursor = None if state.next_due_at is None else state.next_due_at - _TICK
        first = state.next_due_at
    else:
        cursor = state.evaluated_at
        first = line.next_could(cursor)
    owed = first is not None and first <= now
    latest = max(line.latest_could(now) or first, first) if owed and first is not None else None
    out: list[SkipRange] = []
    if schedule.paused:
        if first is not None and latest is not None:
            out += line.ranges(schedule.id, skips.PAUSED, first, latest + _TICK)
        after = _new_state(line, state, state.latches, now)
        return Decision((), tuple(out), after.next_due_at, after)
    busy = schedule.overlap == "skip" and state.active_run
    looked: list[datetime] = []
    if first is not None and latest is not None and cursor is not None:
        if busy:
            out += line.ranges(schedule.id, skips.ACTIVE_RUN, first, latest + _TICK)
        elif schedule.catch_up == "none" and first < latest:
            out += line.ranges(schedule.id, skips.COALESCED, first, latest + _TICK)
        else:
            looked = _looked(line, schedule, first, latest)
            out += _coalesced(line, schedule.id, first, looked)
    occurrences = match_events(line.tree, events) if line.events else []
    walk = _walk(line, schedule, state, occurrences, looked, now, busy=busy)
    out += [_one(schedule.id, skips.ACTIVE_RUN, at, line) for at in walk.held]
    out += [_one(schedule.id, skips.COMPOUND_UNSATISFIED, at, line) for at in walk.unsatisfied]
    if walk.fires and first is not None and latest is not None:
        out += line.gaps(schedule.id, first, latest)
    after = _new_state(line, state, walk.latches, now)
    return Decision(tuple(walk.fires), tuple(out), after.next_due_at, after)


def next_due(trigger: Node, latches: Mapping[str, datetime], now: datetime) -> datetime | None:
    """When a schedule is next worth deciding: its tree's next instant after ``now``, or sooner,
    in :data:`HELD_RECHECK`, while its latches already satisfy it (a fire held back by an active
    run under ``overlap="skip"``: it fires at the first decision after the run ended)."""
    line = timeline(trigger)
    following = line.next(now)
    if latches and satisfied(line.tree, latches, ()):
        recheck = now + HELD_RECHECK
        return recheck if following is None else min(recheck, following)
    return following


def _new_state(
    line: Timeline, state: State, latches: Mapping[str, datetime], now: datetime
) -> State:
    evaluated = None if state.evaluated_at is None else max(now, state.evaluated_at)
    following = next_due(line.tree, latches, now)
    return State(following, evaluated, dict(latches), state.active_run)


def _looked(
    line: Timeline, schedule: Schedule, first: datetime, latest: datetime
) -> list[datetime]:
    """The owed instants the decision looks at (the others are coalesced), oldest first."""
    if schedule.catch_up == "all":
        found = [latest]
        limit = max(1, int(schedule.max_catch_up))
        while len(found) < limit:
            before = line.prev_could(found[0])
            if before is None or before < first:
                break
            found.insert(0, before)
        return found
    return [latest]


def _coalesced(
    line: Timeline, sid: str, first: datetime, looked: list[datetime]
) -> list[SkipRange]:
    """The owed instants before and between the looked-at ones, as ``coalesced`` ranges."""
    out = line.ranges(sid, skips.COALESCED, first, looked[0])
    for before, at in pairwise(looked):
        out += line.ranges(sid, skips.COALESCED, line.next_could(before) or at, at)
    return out


@dataclass(slots=True)
class _Walk:
    fires: list[datetime] = field(default_factory=list)
    latches: dict[str, datetime] = field(default_factory=dict)
    unsatisfied: list[datetime] = field(default_factory=list)
    held: list[datetime] = field(default_factory=list)  # could fire, a run was active


def _walk(
    line: Timeline,
    schedule: Schedule,
    state: State,
    occurrences: Sequence[object],
    looked: list[datetime],
    now: datetime,
    *,
    busy: bool,
) -> _Walk:
    """Merge events and looked-at instants in time order (an event first at a tie)."""
    walk = _Walk(latches=dict(state.latches))
    if not line.events and not walk.latches:  # time only (a plain cron): each instant fires
        if schedule.overlap == "skip" and schedule.catch_up != "all" and len(looked) > 1:
            walk.fires, walk.held = looked[:1], looked[1:]
        else:
            walk.fires = list(looked)
        return walk
    skip = schedule.overlap == "skip"
    events_open, times_open = not busy, not busy
    tree = line.tree

    def fire(at: datetime) -> None:
        nonlocal events_open, times_open
        walk.fires.append(at)
        walk.latches.clear()
        if skip:
            events_open = False
            times_open = schedule.catch_up == "all"

    if events_open and walk.latches and satisfied(tree, walk.latches, ()):
        fire(now)  # held from an earlier decision that could not fire
    steps: list[tuple[datetime, int, tuple[str, ...]]] = [
        (o.at, 0, o.paths)  # type: ignore[attr-defined]
        for o in occurrences
    ]
    steps += [(at, 1, ()) for at in looked]
    for at, kind, paths in sorted(steps, key=lambda s: (s[0], s[1])):
        if kind == 0:
            for path in paths:
                walk.latches.setdefault(path, at)
            if events_open and satisfied(tree, walk.latches, ()):
                fire(at)
            continue
        active = line.active(at)
        if satisfied(tree, walk.latches, active):
            if times_open:
                fire(at)
            else:
                walk.held.append(at)
        elif waits_for_events(tree, walk.latches, active):
            walk.unsatisfied.append(at)
    return walk


def _one(sid: str, reason: str, at: datetime, line: Timeline) -> SkipRange:
    """One instant as a range, mergeable into the range ending at the previous instant."""
    return SkipRange(skips.SCHEDULE, sid, reason, at, at, 1, after=line.prev_could(at))


# --- the tree's instants ----------------------------------------------------------------------


class Timeline:
    """A tree's time instants, memoised (a tree is shared by every schedule of its timing)."""

    def __init__(self, tree: Node) -> None:
        self.tree = tree
        self.times = [(p, leaf) for p, leaf in leaves(tree) if isinstance(leaf, Cron)]
        self.events = frozenset(p for p, leaf in leaves(tree) if isinstance(leaf, Event))
        self.single = isinstance(tree, Cron)  # every instant could fire
        self._memo: dict[tuple[str, datetime, datetime | None], object] = {}

    def _cached(
        self, key: tuple[str, datetime, datetime | None], make: Callable[[], object]
    ) -> object:
        hit = self._memo.get(key, self)
        if hit is self:
            if len(self._memo) >= _MEMO_SIZE:
                self._memo.clear()
            hit = self._memo[key] = make()
        return hit

    def next(self, after: datetime) -> datetime | None:
        """The first instant of any time leaf strictly after ``after``."""

        def make() -> datetime | None:
            found = [at for _, leaf in self.times if (at := next_of(leaf, after)) is not None]
            return min(found) if found else None

        return self._cached(("next", after, None), make)  # type: ignore[return-value]

    def prev(self, before: datetime) -> datetime | None:
        """The last instant of any time leaf strictly before ``before``."""

        def make() -> datetime | None:
            found = [at for _, leaf in self.times if (at := _prev_of(leaf, before)) is not None]
            return max(found) if found else None

        return self._cached(("prev", before, None), make)  # type: ignore[return-value]

    def active(self, at: datetime) -> frozenset[str]:
        """The time leaves ``at`` is an instant of."""
        if self.single:
            return frozenset({""})

        def make() -> frozenset[str]:
            return frozenset(p for p, leaf in self.times if fires_at(leaf, at))

        return self._cached(("active", at, None), make)  # type: ignore[return-value]

    def could(self, at: datetime) -> bool:
        """Would the tree be satisfied at ``at`` had every event leaf occurred?"""
        return self.single or satisfied(self.tree, self.events, self.active(at))

    def next_could(self, after: datetime) -> datetime | None:
        at = self.next(after)
        for _ in range(SEARCH_STEPS):
            if at is None or self.could(at):
                return at
            at = self.next(at)
        return None

    def prev_could(self, before: datetime) -> datetime | None:
        at = self.prev(before)
        for _ in range(SEARCH_STEPS):
            if at is None or self.could(at):
                return at
            at = self.prev(at)
        return None

    def latest_could(self, now: datetime) -> datetime | None:
        """The latest instant ``<= now`` the tree could fire at."""
        return self.prev_could(now + _TICK)

    def ranges(self, sid: str, reason: str, first: datetime, before: datetime) -> list[SkipRange]:
        """The could-fire instants ``first ..`` strictly before ``before`` as one range."""
        found = skips.span(first, before, self.next_could)
        if found is None:
            return []
        last, count, capped = found
        after = self.prev_could(first)
        return [SkipRange(skips.SCHEDULE, sid, reason, first, last, count, after, capped)]

    def gaps(self, sid: str, first: datetime, latest: datetime) -> list[SkipRange]:
        """The spring-forward gaps since the instant before ``first`` up to ``latest`` whose
        wall times a ``missing="skip"`` time leaf matches: those never fire (``dst_gap``)."""
        walls: dict[datetime, int] = {}
        since: datetime | None = None
        for _, leaf in self.times:
            zone = leaf.timezone or "UTC"
            if leaf.missing != "skip" or not isinstance(resolve(zone), ZoneTimeline):
                continue
            if since is None:
                since = self.prev_could(first) or first
            spec = cron.parse(leaf.expression, dialect="extended")
            for at, count in skips.gap_walls(spec, zone, since, latest):
                walls[at] = walls.get(at, 0) + count
        return [
            SkipRange(skips.SCHEDULE, sid, skips.DST_GAP, at, at, count)
            for at, count in sorted(walls.items())
        ]


def _prev_of(leaf: Cron, before: datetime) -> datetime | None:
    """The leaf's last instant strictly before ``before`` (``missing="shift"`` included)."""
    return latest_in(leaf, before - timedelta(days=800), before - _TICK)


@lru_cache(maxsize=_MEMO_SIZE)
def timeline(tree: Node) -> Timeline:
    """The (memoised) :class:`Timeline` of a tree."""
    return Timeline(tree)


def instants_after(trigger: Node, after: datetime, n: int) -> list[datetime]:
    """The next ``n`` instants the tree could fire at after ``after``."""
    line, out = timeline(trigger), list[datetime]()
    at: datetime | None = after
    while len(out) < n and at is not None:
        at = line.next_could(at)
        if at is not None:
            out.append(at)
    return out


def owed(trigger: Node, first: datetime, before: datetime) -> Iterable[datetime]:
    """The instants the tree could fire at in ``[first, before)``, oldest first."""
    line = timeline(trigger)
    at: datetime | None = first if line.could(first) else line.next_could(first)
    while at is not None and at < before:
        yield at
        at = line.next_could(at)


__all__ = [
    "CATCH_UP",
    "CRON_REPEATED",
    "DEFAULT_MAX_CATCH_UP",
    "HELD_RECHECK",
    "MAX_MAX_CATCH_UP",
    "CatchUp",
    "Decision",
    "Overlap",
    "Schedule",
    "State",
    "Timeline",
    "cron_trigger",
    "decide",
    "instants_after",
    "next_due",
    "owed",
    "timeline",
]
