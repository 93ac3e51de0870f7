"""When a :class:`CronSpec` fires: ``next_after``, ``prev_at_or_before`` and ``iter_after``.

Fires are instants (aware UTC) whose wall-clock time in ``tz`` (an IANA name or ``ZoneInfo``;
None means UTC) matches the spec, at minute precision for 5 fields (second 0) and second
precision for 6/7 fields.

DST policy (SPEC §4.4, §13):

- **Gap** (spring forward): a wall time that does not exist in ``tz`` never fires, under
  either policy — it is not shifted to the next valid time.
- **Fold** (fall back): a wall time that occurs twice fires once, at its first occurrence
  (fold=0), under ``repeated="first"``; under ``repeated="both"`` it fires at both occurrences,
  in chronological order.

How: the zone's UTC timeline is cut into segments of constant offset (``timeline``); inside a
segment wall = UTC + offset, so the field cascade runs on wall times and its answer is mapped
back by subtracting the offset. Gap wall times belong to no segment; under ``"first"`` the walls
a segment shares with the one before it (a fall back) are skipped. Wall times are carried as
datetimes tagged UTC so that offsets apply with plain arithmetic.

The search is bounded: without a year field it looks :data:`MAX_SEARCH_YEARS` ahead (behind)
and returns None when nothing fires in that horizon; with a year field, up to the last (first)
listed year. The core never reads the clock: ``after`` and ``at`` are arguments.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Literal
from zoneinfo import ZoneInfo

from tocsin import messages
from tocsin.core.time.cron.cascade import Wall, next_wall, prev_wall
from tocsin.core.time.cron.spec import CronSpec
from tocsin.core.time.cron.timeline import ZoneOffsets, resolve

Repeated = Literal["first", "both"]

#: How far ahead (behind) a search looks when the spec has no year field.
MAX_SEARCH_YEARS = 50
#: The evaluable years: the search never builds a datetime outside them.
FIRST_YEAR = 4
LAST_YEAR = 9996
#: The searches start at least this far inside the datetime range, so that no UTC offset can
#: carry a wall time past year 1 or year 9999 (``after`` at the very first instant, ``at`` at the
#: very last one).
FIRST_AFTER = datetime.min.replace(tzinfo=UTC) + timedelta(days=2)
LAST_AT = datetime.max.replace(tzinfo=UTC) - timedelta(days=2)
#: Bound on offset segments visited by one search (DST zones change about twice a year).
MAX_SEGMENTS = 16 * MAX_SEARCH_YEARS
#: When a search misses a segment by far, it resumes this close to the wall time it found
#: (more than any UTC offset), skipping the segments in between.
JUMP_MARGIN = timedelta(days=2)
ONE_SECOND = timedelta(seconds=1)


def next_after(
    spec: CronSpec,
    after: datetime,
    *,
    tz: str | ZoneInfo | None = "UTC",
    repeated: Repeated = "first",
) -> datetime | None:
    """The first fire strictly after ``after`` (aware; naive raises ValueError), as aware UTC.

    Gap wall times never fire; fold wall times fire once (``"first"``) or twice (``"both"``).
    None when nothing fires within the search horizon.
    """
    if repeated != "first" and repeated != "both":
        raise ValueError(messages.cron_repeated_invalid(repeated))
    after = _as_utc(after)
    if after.year >= LAST_YEAR:
        return None
    after = max(after, FIRST_AFTER)
    last_year = min(spec.years[-1] if spec.years else after.year + MAX_SEARCH_YEARS, LAST_YEAR)
    zone = resolve(tz)
    if isinstance(zone, ZoneOffsets):
        return _next_zoned(spec, after, zone, repeated == "first", last_year)
    wall = next_wall(spec, _successor(spec, after + zone), last_year)
    return None if wall is None else datetime(*wall, tzinfo=UTC) - zone


def prev_at_or_before(
    spec: CronSpec, at: datetime, *, tz: str | ZoneInfo | None = "UTC", repeated: Repeated = "first"
) -> datetime | None:
    """The last fire at or before ``at`` (aware), as aware UTC; same DST policy as next_after.

    None when nothing fired within the search horizon before ``at``.
    """
    if repeated != "first" and repeated != "both":
        raise ValueError(messages.cron_repeated_invalid(repeated))
    at = _as_utc(at)
    if at.year <= FIRST_YEAR:
        return None
    at = min(at, LAST_AT)
    first_year = max(spec.years[0] if spec.years else at.year - MAX_SEARCH_YEARS, FIRST_YEAR)
    zone = resolve(tz)
    if isinstance(zone, ZoneOffsets):
        return _prev_zoned(spec, at, zone, repeated == "first", first_year)
    wall = prev_wall(spec, _fields(at + zone), first_year)
    return None if wall is None else datetime(*wall, tzinfo=UTC) - zone


def iter_after(
    spec: CronSpec,
    after: datetime,
    *,
    tz: str | ZoneInfo | None = "UTC",
    repeated: Repeated = "first",
) -> Iterator[datetime]:
    """Successive fires strictly after ``after`` (see :func:`next_after`), until the horizon."""
    first = next_after(spec, after, tz=tz, repeated=repeated)  # validates eagerly
    return _iterate(spec, first, tz, repeated)


def _iterate(
    spec: CronSpec, fire: datetime | None, tz: str | ZoneInfo | None, repeated: Repeated
) -> Iterator[datetime]:
    while fire is not None:
        yield fire
        fire = next_after(spec, fire, tz=tz, repeated=repeated)


def _next_zoned(
    spec: CronSpec, after: datetime, timeline: ZoneOffsets, first: bool, last_year: int
) -> datetime | None:
    """Walk the zone's offset segments forward from ``after`` (exclusive)."""
    instant = after
    for step in range(MAX_SEGMENTS):
        if instant.year > last_year:
            return None
        start, end, offset, before = timeline.segment(instant)
        low = instant + offset
        if first and before > offset and low < start + before:
            low = start + before  # walls seen before the fall back: skip their fold=1 copy
            begin = _fields(low)
        else:
            begin = _successor(spec, low) if step == 0 else _fields(low)
        wall = next_wall(spec, begin, last_year)
        if wall is None:
            return None
        found = datetime(*wall, tzinfo=UTC)
        if found < end + offset:
            return found - offset
        instant = end if step == 0 else max(end, found - JUMP_MARGIN)
    return None


