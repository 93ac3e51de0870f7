"""Clock windows: anchors, coalescing due window, next window (SPEC §4.2–4.4, §5.3).

DST transitions used below (tzdata):

| zone | date | local change | offsets |
|---|---|---|---|
| America/New_York | 2024-03-10 | 02:00 EST → 03:00 EDT | -05:00 → -04:00 |
| America/New_York | 2024-11-03 | 02:00 EDT → 01:00 EST | -04:00 → -05:00 |
| Asia/Taipei | — | no DST | +08:00 |
"""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tocsin.core.schedules.spec import Daily, DateColumnReached, Interval, parse_schedule
from tocsin.core.schedules.windows import due_window, initial_anchor, next_due_at, next_window_after
from tocsin.core.time import cron
from tocsin.core.time.instants import MAX_UTC, MIN_UTC
from tocsin.core.time.zones import get_zone, local_date, wall_to_instant

needs_cron = pytest.mark.skipif(
    not hasattr(cron, "parse"), reason="tocsin.core.time.cron not landed"
)
HOURLY = Interval(every_seconds=3600)
T0 = datetime(2026, 8, 27, 5, 2, 13, tzinfo=UTC)


def utc(year: int, month: int, day: int, hour: int = 0, minute: int = 0) -> datetime:
    return datetime(year, month, day, hour, minute, tzinfo=UTC)


# --- interval ------------------------------------------------------------------------------


def test_interval_first_window_is_the_save() -> None:
    anchor = initial_anchor(HOURLY, T0)
    assert anchor == T0
    assert due_window(HOURLY, anchor, None, T0) == T0


def test_interval_windows_are_anchor_plus_n_every() -> None:
    assert due_window(HOURLY, T0, T0, T0 + timedelta(minutes=59)) is None
    assert due_window(HOURLY, T0, T0, T0 + timedelta(hours=1)) == T0 + timedelta(hours=1)
    assert next_window_after(HOURLY, T0, T0) == T0 + timedelta(hours=1)
    assert next_window_after(HOURLY, T0, T0 - timedelta(days=3)) == T0
    assert next_window_after(HOURLY, T0, T0 + timedelta(minutes=61)) == T0 + timedelta(hours=2)


def test_interval_downtime_coalesces_to_the_latest_window() -> None:
    now = T0 + timedelta(hours=5, minutes=3)
    assert due_window(HOURLY, T0, T0, now) == T0 + timedelta(hours=5)
    # consuming it leaves nothing until the next window
    assert due_window(HOURLY, T0, T0 + timedelta(hours=5), now) is None
    assert next_due_at(HOURLY, T0, T0 + timedelta(hours=5), now) == T0 + timedelta(hours=6)


def test_nothing_before_the_anchor() -> None:
    assert due_window(HOURLY, T0, None, T0 - timedelta(seconds=1)) is None
    assert next_due_at(HOURLY, T0, None, T0 - timedelta(hours=2)) == T0


def test_interval_is_arithmetic_over_years() -> None:
    now = T0 + timedelta(days=365 * 300)
    window = due_window(Interval(every_seconds=60), T0, None, now)
    assert window is not None
    assert (window - T0) % timedelta(minutes=1) == timedelta(0)
    assert now - timedelta(minutes=1) < window <= now


def test_interval_saturates_at_the_top() -> None:
    anchor = MAX_UTC - timedelta(seconds=90)
    every = Interval(every_seconds=60)
    assert next_window_after(every, anchor, anchor) == anchor + timedelta(seconds=60)
    assert next_window_after(every, anchor, anchor + timedelta(seconds=60)) is None
    assert due_window(every, anchor, None, MAX_UTC) == anchor + timedelta(seconds=60)
    assert next_due_at(every, anchor, anchor + timedelta(seconds=60), MAX_UTC) is None


def test_interval_from_the_bottom() -> None:
    assert due_window(HOURLY, MIN_UTC, None, T0) is not None
    assert due_window(HOURLY, MIN_UTC, None, MIN_UTC) == MIN_UTC


def test_date_kind_has_no_windows() -> None:
    s = DateColumnReached(column="Due")
    assert due_window(s, T0, None, T0) is None
    assert next_window_after(s, T0, T0) is None


