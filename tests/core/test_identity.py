"""Occurrence identities and dedup keys (SPEC §4.1, §5.4)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from tocsin.core.schedules.identity import clock_identity, date_identity, normalize_value


@pytest.mark.parametrize(
    ("column_type", "cell", "expected"),
    [
        ("date", "2026-09-01", "2026-09-01"),
        ("date", "2026-09-01T23:59:59+08:00", "2026-09-01"),
        ("datetime", "2026-09-01", "2026-09-01 00:00"),
        ("datetime", "2026-09-01T09:00", "2026-09-01 09:00"),
        ("datetime", "2026-09-01 09:00:59.9", "2026-09-01 09:00"),
        ("datetime", "2026-09-01T09:00Z", "2026-09-01 09:00"),
        ("datetime", "2026-09-01T09:00+08:00", "2026-09-01 09:00"),  # offset dropped
        ("datetime", "0001-01-01T00:00", "0001-01-01 00:00"),
        ("date", "0999-05-06", "0999-05-06"),
        ("datetime", None, None),
        ("datetime", "", None),
        ("datetime", "soon", None),
        ("date", 20260901, None),
        ("text", "2026-09-01", None),
    ],
)
def test_normalize_value(column_type: str, cell: object, expected: str | None) -> None:
    assert normalize_value(column_type, cell) == expected


def test_equal_instants_written_differently_share_an_identity() -> None:
    a = normalize_value("datetime", "2026-09-01T09:00:00Z")
    b = normalize_value("datetime", "2026-09-01 09:00")
    assert a == b
    assert date_identity("r1", a or "") == date_identity("r1", b or "")


def test_date_identity() -> None:
    assert date_identity("r1", "2026-09-01 09:00") == "record:r1:2026-09-01 09:00"
    assert date_identity("r1", "2026-09-01") != date_identity("r2", "2026-09-01")


def test_clock_identity() -> None:
    window = datetime(2026, 8, 27, 5, 0, tzinfo=UTC)
    assert clock_identity(window) == "window:2026-08-27T05:00:00"
    with pytest.raises(ValueError):
        clock_identity(datetime(2026, 8, 27, 5, 0))
