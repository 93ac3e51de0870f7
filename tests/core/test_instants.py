"""Naive-UTC cells, saturating arithmetic and instant rendering (SPEC §4.1, §7)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tocsin.core.time import instants
from tocsin.core.time.instants import (
    MAX_UTC,
    MIN_UTC,
    add_minutes_saturating,
    classify_cell,
    parse_cell,
    require_aware,
    to_iso,
    to_rfc3339,
)

NOW = datetime(2026, 8, 27, 5, 2, 13, tzinfo=UTC)


@pytest.mark.parametrize(
    ("cell", "expected"),
    [
        ("2026-07-25", "2026-07-25T00:00:00+00:00"),
        ("2026-07-25T09:00", "2026-07-25T09:00:00+00:00"),
        ("2026-07-25 09:00", "2026-07-25T09:00:00+00:00"),
        ("2026-07-25T09:00:59", "2026-07-25T09:00:59+00:00"),
        ("2026-07-25T09:00:59.5", "2026-07-25T09:00:59.500000+00:00"),
        ("2026-07-25T09:00:59.123456", "2026-07-25T09:00:59.123456+00:00"),
        ("2026-07-25T09:00Z", "2026-07-25T09:00:00+00:00"),
        ("2026-07-25T09:00:00z", "2026-07-25T09:00:00+00:00"),
        # an explicit offset is DROPPED, not converted (SPEC §4.1)
        ("2026-07-25T09:00+08:00", "2026-07-25T09:00:00+00:00"),
        ("2026-07-25T09:00:00-0500", "2026-07-25T09:00:00+00:00"),
        ("  2026-07-25T09:00  ", "2026-07-25T09:00:00+00:00"),
        ("0001-01-01", "0001-01-01T00:00:00+00:00"),
        ("9999-12-31T23:59", "9999-12-31T23:59:00+00:00"),
        ("2024-02-29", "2024-02-29T00:00:00+00:00"),
    ],
)
def test_ok_cells(cell: str, expected: str) -> None:
    status, instant = classify_cell(cell)
    assert status == "ok"
    assert instant is not None
    assert instant.isoformat() == expected
    assert parse_cell(cell) == instant


@pytest.mark.parametrize("cell", [None, "", "   ", "\t\n"])
def test_missing_cells(cell: object) -> None:
    assert classify_cell(cell) == ("missing", None)
    assert parse_cell(cell) is None


@pytest.mark.parametrize(
    "cell",
    [
        "tomorrow",
        "2026-02-30",
        "2023-02-29",
        "2026-13-01",
        "2026-7-25",
        "26-07-25",
        "2026-07-25T9:00",
        "2026-07-25T24:00",
        "2026-07-25T09:60",
        "2026-07-25T09",
        "2026-07-25Z",
        "2026-07-25T09:00+8",
        "2026-07-25T09:00:00.1234567",
        "2026-07-25T09:00\n01",
        "２０２６-07-25",
        0,
        1.5,
        True,
        ["2026-07-25"],
        {"date": "2026-07-25"},
        datetime(2026, 7, 25, tzinfo=UTC),
    ],
)
def test_invalid_cells(cell: object) -> None:
    assert classify_cell(cell) == ("invalid", None)
    assert parse_cell(cell) is None


def test_saturation_at_the_top_never_fires() -> None:
    top = parse_cell("9999-12-31T23:59")
    assert top is not None
    assert add_minutes_saturating(top, 1) == MAX_UTC
    assert add_minutes_saturating(top, 43200) == MAX_UTC
    assert add_minutes_saturating(top, -1).isoformat() == "9999-12-31T23:58:00+00:00"


def test_saturation_at_the_bottom_fires_at_once() -> None:
    bottom = parse_cell("0001-01-01")
    assert bottom is not None
    assert add_minutes_saturating(bottom, -1) == MIN_UTC
    assert add_minutes_saturating(bottom, -43200) <= NOW
    assert add_minutes_saturating(bottom, 1).isoformat() == "0001-01-01T00:01:00+00:00"


def test_saturating_add_is_plain_addition_in_range() -> None:
    assert add_minutes_saturating(NOW, -1440) == NOW - timedelta(days=1)
    assert add_minutes_saturating(NOW, 0) == NOW


def test_saturating_add_survives_absurd_offsets() -> None:
    assert add_minutes_saturating(NOW, 10**18) == MAX_UTC
    assert add_minutes_saturating(NOW, -(10**18)) == MIN_UTC


def test_require_aware_refuses_naive() -> None:
    with pytest.raises(ValueError, match="now must be a timezone-aware datetime"):
        require_aware(datetime(2026, 8, 27), "now")


def test_require_aware_converts_to_utc() -> None:
    taipei = timezone(timedelta(hours=8))
    assert require_aware(datetime(2026, 8, 27, 13, tzinfo=taipei)).isoformat() == (
        "2026-08-27T05:00:00+00:00"
    )
    assert require_aware(NOW) is NOW


def test_saturating_add_refuses_naive() -> None:
    with pytest.raises(ValueError):
        add_minutes_saturating(datetime(2026, 8, 27), 1)


def test_to_iso_is_the_preview_format() -> None:
    assert to_iso(NOW) == "2026-08-27T05:02:13"
    assert to_iso(NOW.replace(microsecond=999)) == "2026-08-27T05:02:13"
    taipei = timezone(timedelta(hours=8))
    assert to_iso(datetime(2026, 8, 27, 13, 2, 13, tzinfo=taipei)) == "2026-08-27T05:02:13"
    with pytest.raises(ValueError):
        to_iso(datetime(2026, 8, 27))


def test_to_rfc3339_keeps_the_offset() -> None:
    assert to_rfc3339(NOW) == "2026-08-27T05:02:13+00:00"
    taipei = timezone(timedelta(hours=8))
    assert to_rfc3339(datetime(2026, 9, 8, 7, 30, tzinfo=taipei)) == "2026-09-08T07:30:00+08:00"
    assert to_rfc3339(NOW.replace(microsecond=5)) == "2026-08-27T05:02:13.000005+00:00"


def test_bounds_are_aware_utc() -> None:
    assert MIN_UTC.tzinfo is UTC and MAX_UTC.tzinfo is UTC
    assert instants.MIN_UTC < NOW < instants.MAX_UTC


aware = st.datetimes(
    min_value=datetime(1, 1, 1), max_value=datetime(9999, 12, 31, 23, 59), timezones=st.just(UTC)
)


@settings(max_examples=200)
@given(dt=aware, minutes=st.integers(min_value=-(10**12), max_value=10**12))
def test_saturating_add_is_total_and_bounded(dt: datetime, minutes: int) -> None:
    result = add_minutes_saturating(dt, minutes)
    assert MIN_UTC <= result <= MAX_UTC
    if minutes >= 0:
        assert result >= dt
    else:
        assert result <= dt


@settings(max_examples=200)
@given(dt=aware)
def test_to_iso_round_trips_through_cells(dt: datetime) -> None:
    assert parse_cell(to_iso(dt)) == dt.replace(microsecond=0)


@settings(max_examples=200)
@given(value=st.text(max_size=40) | st.integers() | st.none() | st.booleans())
def test_classify_never_raises(value: object) -> None:
    status, instant = classify_cell(value)
    assert (status == "ok") == (instant is not None)
