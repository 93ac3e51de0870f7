"""The parsed cron expression, :class:`CronSpec`, and the days it matches in a month.

Everything the evaluator needs is computed once, when the spec is built: each field becomes a
sorted tuple (for reading) and an integer bitmask (bit ``v`` set when value ``v`` matches), and
the day-of-week field becomes seven day-of-month masks, one per weekday of the month's first day.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from typing import Literal

from tocsin import messages
from tocsin.core.time.cron.fields import YEAR, days_in_month
from tocsin.errors import ConfigError

Dialect = Literal["strict", "extended"]

#: WEEKLY_DAYS[k]: the days 1..31 that fall k days after a month's first weekday, weekly.
WEEKLY_DAYS = tuple(sum(1 << day for day in range(1 + k, 32, 7)) for k in range(7))
ALL_DAYS = (1 << 32) - 2
#: How many (year, month) day masks a spec remembers before it starts over.
DAY_CACHE_SIZE = 1024


class CronError(ConfigError):
    """A cron expression is invalid: ``cron schedule invalid: <reason>`` (SPEC §4.4, §7)."""

    def __init__(self, reason: str) -> None:
        super().__init__(messages.cron_invalid(reason), code="cron_expression_invalid")
        self.reason = reason


def mask_of(values: tuple[int, ...]) -> int:
    """The bitmask with bit ``v`` set for every ``v`` in the sorted, distinct ``values``."""
    if values and values[-1] - values[0] + 1 == len(values):  # a run: no loop needed
        return (1 << (values[-1] + 1)) - (1 << values[0])
    mask = 0
    for value in values:
        mask |= 1 << value
    return mask


@dataclass(frozen=True, slots=True, kw_only=True)
class CronSpec:
    """A validated cron expression with its value sets precomputed.

    ``days``/``weekdays`` hold the plain day-of-month / day-of-week values (Sunday = 0);
    ``last_day`` is ``L`` in day-of-month, ``last_weekdays`` the ``nL`` items, ``nth_weekdays``
    the ``n#k`` items as ``(n, k)``. ``years`` is empty when any year matches. ``dom_star`` /
    ``dow_star`` say the field text started with ``*`` (or ``?``): as in Vixie cron, the day
    matches when both day fields match if either is starred, and when either matches otherwise.
    """

    expression: str
    dialect: Dialect
    seconds: tuple[int, ...]
    minutes: tuple[int, ...]
    hours: tuple[int, ...]
    days: tuple[int, ...]
    months: tuple[int, ...]
    weekdays: tuple[int, ...]
    years: tuple[int, ...] = ()
    last_day: bool = False
    last_weekdays: tuple[int, ...] = ()
    nth_weekdays: tuple[tuple[int, int], ...] = ()
    dom_star: bool = True
    dow_star: bool = True
    has_seconds: bool = False
    second_mask: int = field(init=False, repr=False, compare=False)
    minute_mask: int = field(init=False, repr=False, compare=False)
    hour_mask: int = field(init=False, repr=False, compare=False)
    month_mask: int = field(init=False, repr=False, compare=False)
    year_mask: int = field(init=False, repr=False, compare=False)
    day_mask: int = field(init=False, repr=False, compare=False)
    weekday_masks: tuple[int, ...] = field(init=False, repr=False, compare=False)
    day_cache: dict[int, int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        setter = object.__setattr__
        setter(self, "second_mask", mask_of(self.seconds))
        setter(self, "minute_mask", mask_of(self.minutes))
        setter(self, "hour_mask", mask_of(self.hours))
        setter(self, "month_mask", mask_of(self.months))
        setter(self, "year_mask", mask_of(self.years) >> YEAR.low)
        setter(self, "day_mask", mask_of(self.days))
        if len(self.weekdays) == 7:
            weekday_masks: tuple[int, ...] = (ALL_DAYS,) * 7
        else:
            weekday_masks = tuple([self._weekday_mask(first) for first in range(7)])
        setter(self, "weekday_masks", weekday_masks)
        setter(self, "day_cache", {})

    def _weekday_mask(self, first: int) -> int:
        """Days 1..35 matching ``weekdays`` and ``nth_weekdays`` when day 1 is weekday ``first``."""
        mask = 0
        for weekday in self.weekdays:
            mask |= WEEKLY_DAYS[(weekday - first) % 7]
        for weekday, nth in self.nth_weekdays:
            mask |= 1 << (1 + (weekday - first) % 7 + 7 * (nth - 1))
        return mask


def matching_days(spec: CronSpec, year: int, month: int) -> int:
    """The mask of the days of ``year``-``month`` (bits 1..28-31) on which ``spec`` fires."""
    key = year * 16 + month
    cached = spec.day_cache.get(key)
    if cached is not None:
        return cached
    length = days_in_month(year, month)
    valid = (1 << (length + 1)) - 2
    first = (date(year, month, 1).weekday() + 1) % 7
    dom = spec.day_mask | ((1 << length) if spec.last_day else 0)
    dow = spec.weekday_masks[first]
    if spec.last_weekdays:
        last_weekday = (first + length - 1) % 7
        for weekday in spec.last_weekdays:
            dow |= 1 << (length - (last_weekday - weekday) % 7)
    days = (dom & dow) if (spec.dom_star or spec.dow_star) else (dom | dow)
    days &= valid
    if len(spec.day_cache) >= DAY_CACHE_SIZE:
        spec.day_cache.clear()
    spec.day_cache[key] = days
    return days
