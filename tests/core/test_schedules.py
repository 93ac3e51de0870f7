"""Schedule validation and omit-when-default (SPEC §4, §4.5, §7 codes)."""

from __future__ import annotations

from datetime import time
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tocsin import messages
from tocsin.core.schedules.spec import (
    CLOCK_KINDS,
    Daily,
    DateColumnReached,
    Interval,
    normalize_schedule,
    parse_schedule,
    schedule_problems,
    schedule_to_dict,
)
from tocsin.core.time import cron
from tocsin.errors import ConfigError

COLUMNS = {"Due": "datetime", "Day": "date", "Status": "text", "Count": "number"}
needs_cron = pytest.mark.skipif(
    not hasattr(cron, "parse"), reason="tocsin.core.time.cron not landed"
)

# literal copies of the SPEC texts: a typo in tocsin.messages must fail here
OFFSET_TEXT = (
    "date_column_reached offset_minutes must be an integer in [-43200, 43200] "
    "(negative = before the column instant, positive = after)"
)
TZ_NOT_STRING = "daily schedule timezone must be an IANA name string (e.g. 'Asia/Taipei')"
TZ_UNKNOWN = (
    "daily schedule timezone 'Mars/Base' is not a known IANA zone. "
    "use an IANA name like 'Asia/Taipei' or 'America/New_York'"
)


def invalid_type_text(kind: str) -> str:
    return (
        f"invalid schedule type '{kind}'. valid types: date_column_reached, interval, daily, cron"
    )


def refused(raw: object, code: str) -> ConfigError:
    with pytest.raises(ConfigError) as info:
        parse_schedule(raw, COLUMNS)
    assert info.value.code == code
    assert info.value.status == 400
    return info.value


def test_clock_kinds() -> None:
    assert frozenset({"interval", "daily", "cron"}) == CLOCK_KINDS


# --- date_column_reached -------------------------------------------------------------------


def test_date_column_reached_ok() -> None:
    s = parse_schedule(
        {"type": "date_column_reached", "column": "Due", "offset_minutes": -1440}, COLUMNS
    )
    assert s == DateColumnReached(column="Due", offset_minutes=-1440)
    assert parse_schedule({"type": "date_column_reached", "column": "Day"}, COLUMNS) == (
        DateColumnReached(column="Day", offset_minutes=0)
    )


@pytest.mark.parametrize("offset", [-43200, 0, 43200, 15])
def test_offset_bounds_accepted(offset: int) -> None:
    raw = {"type": "date_column_reached", "column": "Due", "offset_minutes": offset}
    assert parse_schedule(raw, COLUMNS) == DateColumnReached(column="Due", offset_minutes=offset)


@pytest.mark.parametrize("offset", [True, False, -43201, 43201, 1.0, 0.0, "15", None, [15], 10**20])
def test_offset_refused(offset: object) -> None:
    raw = {"type": "date_column_reached", "column": "Due", "offset_minutes": offset}
    error = refused(raw, "offset_minutes_invalid")
    assert error.detail == OFFSET_TEXT
    assert error.detail == messages.OFFSET_MINUTES_INVALID


@pytest.mark.parametrize("column", ["Nope", None, 3, ""])
def test_column_missing(column: object) -> None:
    raw = {"type": "date_column_reached", "column": column}
    error = refused(raw, "schedule_column_missing")
    seed = f"date_column_reached column '{column}' does not exist on this table"
    # the SPEC text, exactly, then the table's columns
    assert error.detail == f"{seed}. columns: {', '.join(COLUMNS)}"


def test_column_key_absent() -> None:
    refused({"type": "date_column_reached"}, "schedule_column_missing")


@pytest.mark.parametrize("column", ["Status", "Count"])
def test_column_wrong_type(column: str) -> None:
    error = refused({"type": "date_column_reached", "column": column}, "schedule_column_wrong_type")
    assert error.detail == (
        f"date_column_reached column '{column}' is a {COLUMNS[column]} column; "
        "it must be a date or datetime column"
    )


def test_date_column_reached_has_no_timezone() -> None:
    raw = {"type": "date_column_reached", "column": "Due", "timezone": "Asia/Taipei"}
    error = refused(raw, "stored_schedule_invalid")
    assert "'timezone'" in error.detail


