"""Parse one field of a cron expression into its values, following the field's dialect.

Strict (SPEC §4.4): decimal numbers, ``*``, comma lists, closed ranges ``a-b`` and positive
steps on ``*`` or a range. Extended (SPEC §13) adds month/day names, day-of-week 7 = Sunday,
``value/step``, ``L`` (day-of-month: last day; day-of-week alone: Saturday), ``nL``, ``n#k`` and
``?`` (= ``*`` in the day fields).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from tocsin.core.time.cron import reasons
from tocsin.core.time.cron.fields import (
    DAY_NAMES,
    DAY_OF_MONTH,
    DAY_OF_WEEK,
    DAY_OF_WEEK_EXTENDED,
    MONTH_NAMES,
    SYMBOLS,
    Field,
)
from tocsin.core.time.cron.spec import CronError

DIGITS = frozenset("0123456789")
NAMES = frozenset(MONTH_NAMES) | frozenset(DAY_NAMES)
SATURDAY = 6


@dataclass(slots=True)
class FieldValues:
    """What one field matches: plain values plus the extended day tokens."""

    values: set[int] = field(default_factory=set)
    last_day: bool = False
    last_weekdays: set[int] = field(default_factory=set)
    nth_weekdays: set[tuple[int, int]] = field(default_factory=set)
    star: bool = False


class FieldParser:
    """Parses the text of ``field`` within ``expr`` under ``dialect``."""

    __slots__ = ("bounds", "dialect", "expr", "extended", "field")

    def __init__(self, field: Field, dialect: str, expr: str) -> None:
        self.field, self.dialect, self.expr = field, dialect, expr
        self.extended = dialect == "extended"
        extended_dow = self.extended and field is DAY_OF_WEEK
        #: the accepted numbers: day-of-week takes 7 (Sunday) in the extended dialect
        self.bounds = DAY_OF_WEEK_EXTENDED if extended_dow else field

    def fail(self, reason: str) -> CronError:
        return CronError(reason)

    def classify(self, token: str) -> str:
        """The reason a token that is neither a number nor an accepted name is rejected."""
        name, upper = self.field.name, token.upper()
        if upper in NAMES:
            if self.extended:
                return reasons.name_wrong_field(name, token, self.expr)
            return reasons.name_not_allowed(name, token, self.expr)
        letters = {ch for ch in upper if "A" <= ch <= "Z"}
        symbols = [s for s in ("?", "#") if s in token]
        if letters and letters <= {"L", "W"}:
            symbols.append("W" if "W" in letters else "L")
        if symbols:
            return reasons.symbol_not_allowed(name, symbols[0], token, self.dialect, self.expr)
        return reasons.not_a_number(name, token, self.expr)

    def parse(self, text: str) -> FieldValues:
        """All items of the comma list ``text``."""
        if text == "*":
            return FieldValues(values=set(range(self.field.low, self.field.high + 1)), star=True)
        result = FieldValues(star=text.startswith("*") or (self.extended and text.startswith("?")))
        if self.extended and "?" in text.split(",") and text != "?":
            raise self.fail(reasons.question_not_alone(self.field.name, text, self.expr))
        for item in text.split(","):
            if not item:
                raise self.fail(reasons.empty_item(self.field.name, text, self.expr))
            self.parse_item(item, result)
        return result

    def parse_item(self, item: str, into: FieldValues) -> None:
        if self.extended and self.parse_special(item, into):
            return
        into.values.update(self.parse_range(item))

    def parse_special(self, item: str, into: FieldValues) -> bool:
        """The extended day tokens ``?``, ``L``, ``nL``, ``n#k``; False for anything else."""
        upper = item.upper()
        if upper == "?" and self.field in (DAY_OF_MONTH, DAY_OF_WEEK):
            into.values.update(range(self.field.low, self.field.high + 1))
            return True
        if self.field is DAY_OF_MONTH and upper == "L":
            into.last_day = True
            return True
        if self.field is not DAY_OF_WEEK:
            return False
        if upper == "L":
            into.values.add(SATURDAY)
            return True
        if "#" in upper:
            weekday, _, nth = item.partition("#")
            if not nth or set(nth) - DIGITS or not 1 <= int(nth) <= 5:
                raise self.fail(reasons.nth_out_of_range(self.field.name, item, self.expr))
            into.nth_weekdays.add((self.weekday(weekday), int(nth)))
            return True
        if len(upper) > 1 and upper.endswith("L") and upper not in NAMES:
            into.last_weekdays.add(self.weekday(item[:-1]))
            return True
        return False

    def weekday(self, token: str) -> int:
        """A single day-of-week value (0-7 or a name), 7 folded to Sunday = 0."""
        return self.value(token) % 7

    def parse_range(self, item: str) -> Iterable[int]:
        """``*``, ``a``, ``a-b``, each optionally ``/step``; the values it denotes."""
        base, slash, step_text = item.partition("/")
        low, high = self.bounds.low, self.bounds.high
        if base == "*":
            start, stop = low, high
        elif "-" in base:
            first, _, last = base.partition("-")
            if not first or not last:
                raise self.fail(reasons.not_a_number(self.field.name, item, self.expr))
            start, stop = self.value(first), self.value(last)
            if start > stop:
                raise self.fail(reasons.reversed_range(self.field.name, item, self.expr))
        else:
            start = stop = self.value(base)
            if slash and not self.extended:
                raise self.fail(reasons.step_on_value(self.field.name, item, self.expr))
            if slash:
                stop = high
        step = self.step(item, step_text) if slash else 1
        values = range(start, stop + 1, step)
        if self.bounds is DAY_OF_WEEK_EXTENDED:
            return {value % 7 for value in values}
        return values

    def step(self, item: str, text: str) -> int:
        if not text or set(text) - DIGITS:
            raise self.fail(reasons.not_a_number(self.field.name, item, self.expr))
        step = int(text)
        if step == 0:
            raise self.fail(reasons.step_not_positive(self.field.name, item, self.expr))
        return step

    def value(self, token: str) -> int:
        """One number (ASCII digits only) or, in the extended dialect, a name; range-checked."""
        name = self.field.name
        symbols = SYMBOLS.get(name, {}) if self.extended else {}
        if token.upper() in symbols:
            return symbols[token.upper()]
        if not token or set(token) - DIGITS:
            raise self.fail(self.classify(token))
        number = int(token)
        if not self.bounds.low <= number <= self.bounds.high:
            raise self.fail(
                reasons.out_of_range(name, token, self.bounds.low, self.bounds.high, self.expr)
            )
        return number