def _prev_zoned(
    spec: CronSpec, at: datetime, timeline: ZoneOffsets, first: bool, first_year: int
) -> datetime | None:
    """Walk the zone's offset segments backward from ``at`` (inclusive)."""
    instant = at
    for step in range(MAX_SEGMENTS):
        if instant.year < first_year:
            return None
        start, _end, offset, before = timeline.segment(instant)
        low = start + (before if first and before > offset else offset)
        wall = prev_wall(spec, _fields(instant + offset), first_year)
        if wall is None:
            return None
        found = datetime(*wall, tzinfo=UTC)
        if found >= low:
            return found - offset
        instant = start - ONE_SECOND if step == 0 else min(start - ONE_SECOND, found + JUMP_MARGIN)
    return None


def _fields(wall: datetime) -> Wall:
    return wall.year, wall.month, wall.day, wall.hour, wall.minute, wall.second


def _successor(spec: CronSpec, wall: datetime) -> Wall:
    """The first candidate wall time strictly after ``wall`` (whose sub-unit part is dropped)."""
    if spec.has_seconds:
        return wall.year, wall.month, wall.day, wall.hour, wall.minute, wall.second + 1
    return wall.year, wall.month, wall.day, wall.hour, wall.minute + 1, 0


def _as_utc(instant: datetime) -> datetime:
    """``instant`` in UTC; a naive input is refused (never silently localised)."""
    if instant.tzinfo is UTC:
        return instant
    if instant.tzinfo is None or instant.utcoffset() is None:
        raise ValueError(messages.cron_instant_naive(instant))
    return instant.astimezone(UTC)
