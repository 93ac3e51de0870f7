"""Parsing of cron expressions: the strict dialect (SPEC §4.4) and the extended one (SPEC §13).

Every rejection is a ``CronError`` (a ``ConfigError``, code ``cron_expression_invalid``) whose
message is ``cron schedule invalid: <reason>``; the reason names the field and quotes the token.
"""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime
from itertools import islice

import pytest

from tocsin.core.schedules.spec import parse_schedule
from tocsin.core.time.cron import (
    CronError,
    CronSpec,
    iter_after,
    next_after,
    parse,
    prev_at_or_before,
)
from tocsin.errors import ConfigError

PREFIX = "cron schedule invalid: "
NOW = datetime(2026, 8, 27, 5, 2, 13, tzinfo=UTC)


def rejected(expr: str, dialect: str = "strict") -> str:
    """The reason of the CronError raised for ``expr``, after checking the error's contract."""
    with pytest.raises(CronError) as info:
        parse(expr, dialect=dialect)  # type: ignore[arg-type]
    error = info.value
    assert isinstance(error, ConfigError) and isinstance(error, ValueError)
    assert error.code == "cron_expression_invalid"
    assert error.status == 400
    assert error.detail == str(error) == PREFIX + error.reason
    return error.reason


# (rejection class of SPEC §4.4, expression, words the reason must contain)
STRICT_REJECTIONS = [
    ("seconds field", "0 0 9 * * 1", ["expected 5 fields", "got 6", "seconds or sixth field"]),
    ("sixth field", "0 9 * * 1 2026", ["expected 5 fields", "got 6", "'0 9 * * 1 2026'"]),
    ("seven fields", "0 0 9 * * 1 2026", ["expected 5 fields", "got 7"]),
    ("too few fields", "0 9 * *", ["expected 5 fields", "got 4"]),
    ("macro", "@daily", ["macro '@daily'"]),
    ("macro", "@reboot", ["macro '@reboot'"]),
    ("month name", "0 9 1 JAN *", ["month name 'JAN'", "strict dialect"]),
    ("month name", "0 9 1 jan-mar *", ["month name 'jan'"]),
    ("day name", "0 9 * * MON", ["day-of-week name 'MON'"]),
    ("day name", "0 9 * * mon-fri", ["day-of-week name 'mon'"]),
    ("day-of-week 7", "0 0 * * 7", ["day-of-week value '7' out of range 0-6 in '0 0 * * 7'"]),
    ("day-of-week 7", "0 0 * * 5-7", ["day-of-week value '7' out of range 0-6"]),
    ("?", "0 0 ? * 1", ["day-of-month '?'", "strict dialect"]),
    ("?", "0 0 1 * ?", ["day-of-week '?'"]),
    ("L", "0 0 L * *", ["day-of-month 'L' in 'L'"]),
    ("L", "0 0 * * 5L", ["day-of-week 'L' in '5L'"]),
    ("W", "0 0 15W * *", ["day-of-month 'W' in '15W'"]),
    ("W", "0 0 LW * *", ["day-of-month 'W' in 'LW'"]),
    ("#", "0 0 * * 1#2", ["day-of-week '#' in '1#2'"]),
    ("reversed range", "0 0 * * 5-1", ["day-of-week range '5-1' is reversed"]),
    ("reversed range", "50-10 * * * *", ["minute range '50-10' is reversed"]),
    ("step on a single value", "5/15 * * * *", ["minute step '5/15' is on a single value"]),
    ("step on a single value", "0 3/2 * * *", ["hour step '3/2'"]),
    ("step zero", "*/0 * * * *", ["minute step '*/0' must be a positive number"]),
    ("minute range", "60 * * * *", ["minute value '60' out of range 0-59"]),
    ("hour range", "0 24 * * *", ["hour value '24' out of range 0-23"]),
    ("day-of-month range", "0 0 0 * *", ["day-of-month value '0' out of range 1-31"]),
    ("day-of-month range", "0 0 32 * *", ["day-of-month value '32' out of range 1-31"]),
    ("month range", "0 0 1 13 *", ["month value '13' out of range 1-12"]),
    ("month range", "0 0 1 0 *", ["month value '0' out of range 1-12"]),
    ("empty list item", "1,,2 * * * *", ["minute list '1,,2' has an empty item"]),
    ("empty list item", "0 0 * * 1,", ["day-of-week list '1,' has an empty item"]),
    ("garbage", "x * * * *", ["minute value 'x' is not a number"]),
    ("garbage", "¹ * * * *", ["minute value '¹' is not a number"]),
    ("garbage", "-1 * * * *", ["minute value '-1' is not a number"]),
    ("garbage", "1- * * * *", ["minute value '1-' is not a number"]),
    ("garbage", "*/x * * * *", ["minute value '*/x' is not a number"]),
    ("garbage", "0 0 1-2-3 * *", ["day-of-month value '2-3' is not a number"]),
]


