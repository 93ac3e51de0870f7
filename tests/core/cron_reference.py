"""A brute-force cron oracle for the tests: walk real UTC instants one step at a time.

Independent of ``tocsin.core.time.cron.evaluate``: it converts every instant to wall time with
``astimezone`` (so gap wall times are never produced) and matches the fields with the calendar
module. For ``repeated="first"`` it skips an instant whose wall time already occurred (zoneinfo
marks that second occurrence ``fold=1``); for ``"both"`` it keeps it. It trusts only the value
sets that ``parse`` produced (parse has its own tests).
"""

from __future__ import annotations

import calendar
from datetime import UTC, datetime, timedelta
from functools import cache
from zoneinfo import ZoneInfo

from tocsin.core.time.cron import CronSpec


def day_matches(spec: CronSpec, local: datetime) -> bool:
    """The day-of-month / day-of-week rule of SPEC §4.4 (Vixie: OR unless either is starred)."""
    length = calendar.monthrange(local.year, local.month)[1]
    weekday = local.isoweekday() % 7
    dom = local.day in spec.days or (spec.last_day and local.day == length)
    dow = (
        weekday in spec.weekdays
        or (weekday in spec.last_weekdays and local.day + 7 > length)
        or (weekday, (local.day - 1) // 7 + 1) in spec.nth_weekdays
    )
    if spec.dom_star or spec.dow_star:
        return dom and dow
    return dom or dow


def wall_matches(spec: CronSpec, local: datetime) -> bool:
    return (
        (not spec.years or local.year in spec.years)
        and local.month in spec.months
        and local.hour in spec.hours
        and local.minute in spec.minutes
        and local.second in spec.seconds
        and day_matches(spec, local)
    )


def step_of(spec: CronSpec) -> timedelta:
    return timedelta(seconds=1) if spec.has_seconds else timedelta(minutes=1)


def fires(spec: CronSpec, instant: datetime, zone: ZoneInfo, repeated: str) -> bool:
    local = instant.astimezone(zone)
    if repeated == "first" and local.fold == 1:
        return False
    return wall_matches(spec, local)


def _floor(instant: datetime, step: timedelta) -> datetime:
    instant = instant.astimezone(UTC).replace(microsecond=0)
    if step == timedelta(minutes=1):
        instant = instant.replace(second=0)
    return instant


def ref_next(
    spec: CronSpec, after: datetime, zone: ZoneInfo, repeated: str, horizon: timedelta
) -> datetime | None:
    """The first fire in ``(after, after + horizon]``, or None."""
    step = step_of(spec)
    instant, end = _floor(after, step) + step, after + horizon
    while instant <= end:
        if fires(spec, instant, zone, repeated):
            return instant
        instant += step
    return None


def ref_prev(
    spec: CronSpec, at: datetime, zone: ZoneInfo, repeated: str, horizon: timedelta
) -> datetime | None:
    """The last fire in ``[at - horizon, at]``, or None."""
    step = step_of(spec)
    instant, end = _floor(at, step), at - horizon
    while instant >= end:
        if fires(spec, instant, zone, repeated):
            return instant
        instant -= step
    return None


@cache
def transitions(
    zone_name: str, first_year: int = 2024, last_year: int = 2027
) -> tuple[datetime, ...]:
    """UTC instants (to the minute) where ``zone_name`` changes its UTC offset, by hourly probes."""
    zone = ZoneInfo(zone_name)
    found: list[datetime] = []
    instant = datetime(first_year, 1, 1, tzinfo=UTC)
    end = datetime(last_year + 1, 1, 1, tzinfo=UTC)
    offset = instant.astimezone(zone).utcoffset()
    while instant < end:
        probe = instant + timedelta(hours=1)
        if probe.astimezone(zone).utcoffset() != offset:
            minute = instant
            while minute.astimezone(zone).utcoffset() == offset:
                minute += timedelta(minutes=1)
            found.append(minute)
            offset = minute.astimezone(zone).utcoffset()
        instant = probe
    return tuple(found)
