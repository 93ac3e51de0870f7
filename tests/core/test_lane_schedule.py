"""A lane decided by the one decision (tocsin.core.schedules.decide under the lane's policy values,
tocsin.core.schedules.lane): runs, windows and skips by catch-up, checked against a brute-force
walk of the cron's instants, and the paused range of a resume."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tocsin.core.schedules.decide import Decision, State, decide
from tocsin.core.schedules.lane import LaneSchedule, lane_timing
from tocsin.core.schedules.skips import SkipRange

HOURLY = "0 * * * *"
T0 = datetime(2026, 9, 7, 10, 0, tzinfo=UTC)
HOUR = timedelta(hours=1)


def lane(catch_up: str = "all", cron: str = HOURLY, zone: str = "UTC") -> LaneSchedule:
    return LaneSchedule("intake", cron, zone, catch_up)


def decide_lane(
    schedule: LaneSchedule, next_fire_at: datetime | None, now: datetime, *, limit: int
) -> Decision:
    return decide(lane_timing(schedule, page=limit), State(next_fire_at), (), now)


def paused_skips(
    schedule: LaneSchedule, next_fire_at: datetime | None, now: datetime
) -> tuple[SkipRange, ...]:
    return decide(lane_timing(schedule, paused=True), State(next_fire_at), (), now).skips


def owed(first: datetime, now: datetime) -> list[datetime]:
    """The hourly instants ``first .. now`` by brute force."""
    out, at = [], first
    while at <= now:
        out.append(at)
        at += HOUR
    return out


def test_nothing_is_due_before_the_next_instant() -> None:
    got = decide_lane(lane(), T0, T0 - timedelta(seconds=1), limit=10)
    assert (got.fires, got.skips, got.next_due_at) == ((), (), T0)


@settings(max_examples=60, deadline=None)
@given(hours=st.integers(0, 60), limit=st.integers(1, 80), extra=st.integers(0, 3599))
def test_all_runs_each_window_in_order_up_to_the_limit(hours: int, limit: int, extra: int) -> None:
    now = T0 + hours * HOUR + timedelta(seconds=extra)
    got = decide_lane(lane(), T0, now, limit=limit)
    expected = owed(T0, now)[:limit]
    assert list(got.fires) == expected
    assert all(w.start == f - HOUR for f, w in zip(got.fires, got.windows, strict=True))
    assert got.skips == ()
    assert got.next_due_at == expected[-1] + HOUR


@pytest.mark.parametrize("catch_up", ["latest", "none"])
def test_on_time_latest_and_none_run_the_one_instant(catch_up: str) -> None:
    got = decide_lane(lane(catch_up), T0, T0 + timedelta(seconds=5), limit=1)
    assert [(f, w.start) for f, w in zip(got.fires, got.windows, strict=True)] == [(T0, T0 - HOUR)]
    assert got.skips == () and got.next_due_at == T0 + HOUR


@settings(max_examples=60, deadline=None)
@given(hours=st.integers(1, 60), extra=st.integers(0, 3599))
def test_latest_runs_once_over_the_merged_window(hours: int, extra: int) -> None:
    now = T0 + hours * HOUR + timedelta(seconds=extra)
    instants = owed(T0, now)
    got = decide_lane(lane("latest"), T0, now, limit=1)
    ((fire, window),) = zip(got.fires, got.windows, strict=True)
    assert (fire, window.start, window.end) == (
        instants[-1],
        T0 - HOUR,
        instants[-1],
    )
    (skip,) = got.skips
    assert (skip.reason, skip.first, skip.last, skip.count) == (
        "coalesced",
        T0,
        instants[-2],
        len(instants) - 1,
    )
    assert (skip.target_kind, skip.target_id, skip.after) == ("lane", "intake", T0 - HOUR)
    assert got.next_due_at == instants[-1] + HOUR


def test_none_skips_every_missed_instant() -> None:
    now = T0 + 23 * HOUR + timedelta(minutes=1)
    got = decide_lane(lane("none"), T0, now, limit=1)
    assert got.fires == ()
    (skip,) = got.skips
    assert (skip.reason, skip.first, skip.last, skip.count) == ("coalesced", T0, T0 + 23 * HOUR, 24)
    assert got.next_due_at == T0 + 24 * HOUR


def test_paused_skips_count_the_instants_up_to_the_resume() -> None:
    (skip,) = paused_skips(lane(), T0, T0 + 2 * HOUR)
    assert (skip.reason, skip.first, skip.last, skip.count) == ("paused", T0, T0 + 2 * HOUR, 3)
    assert paused_skips(lane(), T0, T0 - timedelta(seconds=1)) == ()
    assert paused_skips(lane(), None, T0) == ()


def test_a_spring_forward_gap_is_a_dst_gap_skip() -> None:
    ny = lane(cron="30 2 * * *", zone="America/New_York")
    due = datetime(2027, 3, 15, 6, 30, tzinfo=UTC)  # 02:30 EDT; 2027-03-14 02:30 does not exist
    got = decide_lane(ny, due, due, limit=10)
    assert [w.start for w in got.windows] == [datetime(2027, 3, 13, 7, 30, tzinfo=UTC)]
    (gap,) = got.skips
    assert (gap.reason, gap.first, gap.count) == (
        "dst_gap",
        datetime(2027, 3, 14, 7, tzinfo=UTC),
        1,
    )