@pytest.mark.parametrize(("kind", "expr", "words"), STRICT_REJECTIONS)
def test_strict_dialect_rejects(kind: str, expr: str, words: list[str]) -> None:
    reason = rejected(expr)
    for word in words:
        assert word in reason, (kind, reason)
    assert f"'{' '.join(expr.split())}'" in reason


@pytest.mark.parametrize("expr", ["", "   ", "\t\n"])
def test_an_empty_expression_is_rejected(expr: str) -> None:
    assert "empty" in rejected(expr)


def test_a_non_string_is_rejected() -> None:
    with pytest.raises(CronError, match=r"^cron schedule invalid: the expression must be text"):
        parse(5)  # type: ignore[arg-type]


NEVER_FIRES = [
    ("0 0 30 2 *", "strict", "day-of-month '30', month '2'"),
    ("0 0 31 4,6,9,11 *", "strict", "day-of-month '31', month '4,6,9,11'"),
    ("0 0 30,31 2 *", "strict", "day-of-month '30,31'"),
    ("0 0 0 30 FEB ? *", "extended", "month 'FEB'"),
    ("0 0 */40 * 1#2", "extended", "day-of-week '1#2'"),  # starred dom: AND with dow
    ("0 0 0 29 2 ? 2025-2027", "extended", "year '2025-2027'"),  # no leap year
]


@pytest.mark.parametrize(("expr", "dialect", "names"), NEVER_FIRES)
def test_an_expression_that_can_never_fire_is_rejected(expr: str, dialect: str, names: str) -> None:
    reason = rejected(expr, dialect)
    assert reason.startswith(f"'{expr}' can never fire")
    assert names in reason


@pytest.mark.parametrize(
    ("expr", "dialect", "expected"),
    [
        ("0 0 29 2 *", "strict", "2028-02-29T00:00:00+00:00"),  # leap years
        ("0 0 31 2 5", "strict", "2027-02-05T00:00:00+00:00"),  # OR rule: Fridays of February
        ("0 0 0 29 2 ? 2028", "extended", "2028-02-29T00:00:00+00:00"),
        ("0 0 * 2 1#5", "extended", "2044-02-29T00:00:00+00:00"),  # a Monday Feb 29th
    ],
)
def test_rare_but_possible_expressions_are_accepted(expr: str, dialect: str, expected: str) -> None:
    fire = next_after(parse(expr, dialect=dialect), NOW)  # type: ignore[arg-type]
    assert fire is not None and fire.isoformat() == expected


def test_whitespace_runs_collapse_and_the_text_is_kept_as_written() -> None:
    spec = parse("  0   9\t* *  1-5,0 ")
    assert spec.expression == "0 9 * * 1-5,0"
    assert spec.dialect == "strict"
    assert spec.weekdays == (0, 1, 2, 3, 4, 5)
    assert parse("0 9 * * 1-5,0") == spec


def test_spec_is_frozen_and_carries_value_sets() -> None:
    spec = parse("*/15 8-18/2 1,15 * 1-5")
    assert spec.minutes == (0, 15, 30, 45)
    assert spec.hours == (8, 10, 12, 14, 16, 18)
    assert spec.days == (1, 15)
    assert spec.months == tuple(range(1, 13))
    assert not spec.dom_star and not spec.dow_star
    assert spec.seconds == (0,) and not spec.has_seconds
    with pytest.raises(dataclasses.FrozenInstanceError):
        spec.expression = "x"  # type: ignore[misc]
    assert isinstance(spec, CronSpec)


def test_strict_extended_forms_and_unknown_dialect() -> None:
    assert "'L'" in rejected("0 0 L * *", "strict")
    with pytest.raises(ValueError, match="unknown cron dialect"):
        parse("* * * * *", dialect="quartz")  # type: ignore[arg-type]


def fires(expr: str, start: datetime, count: int) -> list[str]:
    spec = parse(expr, dialect="extended")
    return [f.isoformat() for f in islice(iter_after(spec, start), count)]


JAN = datetime(2025, 1, 1, tzinfo=UTC)


