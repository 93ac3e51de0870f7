"""A backfill is the one decision caught up in full (``core.schedules.backfill``): its instants
are every instant of the schedule in ``[start, end)``, oldest first, whatever the page size, and
at most ``cap + 1`` of them; its skips are the decision's ``dst_gap`` ranges from ``start`` on."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from tocsin.core.schedules.backfill import backfill, backfill_timing
from tocsin.core.schedules.decide import Timing, cron_trigger
from tocsin.core.schedules.timeline import timeline

EXPRESSIONS = ("*/7 * * * *", "30 2 * * *", "15,45 1-3 * * *", "0 0 L * *", "0 30 1 * * *")
ZONES = ("UTC", "Europe/Paris", "America/New_York", "Australia/Lord_Howe", "America/Santiago")
START = datetime(2027, 1, 1, tzinfo=UTC)
MARCH_28 = datetime(2027, 3, 28, tzinfo=UTC)


def _instants(expression: str, zone: str, start: datetime, end: datetime) -> list[datetime]:
    line, out = timeline(cron_trigger(expression, zone)), []
    at = line.next(start - timedelta(microseconds=1))
    while at is not None and at < end:
        out.append(at)
        at = line.next(at)
    return out


@settings(max_examples=40, deadline=None)
@given(
    expression=st.sampled_from(EXPRESSIONS),
    zone=st.sampled_from(ZONES),
    days=st.integers(0, 364),
    hours=st.integers(1, 24 * 40),
    cap=st.integers(0, 400),
)
def test_a_backfill_fires_every_instant_of_its_range_up_to_its_cap(
    expression: str, zone: str, days: int, hours: int, cap: int
) -> None:
    start = START + timedelta(days=days, minutes=13)
    end = start + timedelta(hours=hours)
    got = backfill(Timing("s", cron_trigger(expression, zone)), start, end, cap)
    assert list(got.fires) == _instants(expression, zone, start, end)[: cap + 1]
    assert {r.reason for r in got.skips} <= {"dst_gap"}
    assert all(start <= r.first < end for r in got.skips)


def test_a_spring_forward_gap_inside_the_range_is_its_dst_gap() -> None:
    daily = Timing("s", cron_trigger("30 2 * * *", "Europe/Paris"), paused=True)
    got = backfill(daily, datetime(2027, 3, 26, tzinfo=UTC), datetime(2027, 3, 31, tzinfo=UTC), 9)
    assert [f.day for f in got.fires] == [26, 27, 29, 30]  # paused or not: a backfill runs
    [gap] = got.skips
    assert (gap.reason, gap.first, gap.count) == ("dst_gap", MARCH_28.replace(hour=1), 1)
    after = backfill(daily, MARCH_28.replace(hour=2), datetime(2027, 3, 31, tzinfo=UTC), 9)
    assert after.skips == ()  # a gap before ``start`` belongs to no backfilled instant


def test_the_backfill_policies_replace_the_schedules() -> None:
    timing = Timing("s", cron_trigger("* * * * *", "UTC"), catch_up="none", overlap="skip")
    got = backfill_timing(timing, 5)
    assert (got.catch_up, got.max_catch_up, got.overlap, got.paused, got.backlog) == (
        "all", 5, "allow", False, "page"
    )  # fmt: skip
