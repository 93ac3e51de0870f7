"""SPEC §14 lane definition time: a scheduled lane names its zone; ``catch_up`` is checked and
defaults to ``all`` (what the tick does with them: tests/engine/test_lane_scheduled.py,
tests/engine/test_lane_pause_catchup.py)."""

from __future__ import annotations

import pytest

from tocsin import Lane, Schedule
from tocsin.errors import ConfigError

from .lane_support import LANE_ID, Probe, make_lane, policy

HOURLY = Schedule(cron="0 * * * *", timezone="Asia/Taipei")


def lane_of(probe: Probe, schedule: Schedule, **options: str) -> Lane:
    return Lane(
        id=LANE_ID,
        schedule=schedule,
        policy_version="policy-v1",
        source=probe.fetch,
        select=policy,
        handler=probe.handle,
        **options,  # type: ignore[arg-type]
    )


def test_a_scheduled_lane_names_its_zone() -> None:
    with pytest.raises(Exception, match="timezone"):
        make_lane(Probe(), schedule=Schedule(cron="30 7 * * *", timezone=None))


def test_catch_up_is_validated() -> None:
    with pytest.raises(ConfigError, match="catch_up must be 'latest', 'none' or 'all', got 'some'"):
        lane_of(Probe(), HOURLY, catch_up="some")
    assert lane_of(Probe(), HOURLY).catch_up == "all"
