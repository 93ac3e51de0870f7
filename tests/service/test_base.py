"""DESIGN §4: every time-dependent facade method takes an aware ``now`` (through the facade)."""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta, timezone

import pytest

from tocsin.errors import ValidationError
from tocsin.service import Tocsin


def test_now_is_converted_to_utc(tocsin: Tocsin) -> None:
    taipei = timezone(timedelta(hours=8))
    now = datetime(2026, 8, 27, 13, 0, tzinfo=taipei)
    table = tocsin.create_table("chatroom", str(uuid.uuid4()), "T", {"Due": "datetime"}, now=now)
    assert tocsin.preview(table["id"], now=now)["evaluated_at"] == "2026-08-27T05:00:00"


@pytest.mark.parametrize("bad", [datetime(2026, 8, 27, 5, 0), "2026-08-27T05:00Z", 0])
def test_a_naive_or_non_datetime_now_is_a_400(tocsin: Tocsin, bad: object) -> None:
    with pytest.raises(ValidationError) as err:
        tocsin.tick(now=bad)  # type: ignore[arg-type]
    assert err.value.status == 400
    assert err.value.detail.startswith("now must be an aware datetime")