@pytest.mark.parametrize(
    ("expr", "expected"),
    [
        ("0 0 L * *", ["2025-01-31T00:00:00+00:00", "2025-02-28T00:00:00+00:00",
                       "2025-03-31T00:00:00+00:00"]),
        ("0 0 * * 5L", ["2025-01-31T00:00:00+00:00", "2025-02-28T00:00:00+00:00",
                        "2025-03-28T00:00:00+00:00"]),
        ("0 0 * * FRIL", ["2025-01-31T00:00:00+00:00"]),
        ("0 0 * * 1#2", ["2025-01-13T00:00:00+00:00", "2025-02-10T00:00:00+00:00",
                         "2025-03-10T00:00:00+00:00"]),
        ("0 0 * * SUN#1", ["2025-01-05T00:00:00+00:00", "2025-02-02T00:00:00+00:00"]),
        ("25/10 * * * *", ["2025-01-01T00:25:00+00:00", "2025-01-01T00:35:00+00:00",
                           "2025-01-01T00:45:00+00:00", "2025-01-01T00:55:00+00:00",
                           "2025-01-01T01:25:00+00:00"]),
        ("0 0 * * 7", ["2025-01-05T00:00:00+00:00", "2025-01-12T00:00:00+00:00"]),
        ("0 0 * * 5-7", ["2025-01-03T00:00:00+00:00", "2025-01-04T00:00:00+00:00",
                         "2025-01-05T00:00:00+00:00", "2025-01-10T00:00:00+00:00"]),
        ("0 0 * * L", ["2025-01-04T00:00:00+00:00", "2025-01-11T00:00:00+00:00"]),
        ("0 0 ? * MON", ["2025-01-06T00:00:00+00:00", "2025-01-13T00:00:00+00:00"]),
        ("0 9 1 jan-mar Mon-Fri", ["2025-01-01T09:00:00+00:00", "2025-01-02T09:00:00+00:00"]),
        ("0 12 15 FEB,aug ?", ["2025-02-15T12:00:00+00:00", "2025-08-15T12:00:00+00:00"]),
        ("*/20 * * * * *", ["2025-01-01T00:00:20+00:00", "2025-01-01T00:00:40+00:00",
                            "2025-01-01T00:01:00+00:00"]),
        ("30 0 12 1 1 ? 2030,2032", ["2030-01-01T12:00:30+00:00", "2032-01-01T12:00:30+00:00"]),
        ("0 0 0 1,L 2 ? *", ["2025-02-01T00:00:00+00:00", "2025-02-28T00:00:00+00:00",
                             "2026-02-01T00:00:00+00:00"]),
    ],
)  # fmt: skip
def test_extended_dialect_forms_fire_as_specified(expr: str, expected: list[str]) -> None:
    assert fires(expr, JAN, len(expected)) == expected


def test_extended_day_tokens_are_restricted_for_the_or_rule() -> None:
    """``L``, ``nL`` and ``n#k`` restrict their field: 15th OR last Friday."""
    assert fires("0 0 15 * 5L", JAN, 3) == [
        "2025-01-15T00:00:00+00:00",
        "2025-01-31T00:00:00+00:00",
        "2025-02-15T00:00:00+00:00",
    ]


@pytest.mark.parametrize(
    ("expr", "words"),
    [
        ("0 0 * * 8", ["day-of-week value '8' out of range 0-7"]),
        ("0 0 * * 1#6", ["day-of-week occurrence '1#6' out of range"]),
        ("0 0 * * 1#0", ["day-of-week occurrence '1#0'"]),
        ("0 0 15W * *", ["day-of-month 'W' in '15W'", "extended dialect"]),
        ("L * * * *", ["minute 'L' in 'L'"]),
        ("0 0 1#2 * *", ["day-of-month '#' in '1#2'"]),
        ("? * * * *", ["minute '?'"]),
        ("0 0 1,? * *", ["day-of-month '?' must stand alone, not in the list '1,?'"]),
        ("0 0 1 * MAR", ["day-of-week value 'MAR' is a name that day-of-week does not accept"]),
        ("0 0 * FRI *", ["month value 'FRI'"]),
        ("0 0 0 * * * 1969", ["year value '1969' out of range 1970-2199"]),
        ("0 0 0 0 * * * * *", ["expected 5, 6", "got 9"]),
        ("60 * * * * *", ["second value '60' out of range 0-59"]),
        ("@yearly", ["macro '@yearly'"]),
        ("0 0 * * FRI-MON", ["day-of-week range 'FRI-MON' is reversed"]),
    ],
)
def test_extended_dialect_rejects(expr: str, words: list[str]) -> None:
    reason = rejected(expr, "extended")
    for word in words:
        assert word in reason, reason