def test_naive_datetimes_are_refused() -> None:
    with pytest.raises(ValueError):
        due_window(HOURLY, T0, None, datetime(2026, 8, 27))
    with pytest.raises(ValueError):
        initial_anchor(HOURLY, datetime(2026, 8, 27))


# --- daily ---------------------------------------------------------------------------------

TAIPEI_0130 = Daily(at=time(1, 30), timezone="Asia/Taipei")


def test_daily_saved_after_todays_slot_fires_once_then_tomorrow() -> None:
    saved = utc(2026, 8, 27, 2, 0)  # 10:00 in Taipei
    anchor = initial_anchor(TAIPEI_0130, saved)
    assert anchor.isoformat() == "2026-08-26T16:00:00+00:00"  # local midnight
    first = due_window(TAIPEI_0130, anchor, None, saved)
    assert first is not None
    assert first.isoformat() == "2026-08-26T17:30:00+00:00"  # today 01:30 Taipei
    assert due_window(TAIPEI_0130, anchor, first, saved) is None
    nxt = next_due_at(TAIPEI_0130, anchor, first, saved)
    assert nxt is not None
    assert nxt.isoformat() == "2026-08-27T17:30:00+00:00"
    assert due_window(TAIPEI_0130, anchor, first, nxt) == nxt


def test_daily_saved_before_todays_slot_waits_for_it() -> None:
    saved = utc(2026, 8, 26, 16, 30)  # 00:30 in Taipei
    anchor = initial_anchor(TAIPEI_0130, saved)
    assert due_window(TAIPEI_0130, anchor, None, saved) is None
    assert next_due_at(TAIPEI_0130, anchor, None, saved) == utc(2026, 8, 26, 17, 30)


def test_daily_coalesces_missed_days() -> None:
    anchor = utc(2026, 8, 1, 16, 0)
    window = due_window(TAIPEI_0130, anchor, utc(2026, 8, 2, 17, 30), utc(2026, 8, 27, 3))
    assert window is not None
    assert window.isoformat() == "2026-08-26T17:30:00+00:00"


def test_daily_utc_default() -> None:
    s = Daily(at=time(9, 0))
    assert initial_anchor(s, T0) == utc(2026, 8, 27)
    assert due_window(s, utc(2026, 8, 27), None, T0) is None
    assert next_window_after(s, utc(2026, 8, 27), T0) == utc(2026, 8, 27, 9)


def _walk(s: Daily, start: datetime, days: int) -> list[str]:
    anchor = initial_anchor(s, start)
    out = []
    after = anchor - timedelta(seconds=1)
    for _ in range(days):
        window = next_window_after(s, anchor, after)
        assert window is not None
        out.append(window.isoformat())
        after = window
    return out


def test_daily_spring_forward_resolves_with_the_pre_transition_offset() -> None:
    s = Daily(at=time(2, 30), timezone="America/New_York")
    assert _walk(s, utc(2024, 3, 9, 5), 3) == [
        "2024-03-09T07:30:00+00:00",  # 02:30 EST
        "2024-03-10T07:30:00+00:00",  # 02:30 does not exist: read as EST = 03:30 EDT
        "2024-03-11T06:30:00+00:00",  # 02:30 EDT
    ]
    due = due_window(s, utc(2024, 3, 9, 5), utc(2024, 3, 9, 7, 30), utc(2024, 3, 10, 8))
    assert due is not None
    assert due.isoformat() == "2024-03-10T07:30:00+00:00"


def test_daily_fall_back_fires_once_on_the_first_occurrence() -> None:
    s = Daily(at=time(1, 30), timezone="America/New_York")
    assert _walk(s, utc(2024, 11, 2, 4), 3) == [
        "2024-11-02T05:30:00+00:00",  # 01:30 EDT
        "2024-11-03T05:30:00+00:00",  # first 01:30 (EDT); the EST repeat does not fire
        "2024-11-04T06:30:00+00:00",  # 01:30 EST
    ]
    consumed = utc(2024, 11, 3, 5, 30)
    assert due_window(s, utc(2024, 11, 2, 4), consumed, utc(2024, 11, 3, 6, 45)) is None


