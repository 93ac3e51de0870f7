"""When a scheduled lane runs, over which windows, and what it skips. Pure: no I/O, no clock.

A lane's schedule instant ``s`` runs the window ``[previous instant, s)``, so consecutive runs
share a boundary and never overlap. The lane's state is ``next_fire_at``, the first instant not
processed yet; the end of the last processed window is the instant before it. At ``now`` the
instants owed are ``next_fire_at .. latest`` (``latest``: the last instant ``<= now``). Then, by
the lane's ``catch_up``:

- ``"all"`` (the default): every owed instant runs its own window, oldest first, at most
  ``limit`` per call (the caller pages until none is owed): no data window is lost;
- ``"latest"``: one run at ``latest`` over the merged window ``[end of the last processed
  window, latest)``; the older owed instants are recorded ``coalesced`` (their data is in the
  merged window, but they did not run on their own);
- ``"none"``: on time (one instant owed) it runs; after downtime every owed instant is recorded
  ``coalesced`` and nothing runs (their windows are never looked at).

Every decision also records the spring-forward gaps it passed whose wall times the cron matches
(``dst_gap``: a wall time that does not exist never fires). A paused lane decides nothing; its
resume records the instants owed up to the resume, ``paused``, and runs none of them
(:func:`paused_skips`).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from tocsin.core.contract.lane import Window
from tocsin.core.schedules import skips
from tocsin.core.schedules.decide import CRON_REPEATED
from tocsin.core.schedules.skips import SkipRange
from tocsin.core.time import cron
from tocsin.core.time.cron import CronSpec

CATCH_UP = ("all", "latest", "none")
DEFAULT_CATCH_UP = "all"
REPEATED = CRON_REPEATED  # a lane fires as a plain cron schedule: a repeated wall time once
_TICK = timedelta(microseconds=1)


@dataclass(frozen=True, slots=True)
class LaneSchedule:
    """The timing of one lane: its id (the skip ledger's target), cron, zone and catch-up."""

    lane_id: str
    cron: str
    zone: str
    catch_up: str = DEFAULT_CATCH_UP

    def next_after(self, after: datetime) -> datetime | None:
        """The first schedule instant strictly after ``after``."""
        return cron.next_after(self._spec(), after, tz=self.zone, repeated=REPEATED)

    def previous_before(self, before: datetime) -> datetime | None:
        """The last schedule instant strictly before ``before``."""
        spec = self._spec()
        return cron.prev_at_or_before(spec, before - _TICK, tz=self.zone, repeated=REPEATED)

    def latest_at(self, now: datetime) -> datetime | None:
        """The last schedule instant at or before ``now``."""
        return cron.prev_at_or_before(self._spec(), now, tz=self.zone, repeated=REPEATED)

    def window(self, scheduled_for: datetime) -> Window | None:
        """``[previous instant, scheduled_for)``; None when no earlier instant exists."""
        start = self.previous_before(scheduled_for)
        return None if start is None else Window(start, scheduled_for)

    def _spec(self) -> CronSpec:
        return cron.parse(self.cron, dialect="extended")


@dataclass(frozen=True, slots=True)
class LaneFire:
    """One run the decision admits: its instant and its window."""

    scheduled_for: datetime
    window: Window


@dataclass(frozen=True, slots=True)
class LaneDecision:
    """The runs to admit (oldest first), the skipped ranges, the lane's next ``next_fire_at``."""

    fires: tuple[LaneFire, ...]
    skips: tuple[SkipRange, ...]
    next_fire_at: datetime | None


def decide(
    schedule: LaneSchedule, next_fire_at: datetime | None, now: datetime, *, limit: int
) -> LaneDecision:
    """What a due lane does at ``now`` (the module docstring); ``limit`` bounds the runs of
    ``catch_up="all"`` in one call (the next call continues from the returned state)."""
    if next_fire_at is None or next_fire_at > now:
        return LaneDecision((), (), next_fire_at)
    latest = schedule.latest_at(now)
    latest = next_fire_at if latest is None or latest < next_fire_at else latest
    if schedule.catch_up == "all" or latest == next_fire_at:
        return _each(schedule, next_fire_at, now, limit)
    start = schedule.previous_before(next_fire_at)
    following = schedule.next_after(latest)
    if schedule.catch_up == "none":
        owed = owed_range(schedule, next_fire_at, latest, skips.COALESCED, inclusive=True)
        return LaneDecision((), tuple(owed + _gaps(schedule, next_fire_at, latest)), following)
    coalesced = owed_range(schedule, next_fire_at, latest, skips.COALESCED, inclusive=False)
    gaps = _gaps(schedule, next_fire_at, latest)
    fires = () if start is None else (LaneFire(latest, Window(start, latest)),)
    return LaneDecision(fires, tuple(coalesced + gaps), following)


def _each(schedule: LaneSchedule, first: datetime, now: datetime, limit: int) -> LaneDecision:
    """Every owed instant from ``first`` over its own window, at most ``limit``."""
    fires: list[LaneFire] = []
    start = schedule.previous_before(first)
    instant: datetime | None = first
    last = first
    count = 0
    while instant is not None and instant <= now and count < limit:
        if start is not None:
            fires.append(LaneFire(instant, Window(start, instant)))
        start, last, count = instant, instant, count + 1
        instant = schedule.next_after(instant)
    return LaneDecision(tuple(fires), tuple(_gaps(schedule, first, last)), instant)


def paused_skips(
    schedule: LaneSchedule, next_fire_at: datetime | None, now: datetime
) -> list[SkipRange]:
    """The instants a paused lane owed up to ``now`` (included), as one ``paused`` range."""
    if next_fire_at is None or next_fire_at > now:
        return []
    return owed_range(schedule, next_fire_at, now, skips.PAUSED, inclusive=True)


def owed_range(
    schedule: LaneSchedule, first: datetime, end: datetime, reason: str, *, inclusive: bool
) -> list[SkipRange]:
    """The lane's instants ``first ..`` up to ``end`` (included or not) as one range."""
    before = end + _TICK if inclusive else end
    found = skips.span(first, before, schedule.next_after)
    if found is None:
        return []
    last, count, capped = found
    after = schedule.previous_before(first)
    target = schedule.lane_id
    return [SkipRange(skips.LANE, target, reason, first, last, count, after, capped)]


def _gaps(schedule: LaneSchedule, first: datetime, latest: datetime) -> list[SkipRange]:
    """The spring-forward gaps since the instant before ``first`` up to ``latest`` whose wall
    times the cron matches (``dst_gap``)."""
    since = schedule.previous_before(first) or first
    spec = cron.parse(schedule.cron, dialect="extended")
    return [
        SkipRange(skips.LANE, schedule.lane_id, skips.DST_GAP, at, at, walls)
        for at, walls in skips.gap_walls(spec, schedule.zone, since, latest)
    ]


__all__ = [
    "CATCH_UP",
    "DEFAULT_CATCH_UP",
    "REPEATED",
    "LaneDecision",
    "LaneFire",
    "LaneSchedule",
    "decide",
    "owed_range",
    "paused_skips",
]
