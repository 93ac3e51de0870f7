"""A zone's UTC offsets as segments of the UTC timeline, for the cron evaluator.

Within a segment ``[start, end)`` the offset is constant, so wall time = UTC + offset there
and the cron cascade can run on wall times with plain arithmetic. Transitions are found by
probing the zone (``ZoneInfo.fromutc``) every :data:`PROBE_STEP` and bisecting each change to
the second. They are found a year at a time and remembered per zone, so that in steady state
a lookup is one ``bisect``. An offset change that undoes itself within one probe step would be
missed; tzdata has none in the years tocsin schedules.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from tocsin import messages

PROBE_STEP = timedelta(hours=6)
#: Years scanned on each side of a looked-up instant, so that segment ends are real or far.
MARGIN_YEARS = 1
#: A lookup this close to the scanned years extends them (scanning the years in between);
#: a farther one starts a fresh scan, so that alternating lookups do not rescan each time.
BRIDGE_YEARS = 100
#: The scannable years (``datetime`` must hold every probe with its offset).
FIRST_SCAN_YEAR = 2
LAST_SCAN_YEAR = 9998

Segment = tuple[datetime, datetime, timedelta, timedelta]


def year_start(year: int) -> datetime:
    """January 1st 00:00 UTC of ``year`` (the timeline's unit of scanning)."""
    return datetime(year, 1, 1, tzinfo=UTC)


def offset_at(zone: ZoneInfo, instant: datetime) -> timedelta:
    """The UTC offset of ``zone`` at the aware-UTC ``instant``."""
    offset = zone.fromutc(instant.replace(tzinfo=zone)).utcoffset()
    if offset is None:  # pragma: no cover - ZoneInfo always answers an offset
        raise ValueError(messages.zone_without_offset(zone))
    return offset


def first_change(zone: ZoneInfo, low: datetime, high: datetime, before: timedelta) -> datetime:
    """The first second in ``(low, high]`` whose offset differs from ``before`` (one exists)."""
    lo, hi = 0, int((high - low).total_seconds())
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if offset_at(zone, low + timedelta(seconds=mid)) == before:
            lo = mid
        else:
            hi = mid
    return low + timedelta(seconds=hi)


def scan(zone: ZoneInfo, first_year: int, last_year: int) -> list[tuple[datetime, timedelta]]:
    """Transitions of ``zone`` in UTC years ``first_year..last_year``: (instant, new offset)."""
    found: list[tuple[datetime, timedelta]] = []
    instant, end = year_start(first_year), year_start(last_year + 1)
    offset = offset_at(zone, instant)
    while instant < end:
        probe = min(instant + PROBE_STEP, end)
        probed = offset_at(zone, probe)
        if probed != offset:
            instant = first_change(zone, instant, probe, offset)
            offset = offset_at(zone, instant)
            found.append((instant, offset))
            continue
        instant = probe
    return found


@dataclass(frozen=True, slots=True)
class Scanned:
    """The transitions of years ``first_year..last_year`` of one zone."""

    first_year: int
    last_year: int
    times: list[datetime]
    offsets: list[timedelta]
    base: timedelta  # the offset at the start of ``first_year``

    @property
    def start(self) -> datetime:
        return year_start(self.first_year)

    @property
    def end(self) -> datetime:
        return year_start(self.last_year + 1)


class ZoneOffsets:
    """The offset segments of one zone, discovered lazily and remembered."""

    __slots__ = ("scanned", "zone")

    def __init__(self, zone: ZoneInfo) -> None:
        self.zone = zone
        self.scanned: Scanned | None = None

    def segment(self, instant: datetime) -> Segment:
        """``(start, end, offset, offset_before)`` of the segment holding aware-UTC ``instant``.

        ``offset_before`` is the offset of the segment that ends at ``start``; ``start``/``end``
        may be scan boundaries (same offset on both sides) rather than real transitions.
        """
        scanned = self.scanned
        year = instant.year
        if scanned is None or not (
            scanned.first_year + MARGIN_YEARS <= year <= scanned.last_year - MARGIN_YEARS
        ):
            scanned = self.extend(year)
        times, offsets = scanned.times, scanned.offsets
        index = bisect_right(times, instant)
        end = times[index] if index < len(times) else scanned.end
        if index == 0:
            return scanned.start, end, scanned.base, scanned.base
        before = offsets[index - 2] if index >= 2 else scanned.base
        return times[index - 1], end, offsets[index - 1], before

    def extend(self, year: int) -> Scanned:
        """Scan so that ``year`` has :data:`MARGIN_YEARS` scanned years on each side."""
        low = max(year - MARGIN_YEARS, FIRST_SCAN_YEAR)
        high = min(year + MARGIN_YEARS, LAST_SCAN_YEAR)
        old = self.scanned
        far = old is None or not (
            old.first_year - BRIDGE_YEARS <= year <= old.last_year + BRIDGE_YEARS
        )
        if old is None or far:
            pairs = scan(self.zone, low, high)
            base = offset_at(self.zone, year_start(low))
        else:
            before = scan(self.zone, low, old.first_year - 1) if low < old.first_year else []
            after = scan(self.zone, old.last_year + 1, high) if high > old.last_year else []
            pairs = [*before, *zip(old.times, old.offsets, strict=True), *after]
            low, high = min(low, old.first_year), max(high, old.last_year)
            base = offset_at(self.zone, year_start(low))
        scanned = Scanned(low, high, [t for t, _ in pairs], [o for _, o in pairs], base)
        self.scanned = scanned
        return scanned


#: Keys of zones that are UTC under another name: evaluated with plain arithmetic.
UTC_KEYS = frozenset(
    {"UTC", "Etc/UTC", "Etc/UCT", "UCT", "Etc/Universal", "Universal", "Etc/Zulu", "Zulu",
     "GMT", "Etc/GMT", "Etc/GMT0", "Etc/GMT+0", "Etc/GMT-0", "GMT0", "GMT+0", "GMT-0",
     "Etc/Greenwich", "Greenwich"}
)  # fmt: skip
#: How many distinct ``tz`` arguments are remembered before the memo starts over.
RESOLVED_CACHE_SIZE = 512

Zone = timedelta | ZoneOffsets
UTC_OFFSET = timedelta(0)
_RESOLVED: dict[str | ZoneInfo, Zone] = {}
_TIMELINES: dict[ZoneInfo, ZoneOffsets] = {}


def resolve(tz: str | ZoneInfo | None) -> Zone:
    """A fixed UTC offset (``timedelta``) for UTC, else the zone's :class:`ZoneOffsets`.

    None means UTC (a schedule whose timezone was omitted). Raises ValueError for a name that
    is not a known IANA zone.
    """
    if tz is None:
        return UTC_OFFSET
    hit = _RESOLVED.get(tz)
    if hit is not None:
        return hit
    zone = _zone(tz)
    resolved: Zone
    if zone.key in UTC_KEYS:
        resolved = UTC_OFFSET
    else:
        resolved = _TIMELINES.get(zone) or ZoneOffsets(zone)
        _TIMELINES[zone] = resolved
    if len(_RESOLVED) >= RESOLVED_CACHE_SIZE:
        _RESOLVED.clear()
    _RESOLVED[tz] = resolved
    return resolved


def _zone(tz: str | ZoneInfo) -> ZoneInfo:
    if isinstance(tz, ZoneInfo):
        return tz
    if not isinstance(tz, str):
        raise TypeError(messages.zone_argument_invalid(tz))
    try:
        return ZoneInfo(tz)
    except (ZoneInfoNotFoundError, ValueError, OSError) as exc:
        raise ValueError(messages.zone_unknown(tz)) from exc