def test_daily_saturates_at_the_range_ends() -> None:
    s = Daily(at=time(23, 59), timezone="America/New_York")
    anchor = utc(9999, 12, 30)
    assert next_window_after(s, anchor, utc(9999, 12, 31, 12)) is None
    assert due_window(s, anchor, None, MAX_UTC) is not None
    early = Daily(at=time(0, 0), timezone="Asia/Taipei")
    assert initial_anchor(early, MIN_UTC) == MIN_UTC
    assert due_window(early, MIN_UTC, None, utc(1, 1, 3)) is not None


# --- cron ----------------------------------------------------------------------------------


@needs_cron
def test_cron_never_backfills_before_the_save() -> None:
    s = parse_schedule({"type": "cron", "expression": "0 9 * * *"}, {})
    saved = utc(2026, 8, 27, 10, 0)
    anchor = initial_anchor(s, saved)
    assert anchor == saved
    assert due_window(s, anchor, None, saved + timedelta(hours=22)) is None
    first = next_due_at(s, anchor, None, saved)
    assert first is not None
    assert first.isoformat() == "2026-08-28T09:00:00+00:00"
    assert due_window(s, anchor, None, first) == first


@needs_cron
def test_cron_saved_exactly_on_a_window_does_not_own_it() -> None:
    s = parse_schedule({"type": "cron", "expression": "0 9 * * *"}, {})
    saved = utc(2026, 8, 27, 9, 0)
    assert due_window(s, saved, None, saved) is None
    assert due_window(s, saved, None, saved + timedelta(minutes=30)) is None
    assert next_window_after(s, saved, saved) == utc(2026, 8, 28, 9, 0)


@needs_cron
def test_cron_coalesces_and_respects_its_zone() -> None:
    s = parse_schedule({"type": "cron", "expression": "0 * * * *", "timezone": "Asia/Taipei"}, {})
    anchor = utc(2026, 8, 27, 0, 10)
    window = due_window(s, anchor, utc(2026, 8, 27, 1), utc(2026, 8, 27, 6, 5))
    assert window == utc(2026, 8, 27, 6)
    nine = parse_schedule(
        {"type": "cron", "expression": "0 9 * * *", "timezone": "Asia/Taipei"}, {}
    )
    assert next_window_after(nine, anchor, anchor) == utc(2026, 8, 27, 1)


@needs_cron
def test_cron_spring_forward_minute_never_fires() -> None:
    s = parse_schedule(
        {"type": "cron", "expression": "30 2 * * *", "timezone": "America/New_York"}, {}
    )
    anchor = utc(2024, 3, 9, 12)
    nxt = next_window_after(s, anchor, anchor)
    assert nxt is not None
    assert nxt.isoformat() == "2024-03-11T06:30:00+00:00"


# --- properties ----------------------------------------------------------------------------

ZONES = ["UTC", "Asia/Taipei", "America/New_York", "Europe/London", "Australia/Lord_Howe"]
instants = st.datetimes(
    min_value=datetime(2023, 1, 1), max_value=datetime(2025, 12, 31), timezones=st.just(UTC)
)
dailies = st.builds(
    Daily,
    at=st.times().map(lambda t: t.replace(second=0, microsecond=0)),
    timezone=st.sampled_from([*ZONES, None]),
)


def _daily_windows(s: Daily, lo: datetime, hi: datetime) -> list[datetime]:
    zone = get_zone(s.timezone or "UTC")
    day = local_date(lo, zone) - timedelta(days=2)
    end = local_date(hi, zone) + timedelta(days=2)
    out = []
    while day <= end:
        out.append(wall_to_instant(day, s.at, zone))
        day += timedelta(days=1)
    return out