def test_the_day_of_month_day_of_week_rule() -> None:
    """Both restricted: either matches (15th or Fridays); a starred field makes it AND."""
    assert fires("0 9 15 * 5", JAN, 3) == [
        "2025-01-03T09:00:00+00:00",
        "2025-01-10T09:00:00+00:00",
        "2025-01-15T09:00:00+00:00",
    ]
    # '*/2' starts with '*': odd days that are Mondays (Vixie cron).
    assert fires("0 0 */2 * 1", JAN, 3) == [
        "2025-01-13T00:00:00+00:00",
        "2025-01-27T00:00:00+00:00",
        "2025-02-03T00:00:00+00:00",
    ]


def test_evaluation_contract() -> None:
    spec = parse("0 9 * * *")
    with pytest.raises(ValueError, match="aware"):
        next_after(spec, datetime(2026, 1, 1))
    with pytest.raises(ValueError, match="aware"):
        prev_at_or_before(spec, datetime(2026, 1, 1))
    with pytest.raises(ValueError, match="repeated"):
        next_after(spec, NOW, repeated="last")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="unknown IANA timezone"):
        next_after(spec, NOW, tz="Mars/Olympus_Mons")
    with pytest.raises(ValueError, match="aware"):
        iter_after(spec, datetime(2026, 1, 1))
    fire = next_after(spec, NOW)
    assert (
        fire is not None and fire.tzinfo is UTC and fire.isoformat() == "2026-08-27T09:00:00+00:00"
    )
    # strictly after, and microseconds are honoured
    exact = datetime(2026, 8, 27, 9, 0, tzinfo=UTC)
    assert next_after(spec, exact) == datetime(2026, 8, 28, 9, 0, tzinfo=UTC)
    assert prev_at_or_before(spec, exact) == exact
    assert prev_at_or_before(spec, exact.replace(microsecond=1)) == exact


def test_searches_are_bounded() -> None:
    once = parse("0 0 12 1 1 ? 2030", dialect="extended")
    assert next_after(once, datetime(2030, 1, 1, 12, tzinfo=UTC)) is None
    assert prev_at_or_before(once, datetime(2030, 1, 1, 11, tzinfo=UTC)) is None
    assert list(iter_after(once, NOW, tz="America/New_York")) == [
        datetime(2030, 1, 1, 17, tzinfo=UTC)
    ]
    past = parse("0 0 0 1 1 ? 1999", dialect="extended")  # accepted, never fires again
    assert next_after(past, NOW) is None
    assert next_after(parse("* * * * *"), datetime(9999, 12, 31, 23, 59, tzinfo=UTC)) is None
    assert prev_at_or_before(parse("* * * * *"), datetime(1, 1, 1, tzinfo=UTC)) is None


def test_other_tz_forms_are_equivalent() -> None:
    from zoneinfo import ZoneInfo

    spec = parse("0 9 * * *")
    local = NOW.astimezone(ZoneInfo("Asia/Taipei"))
    by_name = next_after(spec, NOW, tz="Asia/Taipei")
    assert by_name == next_after(spec, local, tz=ZoneInfo("Asia/Taipei"))
    assert by_name is not None and by_name.isoformat() == "2026-08-28T01:00:00+00:00"
    assert next_after(spec, NOW, tz="Etc/UTC") == next_after(spec, NOW, tz=ZoneInfo("UTC"))
    assert next_after(spec, NOW, tz=None) == next_after(spec, NOW) == next_after(spec, local)


@pytest.mark.parametrize(
    "expr",
    [
        "0\xa09 * * *",
        "0 9 * *\u30001-5",
        "0 9\u2003* * *",
        "0 9 *\n* *",
        "0\x0b9 * * *",
        "0 9 * * *\u2028",
    ],
)
@pytest.mark.parametrize("dialect", ["strict", "extended"])
def test_only_ascii_spaces_and_tabs_separate_fields(expr: str, dialect: str) -> None:
    """A non-breaking space looks like a space but is not one: ``0\\xa09 * * *`` is refused."""
    reason = rejected(expr, dialect)
    char = next(c for c in expr.strip(" \t\r\n") if c.isspace() and c not in " \t")
    assert f"U+{ord(char):04X}" in reason
    assert "separate fields with ASCII spaces or tabs" in reason


def test_a_trailing_line_break_is_not_a_field() -> None:
    assert parse("0 9 * * *\n").expression == "0 9 * * *"
    assert parse("\t0\t9 * * *\r\n").expression == "0 9 * * *"


def test_a_cron_schedule_with_a_non_breaking_space_is_a_400_with_the_spec_prefix() -> None:
    with pytest.raises(ConfigError) as info:
        parse_schedule({"type": "cron", "expression": "0\xa09 * * *"}, {})
    assert info.value.status == 400
    assert info.value.detail.startswith("cron schedule invalid: U+00A0")
