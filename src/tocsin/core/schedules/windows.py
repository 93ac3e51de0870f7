"""Clock windows: anchors, the due window (coalescing) and the next window (SPEC §4.2–4.4, §5.3).

A *window* is the instant a clock firing belongs to. Each clock trigger has an *anchor* (set when
it is saved or its timing changes) and a *last consumed* window (None until it first fires).

- interval: windows are ``anchor + n × every_seconds`` for n ≥ 0. The anchor is the save instant,
  so the first window is the save itself and the next tick fires at once.
- daily: one window per local date, ``wall_to_instant(date, at, zone)`` (fold=0), counting the
  windows ``>= anchor``. The anchor is the start of the local day of saving, so a trigger saved
  at 10:00 with ``at`` 01:30 has today's slot already due (fires at the next tick), then
  tomorrow's.
- cron: windows are the instants of the expression in its zone (``repeated="first"``) strictly
  **after** the anchor, which is the save instant. It never backfills: saved at 10:00 with
  ``0 9 * * *`` the first window is tomorrow 09:00. A save at exactly 09:00:00 does not own the
  09:00 window either (the minute is already under way); the first window is the next day's.

Re-timing a trigger (§5.2: every_seconds, at, expression or timezone changed) re-anchors it with
``initial_anchor(new_spec, changed_at)``: the same rule as a first save.

``due_window`` is the *latest* window ``<= now`` that is after ``last_consumed``: five missed
hourly windows coalesce into one, the latest (§5.3). Every computation is O(1) in the distance
between anchor and now (interval is arithmetic, daily looks at a few local dates, cron asks the
evaluator for one previous/next instant). Results at the datetime bounds saturate: nothing raises.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date, datetime, time, timedelta

from tocsin.core.schedules.spec import (
    CronSchedule,
    Daily,
    DateColumnReached,
    Interval,
    ScheduleSpec,
    zone_name,
)
from tocsin.core.time import cron
from tocsin.core.time.instants import MAX_UTC, MIN_UTC, require_aware
from tocsin.core.time.zones import get_zone, local_date, wall_to_instant


def initial_anchor(s: ScheduleSpec, saved_at: datetime) -> datetime:
    """The anchor of a clock schedule saved (or re-timed) at ``saved_at``."""
    saved = require_aware(saved_at, "saved_at")
    if isinstance(s, Daily):
        zone = get_zone(zone_name(s))
        midnight = wall_to_instant(local_date(saved, zone), time(0), zone)
        return min(midnight, saved)
    return saved


def due_window(
    s: ScheduleSpec, anchor: datetime, last_consumed: datetime | None, now: datetime
) -> datetime | None:
    """The latest window ``w`` with ``anchor <= w <= now`` (cron: ``anchor < w``) and
    ``w > last_consumed``; None when there is none (or for date_column_reached)."""
    anchor = require_aware(anchor, "anchor")
    now = require_aware(now, "now")
    floor = None if last_consumed is None else require_aware(last_consumed, "last_consumed")
    if isinstance(s, DateColumnReached) or now < anchor:
        return None
    window = _latest_at_or_before(s, anchor, now)
    if window is None or (floor is not None and window <= floor):
        return None
    return window


def next_window_after(s: ScheduleSpec, anchor: datetime, after: datetime) -> datetime | None:
    """The first window strictly after ``after`` (and owned by ``anchor``); None when none exists
    before the end of the datetime range (or for date_column_reached)."""
    anchor = require_aware(anchor, "anchor")
    after = require_aware(after, "after")
    if isinstance(s, Interval):
        return _interval_next(s, anchor, after)
    if isinstance(s, Daily):
        return _daily_next(s, anchor, after)
    if isinstance(s, CronSchedule):
        return cron.next_after(s.spec, max(after, anchor), tz=zone_name(s), repeated="first")
    return None


def next_due_at(
    s: ScheduleSpec, anchor: datetime, last_consumed: datetime | None, now: datetime
) -> datetime | None:
    """When the trigger is next due: the due window if one exists now, else the next window."""
    due = due_window(s, anchor, last_consumed, now)
    if due is not None:
        return due
    return next_window_after(s, anchor, now)


def _latest_at_or_before(s: ScheduleSpec, anchor: datetime, now: datetime) -> datetime | None:
    if isinstance(s, Interval):
        step = timedelta(seconds=s.every_seconds)
        return anchor + ((now - anchor) // step) * step
    if isinstance(s, Daily):
        for slot in _daily_slots(s, local_date(now, get_zone(zone_name(s))), (1, 0, -1, -2)):
            if slot <= now:
                return slot if slot >= anchor else None
        return None
    if isinstance(s, CronSchedule):
        window = cron.prev_at_or_before(s.spec, now, tz=zone_name(s), repeated="first")
        return window if window is not None and window > anchor else None
    return None


def _interval_next(s: Interval, anchor: datetime, after: datetime) -> datetime | None:
    if after < anchor:
        return anchor
    step = timedelta(seconds=s.every_seconds)
    try:
        return anchor + ((after - anchor) // step + 1) * step
    except OverflowError:
        return None


def _daily_next(s: Daily, anchor: datetime, after: datetime) -> datetime | None:
    start = max(after, anchor)
    for slot in _daily_slots(s, local_date(start, get_zone(zone_name(s))), (-1, 0, 1, 2)):
        if slot > after and slot >= anchor:
            return slot
    return None


def _daily_slots(s: Daily, around: date, offsets: tuple[int, ...]) -> Iterator[datetime]:
    """The slot instants of the local dates ``around + offset`` (skipping out-of-range dates).

    Slot instants are monotonic in the local date, so callers scan them in order.
    """
    zone = get_zone(zone_name(s))
    for offset in offsets:
        try:
            day = around + timedelta(days=offset)
        except OverflowError:
            continue
        slot = wall_to_instant(day, s.at, zone)
        if slot in (MIN_UTC, MAX_UTC):
            continue  # saturated: not a real slot
        yield slot


__all__ = ["due_window", "initial_anchor", "next_due_at", "next_window_after"]
