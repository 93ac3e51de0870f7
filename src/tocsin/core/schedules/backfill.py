"""A backfill as the one decision (:func:`tocsin.core.schedules.decide.decide`): what the tick
would have fired over ``[start, end)`` had the schedule been due from ``start`` on, caught up in
full. Pure: no I/O, no clock (``end`` is the decision's ``now``).

The schedule's timing and DST policy are kept; its policies become the backfill's: nothing is
paused, no run fences another (``overlap="allow"``), every owed instant fires (``catch_up="all"``),
oldest first, a page of :data:`PAGE` instants per decision (``backlog="page"``, as a lane
catches up). So the instants are exactly the tick's, and so are the skip ranges it records with
them (a spring-forward gap whose wall times the schedule matches: ``dst_gap``), counted from
``start`` (a gap before it belongs to no backfilled instant).
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta
from typing import NamedTuple

from tocsin.core.schedules.decide import State, Timing, decide
from tocsin.core.schedules.skips import SkipRange
from tocsin.core.schedules.timeline import shifted, timeline
from tocsin.core.schedules.tree import Node

PAGE = 10_000  # instants one decision of a backfill fires
_TICK = timedelta(microseconds=1)


class Backfill(NamedTuple):
    """The instants a backfill fires, oldest first, and the skip ranges between them."""

    fires: tuple[datetime, ...]
    skips: tuple[SkipRange, ...]


def backfill_timing(schedule: Timing, page: int = PAGE) -> Timing:
    """The schedule under the backfill's policies (module docstring)."""
    return replace(
        schedule,
        catch_up="all",
        max_catch_up=page,
        overlap="allow",
        paused=False,
        backlog="page",
        windowed=False,
    )


def backfill(schedule: Timing, start: datetime, end: datetime, cap: int) -> Backfill:
    """The decisions of ``schedule`` over ``[start, end)``, page after page, until none is owed
    or more than ``cap`` instants were found (at most ``cap + 1`` are returned: a caller that
    refuses more than ``cap`` learns it without enumerating the rest)."""
    trigger = schedule.trigger
    if not isinstance(trigger, Node) or start >= end:
        return Backfill((), ())
    before = shifted(start, -_TICK)  # ``start`` itself is owed; the earliest instant has none
    since = before if before < start else None
    first = timeline(trigger).next_could(before if since is not None else start)
    horizon = shifted(end, -_TICK)
    state = State(first, None, consumed=since)
    fires: list[datetime] = []
    ranges: list[SkipRange] = []
    while state.next_due_at is not None and state.next_due_at <= horizon and len(fires) <= cap:
        timing = backfill_timing(schedule, min(PAGE, cap + 1 - len(fires)))
        decision = decide(timing, state, (), horizon)
        fires += decision.fires
        ranges += decision.skips
        state = decision.state
    return Backfill(tuple(fires[: cap + 1]), tuple(ranges))


__all__ = ["PAGE", "Backfill", "backfill", "backfill_timing"]