@settings(max_examples=150, deadline=None)
@given(
    every=st.integers(60, 86400),
    anchor=instants,
    gap=st.integers(0, 3 * 86400),
    consumed=st.integers(0, 3 * 86400) | st.none(),
)
def test_interval_matches_brute_force(
    every: int, anchor: datetime, gap: int, consumed: int | None
) -> None:
    s = Interval(every_seconds=every)
    now = anchor + timedelta(seconds=gap)
    last = None if consumed is None else anchor + timedelta(seconds=consumed)
    windows = [anchor + timedelta(seconds=every * k) for k in range(gap // every + 2)]
    eligible = [w for w in windows if w <= now and (last is None or w > last)]
    assert due_window(s, anchor, last, now) == (max(eligible) if eligible else None)
    assert next_window_after(s, anchor, now) == min(w for w in windows if w > now)


@settings(max_examples=150, deadline=None)
@given(s=dailies, saved=instants, gap=st.integers(0, 10 * 86400), consumed=st.integers(0, 10))
def test_daily_matches_brute_force(s: Daily, saved: datetime, gap: int, consumed: int) -> None:
    anchor = initial_anchor(s, saved)
    assert anchor <= saved
    now = saved + timedelta(seconds=gap)
    windows = [w for w in _daily_windows(s, anchor, now) if w >= anchor]
    last = windows[consumed] if consumed < len(windows) and windows[consumed] <= now else None
    eligible = [w for w in windows if w <= now and (last is None or w > last)]
    assert due_window(s, anchor, last, now) == (max(eligible) if eligible else None)
    assert next_window_after(s, anchor, now) == min(w for w in windows if w > now)


@settings(max_examples=150, deadline=None)
@given(s=dailies, saved=instants, a=st.integers(0, 5 * 86400), b=st.integers(0, 5 * 86400))
def test_due_window_is_monotonic_in_now(s: Daily, saved: datetime, a: int, b: int) -> None:
    anchor = initial_anchor(s, saved)
    early, late = sorted((saved + timedelta(seconds=a), saved + timedelta(seconds=b)))
    for spec in (s, Interval(every_seconds=3600)):
        first = due_window(spec, anchor, None, early)
        second = due_window(spec, anchor, None, late)
        if first is not None:
            assert second is not None
            assert first <= second <= late


@settings(max_examples=100, deadline=None)
@given(s=dailies, day=st.dates(min_value=date(2023, 1, 1), max_value=date(2025, 12, 31)))
def test_daily_one_window_per_local_date(s: Daily, day: date) -> None:
    """Neither skipped nor doubled: consecutive windows are 23–25 hours apart (or 22.5–25.5)."""
    zone = get_zone(s.timezone or "UTC")
    anchor = wall_to_instant(day, time(0), zone)
    first = next_window_after(s, anchor, anchor - timedelta(seconds=1))
    assert first is not None
    second = next_window_after(s, anchor, first)
    assert second is not None
    assert timedelta(hours=22, minutes=30) <= second - first <= timedelta(hours=25, minutes=30)


@needs_cron
def test_cron_fall_back_minute_fires_once() -> None:
    s = parse_schedule(
        {"type": "cron", "expression": "30 * * * *", "timezone": "America/New_York"}, {}
    )
    anchor = utc(2024, 11, 3, 4)
    out, after = [], anchor
    for _ in range(4):
        window = next_window_after(s, anchor, after)
        assert window is not None
        out.append(window.isoformat())
        after = window
    assert out == [
        "2024-11-03T04:30:00+00:00",  # 00:30 EDT
        "2024-11-03T05:30:00+00:00",  # 01:30 EDT (first occurrence)
        "2024-11-03T07:30:00+00:00",  # 02:30 EST: the repeated 01:30 EST never fires
        "2024-11-03T08:30:00+00:00",
    ]
    consumed = utc(2024, 11, 3, 5, 30)
    assert due_window(s, anchor, consumed, utc(2024, 11, 3, 6, 45)) is None


CRON_CASES = [
    ("*/15 * * * *", "UTC"),
    ("30 1 * * *", "America/New_York"),
    ("0 2 * * *", "America/New_York"),
    ("0 9 * * 1-5", "Asia/Taipei"),
]


@needs_cron
@settings(max_examples=60, deadline=None)
@given(case=st.sampled_from(CRON_CASES), saved=instants, gap=st.integers(0, 3 * 86400))
def test_cron_due_window_is_the_last_window_walked(
    case: tuple[str, str], saved: datetime, gap: int
) -> None:
    expression, zone = case
    s = parse_schedule({"type": "cron", "expression": expression, "timezone": zone}, {})
    anchor = initial_anchor(s, saved)
    now = saved + timedelta(seconds=gap)
    walked: list[datetime] = []
    window = next_window_after(s, anchor, anchor)
    while window is not None and window <= now:
        walked.append(window)
        window = next_window_after(s, anchor, window)
    assert all(w > anchor for w in walked)
    assert due_window(s, anchor, None, now) == (walked[-1] if walked else None)
    if len(walked) > 1:
        assert due_window(s, anchor, walked[-2], now) == walked[-1]
        assert due_window(s, anchor, walked[-1], now) is None
