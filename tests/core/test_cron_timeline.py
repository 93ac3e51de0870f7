"""The offset timeline behind the cron evaluator: segments of constant UTC offset per zone."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from cron_reference import transitions

from tocsin.core.time.cron.timeline import ZoneOffsets, resolve

HOUR = timedelta(hours=1)


def test_segments_match_the_zone_transitions() -> None:
    timeline = ZoneOffsets(ZoneInfo("America/New_York"))
    spring = datetime(2025, 3, 9, 7, tzinfo=UTC)  # 02:00 EST -> 03:00 EDT
    fall = datetime(2025, 11, 2, 6, tzinfo=UTC)  # 02:00 EDT -> 01:00 EST
    assert timeline.segment(spring - timedelta(seconds=1))[1] == spring
    start, end, offset, before = timeline.segment(spring)
    assert (start, end, offset, before) == (spring, fall, -4 * HOUR, -5 * HOUR)
    assert timeline.segment(fall)[2:] == (-5 * HOUR, -4 * HOUR)


@pytest.mark.parametrize(
    "zone", ["Australia/Lord_Howe", "Pacific/Chatham", "Europe/London", "America/Sao_Paulo"]
)
def test_every_transition_is_found_whatever_the_lookup_order(zone: str) -> None:
    timeline = ZoneOffsets(ZoneInfo(zone))
    for year in (2027, 2024, 2026, 2025, 1990, 2025):  # out of order, far and back
        timeline.segment(datetime(year, 6, 1, tzinfo=UTC))
    found = [
        timeline.segment(moment)[0] for moment in transitions(zone)
    ]  # each transition starts its own segment
    assert found == list(transitions(zone))


def test_utc_aliases_are_a_fixed_offset() -> None:
    for name in ("UTC", "Etc/UTC", "GMT", "Zulu"):
        assert resolve(name) == timedelta(0)
    assert resolve(None) == timedelta(0)
    assert resolve(ZoneInfo("UTC")) == timedelta(0)
    assert isinstance(resolve("Asia/Taipei"), ZoneOffsets)
    with pytest.raises(ValueError, match="unknown IANA timezone"):
        resolve("Not/A_Zone")
    with pytest.raises(ValueError, match="unknown IANA timezone"):
        resolve("")
