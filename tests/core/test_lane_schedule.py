"""The pure lane decision (tocsin.core.schedules.lane): runs, windows and skips by catch-up, checked
against a brute-force walk of the cron's instants, and the paused range of a resume."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tocsin.core.schedules.lane import LaneSchedule, decide, paused_skips

HOURLY = "0 * * * *"
T0 = datetime(2026, 9, 7, 10, 0, tzinfo=UTC)
HOUR = timedelta(hours=1)


def lane(catch_up: str = "all", cron: str = HOURLY, zone: str = "UTC") -> LaneSchedule:
    return LaneSchedule("intake", cron, zone, catch_up)


def owed(first: datetime, now: datetime) -> list[datetime]:
    """The hourly instants ``first .. now`` by brute force."""
    out, at = [], first
    while at <= now:
        out.append(at)
        at += HOUR
    return out


def test_nothing_is_due_before_the_next_instant() -> None:
    got = decide(lane(), T0, T0 - timedelta(seconds=1), limit=10)
    assert (got.fires, got.skips, got.next_fire_at) == ((), (), T0)
    assert decide(lane(), None, T0, limit=10).next_fire_at is None


@settings(max_examples=60, deadline=None)
@given(hours=st.integers(0, 60), limit=st.integers(1, 80), extra=st.integers(0, 3599))
def test_all_runs_each_window_in_order_up_to_the_limit(hours: int, limit: int, extra: int) -> None:
    now = T0 + hours * HOUR + timedelta(seconds=extra)
    got = decide(lane(), T0, now, limit=limit)
    expected = owed(T0, now)[:limit]
    assert [f.scheduled_for for f in got.fires] == expected
    assert all(f.window.start == f.scheduled_for - HOUR for f in got.fires)
    assert got.skips == ()
    assert got.next_fire_at == expected[-1] + HOUR


@pytest.mark.parametrize("catch_up", ["latest", "none"])
def test_on_time_latest_and_none_run_the_one_instant(catch_up: str) -> None:
    got = decide(lane(catch_up), T0, T0 + timedelta(seconds=5), limit=1)
    assert [(f.scheduled_for, f.window.start) for f in got.fires] == [(T0, T0 - HOUR)]
    assert got.skips == () and got.next_fire_at == T0 + HOUR


@settings(max_examples=60, deadline=None)
@given(hours=st.integers(1, 60), extra=st.integers(0, 3599))
def test_latest_runs_once_over_the_merged_window(hours: int, extra: int) -> None:
    now = T0 + hours * HOUR + timedelta(seconds=extra)
    instants = owed(T0, now)
    got = decide(lane("latest"), T0, now, limit=1)
    (fire,) = got.fires
    assert (fire.scheduled_for, fire.window.start, fire.window.end) == (
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
    assert got.next_fire_at == instants[-1] + HOUR


def test_none_skips_every_missed_instant() -> None:
    now = T0 + 23 * HOUR + timedelta(minutes=1)
    got = decide(lane("none"), T0, now, limit=1)
    assert got.fires == ()
    (skip,) = got.skips
    assert (skip.reason, skip.first, skip.last, skip.count) == ("coalesced", T0, T0 + 23 * HOUR, 24)
    assert got.next_fire_at == T0 + 24 * HOUR


def test_paused_skips_count_the_instants_up_to_the_resume() -> None:
    (skip,) = paused_skips(lane(), T0, T0 + 2 * HOUR)
    assert (skip.reason, skip.first, skip.last, skip.count) == ("paused", T0, T0 + 2 * HOUR, 3)
    assert paused_skips(lane(), T0, T0 - timedelta(seconds=1)) == []
    assert paused_skips(lane(), None, T0) == []


def test_a_spring_forward_gap_is_a_dst_gap_skip() -> None:
    ny = lane(cron="30 2 * * *", zone="America/New_York")
    due = datetime(2027, 3, 15, 6, 30, tzinfo=UTC)  # 02:30 EDT; 2027-03-14 02:30 does not exist
    got = decide(ny, due, due, limit=10)
    assert [f.window.start for f in got.fires] == [datetime(2027, 3, 13, 7, 30, tzinfo=UTC)]
    (gap,) = got.skips
    assert (gap.reason, gap.first, gap.count) == (
        "dst_gap",
        datetime(2027, 3, 14, 7, tzinfo=UTC),
        1,
    )
