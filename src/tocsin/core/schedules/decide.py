"""What a schedule fires and skips at ``now``: one pure decision (SPEC §5.3, §12, §13).

A workflow schedule's timing is a trigger tree (:mod:`tocsin.core.schedules.tree`): a plain cron
schedule is the tree of one ``Cron`` leaf under the strict DST policy (:func:`cron_trigger`,
``repeated="first"``: a repeated wall time fires once, a nonexistent one never). So a plain cron
schedule and a tree with one such leaf decide identically, by construction. A table's
interval/daily/cron trigger is a :class:`TableClock` (its windows) under seed 000's fixed
policies (:mod:`tocsin.core.schedules.clock`: catch-up ``latest``, overlap ``hold``: while its
run is active the latest owed window waits, the older ones are skipped ``active_run``).

The instants the schedule *could fire* at are the tree's time instants at which it would be
satisfied had every event leaf occurred (every instant of a plain cron). Those in
``(evaluated_at, now]`` (a plain schedule: ``next_due_at .. now``) are *owed*; then:

- paused (the decision taken at resume): nothing fires, every owed instant is skipped
  (``paused``, the pause rule of :mod:`tocsin.core.schedules.pause`); events are not latched;
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

Pure: no I/O, no clock; memoised per tree (instants are pure functions of the tree). A manual
event (a run-now) is a decision of its own (:mod:`tocsin.core.schedules.manual`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from tocsin.core.schedules import catch_up, manual, pause, skips
from tocsin.core.schedules.clock import ClockTimeline, clock_timeline, table_state, table_timing
from tocsin.core.schedules.shape import (
    CATCH_UP,
    CRON_REPEATED,
    DEFAULT_MAX_CATCH_UP,
    HELD_RECHECK,
    HOLD,
    MANUAL,
    MAX_MAX_CATCH_UP,
    TABLE_CATCH_UP,
    TABLE_OVERLAP,
    Backlog,
    CatchUp,
    Decision,
    Overlap,
    Seen,
    State,
    TableClock,
    Timing,
    cron_trigger,
)
from tocsin.core.schedules.skips import SkipRange
from tocsin.core.schedules.timeline import Timeline, shifted, timeline
from tocsin.core.schedules.tree import Node
from tocsin.core.schedules.tree_eval import Occurrence, match_events, satisfied, waits_for_events

_TICK = timedelta(microseconds=1)
Line = Timeline | ClockTimeline  # a schedule's instants: a tree's, a table trigger's windows


def decide(schedule: Timing, state: State, events: Seen, now: datetime) -> Decision:
    """The decision at ``now``; ``events``: the pending ``(kind, subject, occurred_at)``."""
    if events and any(kind == MANUAL for kind, _, _ in events):
        return manual.manual(schedule, state, events)
    if schedule.trigger is None:  # no timing of its own: nothing is ever owed
        return Decision((), (), None, state._replace(next_due_at=None))
    decision = _decide(schedule, schedule.trigger, state, events, now)
    if not schedule.windowed:  # a windowed schedule is plain: its owed instants start at next_due
        return decision
    line = _line(schedule.trigger)
    fires, windows = catch_up.windowed(line, decision.fires, state.next_due_at)
    return decision._replace(fires=fires, windows=windows)


def _decide(
    schedule: Timing, trigger: Node | TableClock, state: State, events: Seen, now: datetime
) -> Decision:
    line = clock_timeline(trigger) if type(trigger) is TableClock else _line(trigger)
    cursor = state.evaluated_at  # None: a plain schedule's row, owed from ``next_due_at``
    first = state.next_due_at if cursor is None else line.next_could(cursor)
    owed = first is not None and first <= now
    latest = max(line.latest_could(now) or first, first) if owed and first is not None else None
    busy = schedule.overlap != "allow" and state.active_run
    if first == latest and not (schedule.paused or busy or line.events or state.latches):
        return _on_time(line, schedule, state, first, now)  # one instant owed, or none
    out: list[SkipRange] = []
    sid, kind = schedule.id, schedule.target
    if schedule.paused:  # the decision at resume: the pause rule over the owed instants
        if first is not None and latest is not None:
            out += pause.owed_skips(line.ranges, (kind, sid), first, latest, now)
        after = _new_state(line, state, state.latches, now, latest)
        return Decision((), tuple(out), after.next_due_at, after)
    if busy and schedule.overlap == HOLD:
        return _hold(line, schedule, state, first, latest, now)
    looked: list[datetime] = []
    if first is not None and latest is not None:
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
        out += line.gaps(sid, first, paged or latest, state.consumed, kind)
    after = _new_state(line, state, walk.latches, now, max(walk.fires, default=None))
    if paged is not None:  # backlog="page": the newer owed instants are decided next
        after = after._replace(next_due_at=line.next_could(paged))
    return Decision(tuple(walk.fires), tuple(out), after.next_due_at, after)


def next_due(
    trigger: Node | TableClock, latches: Mapping[str, datetime], now: datetime
) -> datetime | None:
    """When a schedule is next worth deciding: its tree's next instant after ``now``, or sooner,
    in :data:`HELD_RECHECK`, while its latches already satisfy it (a fire held back by an active
    run under ``overlap="skip"``: it fires at the first decision after the run ended)."""
    return _next_due(_line(trigger), latches, now)


def _line(trigger: Node | TableClock) -> Line:
    return clock_timeline(trigger) if isinstance(trigger, TableClock) else timeline(trigger)


def _next_due(line: Line, latches: Mapping[str, datetime], now: datetime) -> datetime | None:
    following = line.next(now)
    if latches and satisfied(line.tree, latches, ()):
        recheck = shifted(now, HELD_RECHECK)
        return recheck if following is None else min(recheck, following)
    return following


def _new_state(
    line: Line,
    state: State,
    latches: Mapping[str, datetime],
    now: datetime,
    consumed: datetime | None,
) -> State:
    """The state after a decision; ``consumed``: the last instant it fired or gave up (kept
    only for a state that tracks it: a table trigger's). Never due at an instant consumed,
    even for a ``now`` before the state's cursor (a preview on a clock behind the tick's)."""
    evaluated = None if state.evaluated_at is None else max(now, state.evaluated_at)
    following = _next_due(line, latches, now if evaluated is None else evaluated)
    owed_from = state.next_due_at if evaluated is None else None
    if following is not None and owed_from is not None and following < owed_from:
        following = owed_from
    if state.consumed is not None:
        consumed = state.consumed if consumed is None else max(consumed, state.consumed)
    else:
        consumed = None
    return State(following, evaluated, dict(latches), state.active_run, consumed)


def _on_time(
    line: Line,
    schedule: Timing,
    state: State,
    owed: datetime | None,
    now: datetime,
) -> Decision:
    """A time-only tree owing one instant (it fires) or none: nothing to coalesce or walk."""
    following = line.next(now)
    evaluated = None if state.evaluated_at is None else max(now, state.evaluated_at)
    consumed = state.consumed if owed is None or state.consumed is None else owed
    after = State(following, evaluated, {}, state.active_run, consumed)
    if owed is None:
        return Decision((), (), following, after)
    target, consumed = schedule.target, state.consumed
    gaps = line.gaps(schedule.id, owed, owed, consumed, target) if line.gapped else ()
    return Decision((owed,), tuple(gaps), following, after)


def _hold(
    line: Line,
    schedule: Timing,
    state: State,
    first: datetime | None,
    latest: datetime | None,
    now: datetime,
) -> Decision:
    """``overlap="hold"`` with a run active: nothing fires; the latest owed instant stays owed
    (``next_due_at`` moves onto it: how far skips are recorded), the older ones are skipped
    ``active_run``."""
    if first is None or latest is None:
        after = state._replace(next_due_at=line.next(now))
        return Decision((), (), after.next_due_at, after)
    out = line.ranges(schedule.id, skips.ACTIVE_RUN, first, latest, schedule.target)
    after = state._replace(next_due_at=latest)
    return Decision((), tuple(out), latest, after)


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
    line: Line,
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


def _one(schedule: Timing, reason: str, at: datetime, line: Line) -> SkipRange:
    """One instant as a range, mergeable into the range ending at the previous instant."""
    return SkipRange(schedule.target, schedule.id, reason, at, at, 1, after=line.prev_could(at))


__all__ = [
    "CATCH_UP",
    "CRON_REPEATED",
    "DEFAULT_MAX_CATCH_UP",
    "HELD_RECHECK",
    "HOLD",
    "MAX_MAX_CATCH_UP",
    "TABLE_CATCH_UP",
    "TABLE_OVERLAP",
    "Backlog",
    "CatchUp",
    "Decision",
    "Overlap",
    "State",
    "TableClock",
    "Timing",
    "cron_trigger",
    "decide",
    "next_due",
    "table_state",
    "table_timing",
]
