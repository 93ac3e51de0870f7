"""When a :class:`CronSpec` fires: ``next_after``, ``prev_at_or_before`` and ``iter_after``.

Fires are instants (aware UTC) whose wall-clock time in ``tz`` matches the spec, at minute
precision for 5 fields (second 0) and second precision for 6/7 fields.

DST policy (SPEC §4.4, §13):

- **Gap** (spring forward): a wall time that does not exist in ``tz`` never fires, under
  either policy — it is not shifted to the next valid time.
- **Fold** (fall back): a wall time that occurs twice fires once, at its first occurrence
  (fold=0), under ``repeated="first"``; under ``repeated="both"`` it fires at both occurrences,
  in chronological order.

The search is bounded: without a year field it looks :data:`MAX_SEARCH_YEARS` ahead (behind)
and returns None when nothing fires in that horizon; with a year field, up to the last (first)
listed year. The core never reads the clock: ``after`` and ``at`` are arguments.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Literal
from zoneinfo import ZoneInfo

from tocsin.core.cron.cascade import Wall, next_wall, prev_wall, wall_datetime
from tocsin.core.cron.spec import CronSpec
from tocsin.core.cron.timeline import Timeline, resolve

Repeated = Literal["first", "both"]

#: How far ahead (behind) a search looks when the spec has no year field.
MAX_SEARCH_YEARS = 50
#: The evaluable years: the search never builds a datetime outside them.
FIRST_YEAR = 4
LAST_YEAR = 9996
#: Bound on offset segments visited by one search (DST zones change about twice a year).
MAX_SEGMENTS = 16 * MAX_SEARCH_YEARS
#: When a search misses a segment by far, it resumes this close to the wall time it found
#: (more than any UTC offset), skipping the segments in between.
JUMP_MARGIN = timedelta(days=2)
ONE_SECOND = timedelta(seconds=1)


def next_after(
    spec: CronSpec, after: datetime, *, tz: str | ZoneInfo = "UTC", repeated: Repeated = "first"
) -> datetime | None:
    """The first fire strictly after ``after`` (aware; naive raises ValueError), as aware UTC.

    Gap wall times never fire; fold wall times fire once (``"first"``) or twice (``"both"``).
    None when nothing fires within the search horizon.
    """
    first = _first_only(repeated)
    start = _utc_naive(after)
    if start.year >= LAST_YEAR:
        return None
    begin = start.replace(microsecond=0) + ONE_SECOND
    last_year = min(spec.years[-1] if spec.years else begin.year + MAX_SEARCH_YEARS, LAST_YEAR)
    zone = resolve(tz)
    if isinstance(zone, timedelta):
        wall = next_wall(spec, _fields(begin + zone), last_year)
        return None if wall is None else datetime(*wall, tzinfo=UTC) - zone
    return _next_zoned(spec, begin, zone, first, last_year)


def prev_at_or_before(
    spec: CronSpec, at: datetime, *, tz: str | ZoneInfo = "UTC", repeated: Repeated = "first"
) -> datetime | None:
    """The last fire at or before ``at`` (aware), as aware UTC; same DST policy as next_after.

    None when nothing fired within the search horizon before ``at``.
    """
    first = _first_only(repeated)
    end = _utc_naive(at).replace(microsecond=0)
    if end.year <= FIRST_YEAR:
        return None
    first_year = max(spec.years[0] if spec.years else end.year - MAX_SEARCH_YEARS, FIRST_YEAR)
    zone = resolve(tz)
    if isinstance(zone, timedelta):
        wall = prev_wall(spec, _fields(end + zone), first_year)
        return None if wall is None else datetime(*wall, tzinfo=UTC) - zone
    return _prev_zoned(spec, end, zone, first, first_year)


def iter_after(
    spec: CronSpec, after: datetime, *, tz: str | ZoneInfo = "UTC", repeated: Repeated = "first"
) -> Iterator[datetime]:
    """Successive fires strictly after ``after`` (see :func:`next_after`), until the horizon."""
    _first_only(repeated)
    _utc_naive(after)
    resolve(tz)
    return _iterate(spec, after, tz, repeated)


def _iterate(
    spec: CronSpec, after: datetime, tz: str | ZoneInfo, repeated: Repeated
) -> Iterator[datetime]:
    fire = next_after(spec, after, tz=tz, repeated=repeated)
    while fire is not None:
        yield fire
        fire = next_after(spec, fire, tz=tz, repeated=repeated)


def _next_zoned(
    spec: CronSpec, begin: datetime, timeline: Timeline, first: bool, last_year: int
) -> datetime | None:
    """Walk the zone's offset segments forward from ``begin`` (naive UTC, inclusive)."""
    instant = begin
    for step in range(MAX_SEGMENTS):
        if instant.year > last_year:
            return None
        start, end, offset, before = timeline.segment(instant)
        low = instant + offset
        if first and before > offset and low < start + before:
            low = start + before  # walls already seen before the fall back: their fold=1 copy
        wall = next_wall(spec, _fields(low), last_year)
        if wall is None:
            return None
        found = wall_datetime(wall)
        if found < end + offset:
            return (found - offset).replace(tzinfo=UTC)
        instant = end if step == 0 else max(end, found - JUMP_MARGIN)
    return None


def _prev_zoned(
    spec: CronSpec, last: datetime, timeline: Timeline, first: bool, first_year: int
) -> datetime | None:
    """Walk the zone's offset segments backward from ``last`` (naive UTC, inclusive)."""
    instant = last
    for step in range(MAX_SEGMENTS):
        if instant.year < first_year:
            return None
        start, _end, offset, before = timeline.segment(instant)
        low = start + (before if first and before > offset else offset)
        wall = prev_wall(spec, _fields(instant + offset), first_year)
        if wall is None:
            return None
        found = wall_datetime(wall)
        if found >= low:
            return (found - offset).replace(tzinfo=UTC)
        instant = start - ONE_SECOND if step == 0 else min(start - ONE_SECOND, found + JUMP_MARGIN)
    return None


def _fields(wall: datetime) -> Wall:
    return wall.year, wall.month, wall.day, wall.hour, wall.minute, wall.second


def _utc_naive(instant: datetime) -> datetime:
    """``instant`` as naive UTC; a naive input is refused (SPEC: never silently localised)."""
    if instant.tzinfo is None or instant.utcoffset() is None:
        raise ValueError(f"cron evaluation needs an aware datetime, got naive {instant!r}")
    if instant.tzinfo is not UTC:
        instant = instant.astimezone(UTC)
    return instant.replace(tzinfo=None)


def _first_only(repeated: str) -> bool:
    if repeated not in ("first", "both"):
        raise ValueError(f"repeated must be 'first' or 'both', got {repeated!r}")
    return repeated == "first"