# --- interval ------------------------------------------------------------------------------


@pytest.mark.parametrize("every", [60, 3600, 2592000])
def test_interval_ok(every: int) -> None:
    assert parse_schedule({"type": "interval", "every_seconds": every}, {}) == Interval(
        every_seconds=every
    )


@pytest.mark.parametrize("every", [59, 2592001, 0, -60, True, 3600.0, "3600", None])
def test_interval_refused(every: object) -> None:
    error = refused({"type": "interval", "every_seconds": every}, "interval_seconds_invalid")
    assert error.detail == messages.INTERVAL_SECONDS_INVALID
    assert error.detail == (
        "interval every_seconds must be an integer in [60, 2592000] (1 minute to 30 days)"
    )


def test_interval_missing_every() -> None:
    refused({"type": "interval"}, "interval_seconds_invalid")


# --- daily ---------------------------------------------------------------------------------


def test_daily_ok() -> None:
    raw = {"type": "daily", "at": "01:30", "timezone": "Asia/Taipei"}
    assert parse_schedule(raw, {}) == Daily(at=time(1, 30), timezone="Asia/Taipei")
    assert parse_schedule({"type": "daily", "at": "23:59"}, {}) == Daily(at=time(23, 59))
    assert parse_schedule({"type": "daily", "at": "00:00", "timezone": "UTC"}, {}) == Daily(
        at=time(0, 0), timezone=None
    )


@pytest.mark.parametrize(
    "at",
    [
        "1:30",
        "24:00",
        "01:60",
        "01:30:00",
        "0130",
        " 01:30",
        "01:30\n",
        "01.30",
        "１:30",
        130,
        None,
        True,
    ],
)
def test_daily_time_refused(at: object) -> None:
    error = refused({"type": "daily", "at": at}, "daily_time_invalid")
    assert error.detail == messages.daily_time_invalid(at)
    assert error.detail.startswith("daily schedule at must be a 24-hour 'HH:MM' string")


@pytest.mark.parametrize("tz", [None, 8, ["UTC"], True])
def test_daily_timezone_not_string(tz: object) -> None:
    error = refused({"type": "daily", "at": "01:30", "timezone": tz}, "timezone_invalid")
    assert error.detail == TZ_NOT_STRING


def test_daily_timezone_unknown() -> None:
    error = refused({"type": "daily", "at": "01:30", "timezone": "Mars/Base"}, "timezone_invalid")
    assert error.detail == TZ_UNKNOWN
    assert error.detail == messages.daily_timezone_unknown("Mars/Base")


# --- cron ----------------------------------------------------------------------------------


@needs_cron
def test_cron_ok_and_utc_normalized_away() -> None:
    raw = {"type": "cron", "expression": "0  9 * *   1-5", "timezone": "UTC"}
    s = parse_schedule(raw, {})
    assert s.kind == "cron"
    assert schedule_to_dict(s) == {"type": "cron", "expression": "0 9 * * 1-5"}
    zoned = parse_schedule(
        {"type": "cron", "expression": "0 9 * * *", "timezone": "Asia/Taipei"}, {}
    )
    assert schedule_to_dict(zoned) == {
        "type": "cron",
        "expression": "0 9 * * *",
        "timezone": "Asia/Taipei",
    }


@needs_cron
@pytest.mark.parametrize(
    "expression", ["0 9 * * 7", "@daily", "0 0 30 2 *", "* * * * * *", 5, None]
)
def test_cron_expression_refused(expression: object) -> None:
    error = refused({"type": "cron", "expression": expression}, "cron_expression_invalid")
    assert error.detail.startswith("cron schedule invalid: ")


@needs_cron
def test_cron_timezone_uses_the_daily_texts() -> None:
    error = refused({"type": "cron", "expression": "0 9 * * *", "timezone": 9}, "timezone_invalid")
    assert error.detail == TZ_NOT_STRING


# --- shape and type --------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["monthly", "Daily", "", 3, None])
def test_unknown_type(kind: object) -> None:
    error = refused({"type": kind}, "unsupported_schedule_type")
    assert error.detail == invalid_type_text(str(kind))
    assert error.detail == messages.invalid_schedule_type(kind)


