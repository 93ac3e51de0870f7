"""Catch-up: which of a schedule's owed instants the decision looks at, which it coalesces, and
the data windows of a windowed schedule's fires (:mod:`tocsin.core.schedules.decide`). Pure."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from itertools import pairwise

from tocsin.core.contract.lane import Window
from tocsin.core.schedules import skips
from tocsin.core.schedules.clock import ClockTimeline
from tocsin.core.schedules.skips import SkipRange
from tocsin.core.schedules.timeline import Timeline

Line = Timeline | ClockTimeline

PAGE = "page"  # backlog policy: the oldest owed instants first, the newer ones stay owed


def looked(
    line: Line,
    catch_up: str,
    max_catch_up: int,
    backlog: str,
    first: datetime,
    latest: datetime,
) -> list[datetime]:
    """The owed instants ``first .. latest`` the decision looks at, oldest first: the latest
    one; under ``catch_up="all"`` the newest ``max_catch_up`` (the others are coalesced), or
    with ``backlog="page"`` the oldest ``max_catch_up`` (the others stay owed)."""
    limit = max(1, int(max_catch_up))
    if catch_up != "all":
        return [latest]
    if backlog == PAGE:
        found = [first]
        while len(found) < limit:
            after = line.next_could(found[-1])
            if after is None or after > latest:
                break
            found.append(after)
        return found
    found = [latest]
    while len(found) < limit:
        before = line.prev_could(found[0])
        if before is None or before < first:
            break
        found.insert(0, before)
    return found


def coalesced(
    line: Line, target: tuple[str, str], backlog: str, first: datetime, seen: list[datetime]
) -> list[SkipRange]:
    """The owed instants before and between the looked-at ones, as ``coalesced`` ranges of the
    target ``(kind, id)``."""
    kind, sid = target
    out = line.ranges(sid, skips.COALESCED, first, seen[0], kind)
    if backlog == PAGE:  # consecutive instants: none between
        return out
    for before, at in pairwise(seen):
        out += line.ranges(sid, skips.COALESCED, line.next_could(before) or at, at, kind)
    return out


def windowed(
    line: Line, fires: Sequence[datetime], first: datetime | None
) -> tuple[tuple[datetime, ...], tuple[Window, ...]]:
    """The fires that have a window, and their windows: they tile time from the instant before
    ``first`` (the first owed instant), each ``[previous fire or that instant, fire)``."""
    start = None if first is None or not fires else line.prev_could(first)
    kept: list[datetime] = []
    windows: list[Window] = []
    for at in fires:
        if start is not None:
            kept.append(at)
            windows.append(Window(start, at))
        start = at
    return tuple(kept), tuple(windows)


__all__ = ["PAGE", "coalesced", "looked", "windowed"]
