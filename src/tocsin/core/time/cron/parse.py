"""``parse(expr, dialect=...)``: a cron expression's text to a validated :class:`CronSpec`.

Strict dialect (SPEC §4.4): exactly five fields — minute 0-59, hour 0-23, day-of-month 1-31,
month 1-12, day-of-week 0-6 (Sunday = 0) — of numbers, ``*``, lists, ranges and steps on ``*``
or a range. Extended dialect (SPEC §13): also names, day-of-week 7, ``value/step``, ``L``,
``nL``, ``n#k``, ``?``, and 6 fields (seconds first) or 7 (seconds first, year last).
Both reject an expression that can never fire. Every failure is a :class:`CronError`.
"""

from __future__ import annotations

import re
from functools import lru_cache

from tocsin import messages
from tocsin.core.time.cron import reasons
from tocsin.core.time.cron.fields import FIVE_FIELDS, SEVEN_FIELDS, SIX_FIELDS, YEAR, Field
from tocsin.core.time.cron.items import FieldParser, FieldValues
from tocsin.core.time.cron.spec import CronError, CronSpec, Dialect, matching_days

#: Years whose calendars cover every (leap, weekday-of-January-1st) combination, for the
#: never-fires check of a spec without a year field (2000 is a leap year, 2001-2027 cycle).
CALENDAR_CYCLE = range(2000, 2028)

DIALECTS = ("strict", "extended")
#: The longest expression taken (after whitespace collapses): what a schedule row's ``cron``
#: column holds, and far more than any expression needs (ranges and steps keep lists short).
#: A longer one would cost every parse (and every tick that misses the cache) its length.
MAX_EXPRESSION_CHARS = 200
PARSE_CACHE_SIZE = 1024
DAY_FIELDS = ("day-of-month", "month", "day-of-week", "year")


def parse(expr: str, *, dialect: Dialect = "strict") -> CronSpec:
    """Parse ``expr`` under ``dialect`` or raise :class:`CronError` naming the field and token.

    Runs of ASCII spaces and tabs between fields collapse (``CronSpec.expression`` keeps the
    collapsed text); surrounding line breaks are ignored. Any other whitespace (a non-breaking
    space, an ideographic space, a line break between fields) separates nothing and is refused.
    """
    if dialect not in DIALECTS:
        raise ValueError(messages.cron_dialect_unknown(dialect))
    if not isinstance(expr, str):
        raise CronError(reasons.not_text(expr))
    length = len(collapse_separators(expr))
    if length > MAX_EXPRESSION_CHARS:
        raise CronError(reasons.too_long(length, MAX_EXPRESSION_CHARS))
    return _remembered(collapse(expr), dialect)


#: Fields are separated by ASCII spaces and tabs only (SPEC §4.4); these are ignored around the
#: expression (a trailing newline from a file or a form).
SURROUNDING = " \t\r\n"


def collapse_separators(expr: str) -> str:
    """``expr`` with runs of spaces and tabs as one space and surrounding line breaks dropped;
    never raises (other whitespace stays, for :func:`parse` to refuse)."""
    return re.sub(r"[ \t]+", " ", expr.strip(SURROUNDING))


def collapse(expr: str) -> str:
    """:func:`collapse_separators`, refusing any other whitespace with a CronError."""
    text = collapse_separators(expr)
    for char in text:
        if char.isspace() and char != " ":
            raise CronError(reasons.bad_separator(char, text))
    return text


def build_spec(text: str, dialect: Dialect) -> CronSpec:
    """Parse whitespace-collapsed ``text`` (uncached; :func:`parse` remembers recent results)."""
    parts = text.split(" ") if text else []
    if not parts:
        raise CronError(reasons.empty_expression())
    if parts[0].startswith("@"):
        raise CronError(reasons.macro(parts[0], text))
    layout = _layout(len(parts), dialect, text)
    fields = {
        field.name: FieldParser(field, dialect, text).parse(part)
        for field, part in zip(layout, parts, strict=True)
    }
    spec = _build(text, dialect, fields)
    if not can_fire(spec):
        named = dict(zip((field.name for field in layout), parts, strict=True))
        day_fields = {name: named[name] for name in DAY_FIELDS if name in named}
        raise CronError(reasons.never_fires(text, day_fields))
    return spec


#: Specs are immutable, and schedules re-parse the same few expressions on every tick.
_remembered = lru_cache(maxsize=PARSE_CACHE_SIZE)(build_spec)


def _layout(count: int, dialect: Dialect, text: str) -> tuple[Field, ...]:
    if dialect == "strict":
        if count != 5:
            raise CronError(reasons.field_count_strict(count, text))
        return FIVE_FIELDS
    layouts = {5: FIVE_FIELDS, 6: SIX_FIELDS, 7: SEVEN_FIELDS}
    if count not in layouts:
        raise CronError(reasons.field_count_extended(count, text))
    return layouts[count]


def _build(text: str, dialect: Dialect, fields: dict[str, FieldValues]) -> CronSpec:
    dom, dow = fields["day-of-month"], fields["day-of-week"]
    seconds = fields["second"].values if "second" in fields else {0}
    years = tuple(sorted(fields["year"].values)) if "year" in fields else ()
    if len(years) == YEAR.high - YEAR.low + 1:
        years = ()
    return CronSpec(
        expression=text,
        dialect=dialect,
        seconds=tuple(sorted(seconds)),
        minutes=tuple(sorted(fields["minute"].values)),
        hours=tuple(sorted(fields["hour"].values)),
        days=tuple(sorted(dom.values)),
        months=tuple(sorted(fields["month"].values)),
        weekdays=tuple(sorted(dow.values)),
        years=years,
        last_day=dom.last_day,
        last_weekdays=tuple(sorted(dow.last_weekdays)),
        nth_weekdays=tuple(sorted(dow.nth_weekdays)),
        dom_star=dom.star,
        dow_star=dow.star,
        has_seconds="second" in fields,
    )


def can_fire(spec: CronSpec) -> bool:
    """Whether some calendar date matches the day, month and year fields (decided statically).

    Times of day always exist somewhere, so only dates matter; without a year field one
    28-year calendar cycle holds every month shape, with one the listed years are checked.
    """
    years = spec.years or CALENDAR_CYCLE
    return any(matching_days(spec, year, month) for year in years for month in spec.months)
