"""The fields of a cron expression: names, bounds and the symbolic names of the extended dialect.

A field is addressed by its :class:`Field` constant; the strict dialect (SPEC §4.4) uses the five
classic fields, the extended dialect (SPEC §13) may add ``SECOND`` first and ``YEAR`` last.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Field:
    """One cron field: its display name and the inclusive bounds of its values."""

    name: str
    low: int
    high: int


SECOND = Field("second", 0, 59)
MINUTE = Field("minute", 0, 59)
HOUR = Field("hour", 0, 23)
DAY_OF_MONTH = Field("day-of-month", 1, 31)
MONTH = Field("month", 1, 12)
DAY_OF_WEEK = Field("day-of-week", 0, 6)
YEAR = Field("year", 1970, 2199)

#: The day-of-week bounds of the extended dialect, where 7 is Sunday again.
DAY_OF_WEEK_EXTENDED = Field("day-of-week", 0, 7)

FIVE_FIELDS = (MINUTE, HOUR, DAY_OF_MONTH, MONTH, DAY_OF_WEEK)
SIX_FIELDS = (SECOND, *FIVE_FIELDS)
SEVEN_FIELDS = (*SIX_FIELDS, YEAR)

MONTH_NAMES = (
    "JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC",
)  # fmt: skip
DAY_NAMES = ("SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT")

#: Symbolic values of the extended dialect, per field name, upper case.
SYMBOLS: dict[str, dict[str, int]] = {
    MONTH.name: {name: number for number, name in enumerate(MONTH_NAMES, start=1)},
    DAY_OF_WEEK.name: {name: number for number, name in enumerate(DAY_NAMES)},
}

#: Days in each month of a common year (index 1..12); February gains a day in leap years.
DAYS_IN_MONTH = (0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def is_leap(year: int) -> bool:
    """Whether ``year`` is a Gregorian leap year."""
    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)


def days_in_month(year: int, month: int) -> int:
    """The number of days of ``month`` in ``year``."""
    if month == 2 and is_leap(year):
        return 29
    return DAYS_IN_MONTH[month]