def test_type_absent() -> None:
    refused({"every_seconds": 60}, "unsupported_schedule_type")


def test_schedule_missing() -> None:
    error = refused(None, "schedule_object_missing")
    assert error.detail == messages.SCHEDULE_OBJECT_MISSING


@pytest.mark.parametrize("raw", ["interval", ["interval"], 3, True])
def test_schedule_not_an_object(raw: object) -> None:
    refused(raw, "stored_schedule_invalid")


def test_unknown_keys_refused() -> None:
    error = refused(
        {"type": "interval", "every_seconds": 60, "jitter": 5}, "stored_schedule_invalid"
    )
    assert error.detail == (
        "interval schedule has unknown key(s) 'jitter'. allowed keys: type, every_seconds"
    )


def test_problems_lists_every_code() -> None:
    raw = {"type": "date_column_reached", "column": "Nope", "offset_minutes": True, "x": 1}
    codes = [p.code for p in schedule_problems(raw, COLUMNS)]
    assert codes == ["stored_schedule_invalid", "schedule_column_missing", "offset_minutes_invalid"]
    assert schedule_problems({"type": "interval", "every_seconds": 60}, {}) == []


# --- omit-when-default ---------------------------------------------------------------------


def test_explicit_defaults_are_dropped() -> None:
    raw = {"type": "date_column_reached", "column": "Due", "offset_minutes": 0}
    assert normalize_schedule(raw) == {"type": "date_column_reached", "column": "Due"}
    assert schedule_to_dict(parse_schedule(raw, COLUMNS)) == {
        "type": "date_column_reached",
        "column": "Due",
    }
    daily = {"type": "daily", "at": "01:30", "timezone": "UTC"}
    assert normalize_schedule(daily) == {"type": "daily", "at": "01:30"}
    assert schedule_to_dict(parse_schedule(daily, {})) == {"type": "daily", "at": "01:30"}


def test_boolean_offset_is_not_normalized() -> None:
    raw = {"type": "date_column_reached", "column": "Due", "offset_minutes": False}
    assert normalize_schedule(raw) == raw
    refused(raw, "offset_minutes_invalid")


def test_normalize_does_not_mutate() -> None:
    raw = {"type": "daily", "at": "01:30", "timezone": "UTC"}
    normalize_schedule(raw)
    assert raw["timezone"] == "UTC"


def test_schedule_to_dict_round_trips() -> None:
    for raw in [
        {"type": "date_column_reached", "column": "Due", "offset_minutes": 15},
        {"type": "interval", "every_seconds": 60},
        {"type": "daily", "at": "07:05", "timezone": "America/New_York"},
    ]:
        assert schedule_to_dict(parse_schedule(raw, COLUMNS)) == raw


scalars = (
    st.none()
    | st.booleans()
    | st.integers(-50000, 50000)
    | st.sampled_from(["UTC", "Asia/Taipei", "01:30", "Due", "0 9 * * *", " 0  9 * * * ", ""])
)
raw_schedules = st.fixed_dictionaries(
    {"type": st.sampled_from(["date_column_reached", "interval", "daily", "cron", "weekly"])},
    optional={
        "column": scalars,
        "offset_minutes": scalars,
        "every_seconds": scalars,
        "at": scalars,
        "timezone": scalars,
        "expression": scalars,
    },
)


@settings(max_examples=300)
@given(raw=raw_schedules)
def test_normalize_is_idempotent(raw: dict[str, Any]) -> None:
    once = normalize_schedule(raw)
    assert normalize_schedule(once) == once


@settings(max_examples=300)
@given(raw=raw_schedules)
def test_parse_agrees_with_normalized_form(raw: dict[str, Any]) -> None:
    """Writing an explicit default never changes the outcome (IaC plans it as noop)."""
    if raw["type"] == "cron" and not hasattr(cron, "parse"):
        return
    problems = [p.code for p in schedule_problems(raw, COLUMNS)]
    assert problems == [p.code for p in schedule_problems(normalize_schedule(raw), COLUMNS)]
    if not problems:
        stored = schedule_to_dict(parse_schedule(raw, COLUMNS))
        assert stored == normalize_schedule(stored)
        assert schedule_to_dict(parse_schedule(stored, COLUMNS)) == stored
