"""DESIGN §4: every time-dependent facade method takes an aware ``now``."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from tocsin.errors import ValidationError
from tocsin.service.base import TocsinBase


def test_now_is_converted_to_utc() -> None:
    taipei = timezone(timedelta(hours=8))
    assert TocsinBase._now(datetime(2026, 8, 27, 13, 0, tzinfo=taipei)) == datetime(
        2026, 8, 27, 5, 0, tzinfo=UTC
    )


@pytest.mark.parametrize("bad", [datetime(2026, 8, 27, 5, 0), "2026-08-27T05:00Z", 0])
def test_a_naive_or_non_datetime_now_is_a_400(bad: object) -> None:
    with pytest.raises(ValidationError) as err:
        TocsinBase._now(bad)  # type: ignore[arg-type]
    assert err.value.status == 400
    assert err.value.detail.startswith("now must be an aware datetime")
