"""Skipped occurrences as ranges: pure, no I/O, never reads the clock.

A :class:`SkipRange` says "the occurrences ``first .. last`` of one target (a table trigger, a
workflow schedule or a lane), ``count`` of them, were due and did not fire, for ``reason``".
``after`` is the occurrence just before ``first`` (None when unknown): the store merges the range
into an existing row of the same target and reason that ends exactly there (adjacent runs of the
same reason become one row), so a week of downtime of an every-minute trigger is one row.

Counting is arithmetic for intervals and iterates the schedule's instants otherwise, up to
:data:`COUNT_CAP` instants (then ``at_least`` is set and ``last`` is the range's true end).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta

from tocsin.core.time.cron import CronSpec
from tocsin.core.time.cron.cascade import next_wall
from tocsin.core.time.cron.timeline import ZoneOffsets, resolve

COALESCED = "coalesced"
ACTIVE_RUN = "active_run"
PAUSED = "paused"
DST_GAP = "dst_gap"
TABLE_TRASHED = "table_trashed"
INVALID_CONFIG = "invalid_config"
COMPOUND_UNSATISFIED = "compound_unsatisfied"
REASONS = (
    COALESCED,
    ACTIVE_RUN,
    PAUSED,
    DST_GAP,
    TABLE_TRASHED,
    INVALID_CONFIG,
    COMPOUND_UNSATISFIED,
)
TRIGGER = "trigger"
SCHEDULE = "schedule"
LANE = "lane"
COUNT_CAP = 20_000  # instants iterated to count one range (cron, daily); beyond: ``at_least``
GAP_CAP = 64  # DST transitions examined between two instants


@dataclass(frozen=True, slots=True)
class SkipRange:
    """A typed plan item: occurrences of one target that were due and did not fire."""

    target_kind: str  # trigger | schedule | lane
    target_id: str
    reason: str
    first: datetime
    last: datetime
    count: int
    after: datetime | None = None  # the occurrence just before ``first``: merge point
    at_least: bool = False  # ``count`` was capped
    table_id: str | None = None


Next = Callable[[datetime], datetime | None]


def span(first: datetime, before: datetime, following: Next) -> tuple[datetime, int, bool] | None:
    """The instants ``first, following(first), …`` strictly before ``before``: ``(last, count,
    at_least)``; None when ``first >= before``. Counts up to :data:`COUNT_CAP` instants."""
    if first >= before:
        return None
    last, count = first, 1
    while count < COUNT_CAP:
        nxt = following(last)
        if nxt is None or nxt >= before:
            return last, count, False
        last, count = nxt, count + 1
    return last, count, True


def interval_span(first: datetime, before: datetime, step: timedelta) -> tuple[datetime, int]:
    """``span`` of an interval schedule, arithmetically (``first < before``)."""
    count = (before - first - timedelta(microseconds=1)) // step + 1
    return first + (count - 1) * step, count


def gap_walls(spec: CronSpec, tz: str, lo: datetime, hi: datetime) -> list[tuple[datetime, int]]:
    """The spring-forward transitions in ``(lo, hi]`` whose skipped wall times match ``spec``:
    ``(transition instant, matching wall times)`` each (a wall time that does not exist never
    fires)."""
    zone = resolve(tz)
    if not isinstance(zone, ZoneOffsets) or hi <= lo:
        return []
    out: list[tuple[datetime, int]] = []
    instant = lo
    for _ in range(GAP_CAP):
        start, end, offset, before = zone.segment(instant)
        if before < offset and lo < start <= hi:
            walls = _walls_between(spec, start + before, start + offset)
            if walls:
                out.append((start, walls))
        if end > hi or end <= instant:
            break
        instant = end
    return out


def _walls_between(spec: CronSpec, low: datetime, high: datetime) -> int:
    """How many wall times of ``spec`` lie in ``[low, high)`` (naive walls as UTC datetimes)."""
    count, wall = 0, (low.year, low.month, low.day, low.hour, low.minute, low.second)
    for _ in range(COUNT_CAP):
        found = next_wall(spec, wall, high.year)
        if found is None:
            break
        at = datetime(*found, tzinfo=UTC)
        if at >= high:
            break
        count += 1
        nxt = at + timedelta(seconds=1)
        wall = (nxt.year, nxt.month, nxt.day, nxt.hour, nxt.minute, nxt.second)
    return count


def merge_adjacent(ranges: Sequence[SkipRange]) -> list[SkipRange]:
    """One range per run of adjacent ranges of the same target and reason within a batch."""
    out: list[SkipRange] = []
    ends: dict[tuple[str, str, str, str, datetime], int] = {}

    def target(r: SkipRange) -> tuple[str, str, str, str]:
        return (r.target_kind, r.table_id or "", r.target_id, r.reason)

    for r in sorted(ranges, key=lambda r: (*target(r), r.first)):
        at = ends.pop((*target(r), r.after), None) if r.after else None
        if at is None:
            at = len(out)
            out.append(r)
        else:  # the same target: the earlier range extended
            prev = out[at]
            count, at_least = prev.count + r.count, prev.at_least or r.at_least
            out[at] = r = replace(prev, last=r.last, count=count, at_least=at_least)
        ends[(*target(r), r.last)] = at
    return out


__all__ = [
    "ACTIVE_RUN",
    "COALESCED",
    "COMPOUND_UNSATISFIED",
    "COUNT_CAP",
    "DST_GAP",
    "INVALID_CONFIG",
    "LANE",
    "PAUSED",
    "REASONS",
    "SCHEDULE",
    "TABLE_TRASHED",
    "TRIGGER",
    "SkipRange",
    "gap_walls",
    "interval_span",
    "merge_adjacent",
    "span",
]
