"""The field cascade: the first (last) wall-clock time at or after (before) a given one.

Wall times are plain ``(year, month, day, hour, minute, second)`` tuples — no zone, no DST:
the caller (``evaluate``) decides which wall times exist. Each step finds the next (previous)
set bit of a precomputed field mask; a field that runs out carries into the field above it and
the cascade restarts from the year, so whole non-matching years, months, days and hours are
skipped in one step each. The lowest fields of ``start`` may overflow (minute 60, second 60):
they carry like any exhausted field. Both searches stop at a year bound and return None
beyond it. The bit scans are written out inline: this is the evaluator's hot loop.
"""

from __future__ import annotations

from tocsin.core.time.cron.fields import YEAR
from tocsin.core.time.cron.spec import CronSpec, matching_days

Wall = tuple[int, int, int, int, int, int]


def next_wall(spec: CronSpec, start: Wall, last_year: int) -> Wall | None:
    """The first matching wall time ``>= start``, or None past the end of ``last_year``."""
    year, month, day, hour, minute, second = start
    cache = spec.day_cache
    while year <= last_year:
        if spec.year_mask and not _year_matches(spec, year):
            year = _next_year(spec, year)
            month, day, hour, minute, second = 1, 1, 0, 0, 0
            continue
        rest = spec.month_mask >> month
        if not rest:
            year, month, day, hour, minute, second = year + 1, 1, 1, 0, 0, 0
            continue
        if not rest & 1:
            month, day, hour, minute, second = month + (rest & -rest).bit_length() - 1, 1, 0, 0, 0
        days = cache.get(year * 16 + month)
        rest = (matching_days(spec, year, month) if days is None else days) >> day
        if not rest:
            month, day, hour, minute, second = month + 1, 1, 0, 0, 0
            continue
        if not rest & 1:
            day, hour, minute, second = day + (rest & -rest).bit_length() - 1, 0, 0, 0
        rest = spec.hour_mask >> hour
        if not rest:
            day, hour, minute, second = day + 1, 0, 0, 0
            continue
        if not rest & 1:
            hour, minute, second = hour + (rest & -rest).bit_length() - 1, 0, 0
        rest = spec.minute_mask >> minute
        if not rest:
            hour, minute, second = hour + 1, 0, 0
            continue
        if not rest & 1:
            minute, second = minute + (rest & -rest).bit_length() - 1, 0
        rest = spec.second_mask >> second
        if not rest:
            minute, second = minute + 1, 0
            continue
        return year, month, day, hour, minute, second + (rest & -rest).bit_length() - 1
    return None


def prev_wall(spec: CronSpec, start: Wall, first_year: int) -> Wall | None:
    """The last matching wall time ``<= start``, or None before the start of ``first_year``."""
    year, month, day, hour, minute, second = start
    while year >= first_year:
        if spec.year_mask and not _year_matches(spec, year):
            year = _prev_year(spec, year)
            month, day, hour, minute, second = 12, 31, 23, 59, 59
            continue
        found = _prev_bit(spec.month_mask, month)
        if found < 0:
            year, month, day, hour, minute, second = year - 1, 12, 31, 23, 59, 59
            continue
        if found != month:
            month, day, hour, minute, second = found, 31, 23, 59, 59
        found = _prev_bit(matching_days(spec, year, month), day)
        if found < 0:
            month, day, hour, minute, second = month - 1, 31, 23, 59, 59
            continue
        if found != day:
            day, hour, minute, second = found, 23, 59, 59
        found = _prev_bit(spec.hour_mask, hour)
        if found < 0:
            day, hour, minute, second = day - 1, 23, 59, 59
            continue
        if found != hour:
            hour, minute, second = found, 59, 59
        found = _prev_bit(spec.minute_mask, minute)
        if found < 0:
            hour, minute, second = hour - 1, 59, 59
            continue
        if found != minute:
            minute, second = found, 59
        found = _prev_bit(spec.second_mask, second)
        if found < 0:
            minute, second = minute - 1, 59
            continue
        return year, month, day, hour, minute, found
    return None


def _prev_bit(mask: int, value: int) -> int:
    """The largest set bit of ``mask`` at or below ``value``; -1 when there is none."""
    if value < 0:
        return -1
    return (mask & ((2 << value) - 1)).bit_length() - 1


def _year_matches(spec: CronSpec, year: int) -> bool:
    offset = year - YEAR.low
    return offset >= 0 and bool(spec.year_mask >> offset & 1)


def _next_year(spec: CronSpec, year: int) -> int:
    """The next listed year after ``year``, or a year past every bound when there is none."""
    offset = max(year - YEAR.low, 0)
    rest = spec.year_mask >> offset
    if not rest:
        return YEAR.high + 10_000
    return YEAR.low + offset + (rest & -rest).bit_length() - 1


def _prev_year(spec: CronSpec, year: int) -> int:
    """The previous listed year before ``year``, or a year before every bound when none."""
    found = _prev_bit(spec.year_mask, year - YEAR.low)
    return YEAR.low + found if found >= 0 else -10_000
