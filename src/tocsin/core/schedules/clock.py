"""A table clock trigger as a schedule (SPEC §4.2–4.4, §5.3): its timing leaf and its instants.

A table's interval/daily/cron trigger is decided by :func:`tocsin.core.schedules.decide.decide`,
as every schedule is. Its timing spec is a :class:`TableClock` (the parsed schedule and its
anchor: the trigger's windows, :mod:`tocsin.core.schedules.windows`); seed 000's rules are its
fixed policy values (:func:`table_timing`):

- one active run: ``overlap="hold"``: while a run of the trigger is pending or running nothing
  fires; the latest owed window stays owed (it fires at the first decision after the run ended)
  and the older ones are skipped ``active_run``;
- downtime coalesces to the latest window: ``catch_up="latest"``.

The trigger's state row maps onto the decision's :class:`~tocsin.core.schedules.decide.State`
with :func:`table_state`: the owed windows start at its ``next_due_at`` (the first window after
``last_consumed``, or the window an active run held, which marks how far skips were recorded);
its ``last_consumed`` (else its anchor) is where DST gaps are counted from.

Pure: no I/O, no clock. A :class:`ClockTimeline` is memoised per (schedule, anchor).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from tocsin import messages
from tocsin.core.schedules import skips, windows
from tocsin.core.schedules.shape import (
    DEFAULT_MAX_CATCH_UP,
    TABLE_CATCH_UP,
    TABLE_OVERLAP,
    State,
    TableClock,
    Timing,
)
from tocsin.core.schedules.skips import SkipRange
from tocsin.core.schedules.spec import ClockSchedule, CronSchedule, Interval, zone_name
from tocsin.core.schedules.timeline import shifted
from tocsin.core.schedules.tree import Node
from tocsin.core.time.cron.timeline import ZoneOffsets, resolve

_TICK = timedelta(microseconds=1)
_MEMO_SIZE = 4096
_MISS = object()
_SHARED_MAX = 65_536
_LINES: dict[int, ClockTimeline] = {}
_TIMINGS: dict[tuple[int, datetime, bool], tuple[ClockSchedule, Timing]] = {}
_MIN = datetime.min.replace(tzinfo=UTC)


class ClockTimeline:
    """A table clock trigger's windows, as the decision reads a schedule's instants (the shape
    of :class:`tocsin.core.schedules.timeline.Timeline`): every window could fire, no event
    leaf, no latch."""

    single = True
    events: frozenset[str] = frozenset()

    def __init__(self, clock: TableClock) -> None:
        self.clock = clock
        self.spec = clock.spec
        self.anchor = clock.anchor
        self.step = (
            timedelta(seconds=clock.spec.every_seconds)
            if isinstance(clock.spec, Interval)
            else None
        )
        spec = clock.spec
        zoned = isinstance(spec, CronSchedule) and isinstance(resolve(zone_name(spec)), ZoneOffsets)
        #: a zoned cron's spring-forward gaps swallow windows (``dst_gap``)
        self.gapped = [spec] if zoned else []
        self._memo: dict[tuple[bool, datetime], datetime | None] = {}

    @property
    def tree(self) -> Node:
        """A table trigger has no tree: the decision walks one only for event leaves or
        latches, which a table trigger never has."""
        raise TypeError(messages.TABLE_CLOCK_WITHOUT_TREE)

    def _keep(self, key: tuple[bool, datetime], value: datetime | None) -> datetime | None:
        if len(self._memo) >= _MEMO_SIZE:
            self._memo.clear()
        self._memo[key] = value
        return value

    def next(self, after: datetime) -> datetime | None:
        """The first window strictly after ``after``."""
        hit = self._memo.get((True, after), _MISS)
        if hit is _MISS:
            found = windows.next_window_after(self.spec, self.anchor, after)
            return self._keep((True, after), found)
        return hit  # type: ignore[return-value]

    def latest_could(self, now: datetime) -> datetime | None:
        """The latest window ``<= now``."""
        hit = self._memo.get((False, now), _MISS)
        if hit is _MISS:
            return self._keep((False, now), windows.due_window(self.spec, self.anchor, None, now))
        return hit  # type: ignore[return-value]

    def prev(self, before: datetime) -> datetime | None:
        """The last window strictly before ``before``."""
        return self.latest_could(shifted(before, -_TICK))

    next_could = next
    prev_could = prev

    def active(self, at: datetime) -> frozenset[str]:
        return frozenset({""})

    def could(self, at: datetime) -> bool:
        return True

    def ranges(
        self, sid: str, reason: str, first: datetime, before: datetime, kind: str = skips.SCHEDULE
    ) -> list[SkipRange]:
        """The windows ``first ..`` strictly before ``before`` as one range (interval:
        arithmetically)."""
        if first >= before:
            return []
        if self.step is not None:
            last, count = skips.interval_span(first, before, self.step)
            capped = False
        else:
            found = skips.span(first, before, self.next)
            if found is None:
                return []
            last, count, capped = found
        after = self.prev(first)
        return [SkipRange(kind, sid, reason, first, last, count, after, capped)]

    def gaps(
        self,
        sid: str,
        first: datetime,
        latest: datetime,
        since: datetime | None = None,
        kind: str = skips.SCHEDULE,
    ) -> list[SkipRange]:
        """The spring-forward gaps in ``(since, latest]`` whose wall times the cron matches
        (``since``: the last consumed window, else the window before ``first``, else the
        anchor)."""
        spec = self.spec
        if not self.gapped or not isinstance(spec, CronSchedule):
            return []
        start = since or self.prev(first) or self.anchor
        return [
            SkipRange(kind, sid, skips.DST_GAP, at, at, walls)
            for at, walls in skips.gap_walls(spec.spec, zone_name(spec), start, latest)
        ]


def clock_timeline(clock: TableClock) -> ClockTimeline:
    """The :class:`ClockTimeline` of a table clock trigger, memoised per timing object (a
    shared :func:`table_timing`'s is built once; the memo holds the object, so its id is not
    reused while it is held)."""
    hit = _LINES.get(id(clock))
    if hit is None or hit.clock is not clock:
        if len(_LINES) >= _SHARED_MAX:
            _LINES.clear()
        hit = _LINES[id(clock)] = ClockTimeline(clock)
    return hit


def table_timing(spec: ClockSchedule, anchor: datetime, *, paused: bool) -> Timing:
    """A table clock trigger as a schedule: its windows, under seed 000's fixed policies.

    One timing is shared by every trigger of the same (parsed) schedule and anchor: its id is
    empty, the caller names the skips (a table trigger's: table and trigger ids)."""
    key = (id(spec), anchor, paused)
    hit = _TIMINGS.get(key)
    if hit is not None and hit[0] is spec:
        return hit[1]
    clock = TableClock(spec, anchor)
    timing = Timing("", clock, TABLE_CATCH_UP, DEFAULT_MAX_CATCH_UP, TABLE_OVERLAP, paused)
    if len(_TIMINGS) >= _SHARED_MAX:
        _TIMINGS.clear()
    _TIMINGS[key] = (spec, timing)  # the spec held: its id is not reused while memoised
    return timing


def table_state(
    timing: Timing,
    next_due_at: datetime | None,
    last_consumed: datetime | None,
    *,
    active_run: bool,
) -> State:
    """A table clock trigger's state row as the decision's :class:`State`: its windows are owed
    from ``next_due_at`` (the window after ``last_consumed``, or a later one held by an active
    run); a ``next_due_at`` that is no such window (unset, a sentinel) counts from
    ``last_consumed``."""
    clock = timing.trigger
    assert isinstance(clock, TableClock)
    floor = clock.anchor if last_consumed is None else last_consumed
    if next_due_at is None or next_due_at < clock.anchor or next_due_at <= (last_consumed or _MIN):
        line = clock_timeline(clock)
        start = shifted(clock.anchor, -_TICK) if last_consumed is None else last_consumed
        next_due_at = line.next(start)
    return State(next_due_at, None, {}, active_run, floor)


__all__ = ["ClockTimeline", "clock_timeline", "table_state", "table_timing"]
