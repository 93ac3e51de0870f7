"""The field cascade: the first (last) wall-clock time at or after (before) a given one.

Wall times are plain ``(year, month, day, hour, minute, second)`` tuples — no zone, no DST:
the caller (``evaluate``) decides which wall times exist. Each step finds the next (previous)
set bit of a precomputed field mask; a field that runs out carries into the field above it and
the cascade restarts from the year, so whole non-matching years, months, days and hours are
skipped in one step each. Both searches stop at a year bound and return None beyond it.
"""

from __future__ import annotations

from datetime import datetime

from tocsin.core.cron.fields import YEAR
from tocsin.core.cron.spec import CronSpec, matching_days

Wall = tuple[int, int, int, int, int, int]


def wall_datetime(wall: Wall) -> datetime:
    """A wall time as a naive datetime: naive on purpose, it is not yet in any zone."""
    return datetime(*wall)  # noqa: DTZ001 - a wall time, made aware by the caller


def next_bit(mask: int, value: int) -> int:
    """The smallest set bit of ``mask`` at or above ``value``; -1 when there is none."""
    rest = mask >> value
    if not rest:
        return -1
    return value + (rest & -rest).bit_length() - 1


def prev_bit(mask: int, value: int) -> int:
    """The largest set bit of ``mask`` at or below ``value``; -1 when there is none."""
    if value < 0:
        return -1
    return (mask & ((2 << value) - 1)).bit_length() - 1


def next_wall(spec: CronSpec, start: Wall, last_year: int) -> Wall | None:
    """The first matching wall time ``>= start``, or None past the end of ``last_year``."""
    year, month, day, hour, minute, second = start
    while year <= last_year:
        if spec.year_mask:
            found = next_bit(spec.year_mask, max(year - YEAR.low, 0))
            if found < 0:
                return None
            if found + YEAR.low != year:
                year, month, day, hour, minute, second = found + YEAR.low, 1, 1, 0, 0, 0
                continue
        found = next_bit(spec.month_mask, month)
        if found < 0:
            year, month, day, hour, minute, second = year + 1, 1, 1, 0, 0, 0
            continue
        if found != month:
            month, day, hour, minute, second = found, 1, 0, 0, 0
        found = next_bit(matching_days(spec, year, month), day)
        if found < 0:
            month, day, hour, minute, second = month + 1, 1, 0, 0, 0
            continue
        if found != day:
            day, hour, minute, second = found, 0, 0, 0
        found = next_bit(spec.hour_mask, hour)
        if found < 0:
            day, hour, minute, second = day + 1, 0, 0, 0
            continue
        if found != hour:
            hour, minute, second = found, 0, 0
        found = next_bit(spec.minute_mask, minute)
        if found < 0:
            hour, minute, second = hour + 1, 0, 0
            continue
        if found != minute:
            minute, second = found, 0
        found = next_bit(spec.second_mask, second)
        if found < 0:
            minute, second = minute + 1, 0
            continue
        return year, month, day, hour, minute, found
    return None


def prev_wall(spec: CronSpec, start: Wall, first_year: int) -> Wall | None:
    """The last matching wall time ``<= start``, or None before the start of ``first_year``."""
    year, month, day, hour, minute, second = start
    while year >= first_year:
        if spec.year_mask:
            found = prev_bit(spec.year_mask, year - YEAR.low)
            if found < 0:
                return None
            if found + YEAR.low != year:
                year, month, day, hour, minute, second = found + YEAR.low, 12, 31, 23, 59, 59
                continue
        found = prev_bit(spec.month_mask, month)
        if found < 0:
            year, month, day, hour, minute, second = year - 1, 12, 31, 23, 59, 59
            continue
        if found != month:
            month, day, hour, minute, second = found, 31, 23, 59, 59
        found = prev_bit(matching_days(spec, year, month), day)
        if found < 0:
            month, day, hour, minute, second = month - 1, 31, 23, 59, 59
            continue
        if found != day:
            day, hour, minute, second = found, 23, 59, 59
        found = prev_bit(spec.hour_mask, hour)
        if found < 0:
            day, hour, minute, second = day - 1, 23, 59, 59
            continue
        if found != hour:
            hour, minute, second = found, 59, 59
        found = prev_bit(spec.minute_mask, minute)
        if found < 0:
            hour, minute, second = hour - 1, 59, 59
            continue
        if found != minute:
            minute, second = found, 59
        found = prev_bit(spec.second_mask, second)
        if found < 0:
            minute, second = minute - 1, 59
            continue
        return year, month, day, hour, minute, found
    return None
