"""The tick's skip records (rows of the skip ledger): which due windows of a clock trigger did
not fire, and why, derived without I/O from THE evaluator's verdict and the trigger's state; and
the date values a tick consumed because they fell due inside a pause (:func:`paused_value_range`).

- a fire of window ``w`` after missed windows: the windows between the last one accounted for
  and ``w`` were replaced by ``w`` (``coalesced``); a cron window in a spring-forward gap never
  existed (``dst_gap``);
- a due window refused by the one-active-run fence stays due (it fires once the run ends, or
  is replaced by a later one); the windows it replaced while the fence held are ``active_run``.
  The tick moves the trigger's ``next_due_at`` onto the refused window (its existing rule), so
  ``next_due_at`` marks how far the ranges were recorded: the windows before it. Adjacent ranges
  of one reason merge in the store (``after``: the window before a range's first).

Fast path: a fire of the very window the state expected (``next_due_at``) records nothing and
computes nothing more, except the DST check of a zoned cron trigger.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta

from tocsin.core.model import TriggerState
from tocsin.core.schedules import skips, windows
from tocsin.core.schedules.spec import CronSchedule, Interval, ScheduleSpec, zone_name
from tocsin.engine.evaluate import StoredTrigger, clock_next_due

_TICK = timedelta(microseconds=1)


def clock_skips(
    trigger: StoredTrigger, state: TriggerState, due_at: datetime, *, fired: bool
) -> list[skips.SkipRange]:
    """The ranges a tick records for a clock trigger whose due window is ``due_at``: fired
    (coalesced and DST gaps before it) or refused by the fence (``active_run`` up to it)."""
    spec, anchor = trigger.spec, state.anchor
    if (
        spec is None
        or anchor is None
        or (fired and due_at == state.next_due_at and not isinstance(spec, CronSchedule))
    ):
        return []  # the fast path (module docstring)
    out: list[skips.SkipRange] = []
    tid, table_id = str(trigger.trigger_id), str(state.table_id)
    if fired and isinstance(spec, CronSchedule):
        since = state.last_consumed or anchor
        for at, walls in skips.gap_walls(spec.spec, zone_name(spec), since, due_at):
            out.append(_range(tid, table_id, skips.DST_GAP, at, at, walls, None))
    reason = skips.COALESCED if fired else skips.ACTIVE_RUN
    return out + replaced_range(trigger, state, due_at, reason)


def replaced_range(
    trigger: StoredTrigger, state: TriggerState, due_at: datetime, reason: str
) -> list[skips.SkipRange]:
    """The windows before ``due_at`` not yet accounted for (after ``last_consumed``, from the
    state's ``next_due_at`` when a fence moved it on), as one ``reason`` range."""
    spec, anchor = trigger.spec, state.anchor
    expected = state.next_due_at
    if spec is None or anchor is None or expected == due_at:
        return []  # the window the state expected: nothing replaced since
    first = clock_next_due(spec, anchor=anchor, last_consumed=state.last_consumed)
    if first is None:
        return []
    if expected is not None and expected > first:  # the windows before it were recorded
        first = expected
    found = _span(spec, anchor, first, due_at)
    if found is None:
        return []
    last, count, capped = found
    after = windows.due_window(spec, anchor, None, first - _TICK)
    tid, table_id = str(trigger.trigger_id), str(state.table_id)
    return [_range(tid, table_id, reason, first, last, count, after, capped)]


def paused_skips(
    trigger: StoredTrigger, state: TriggerState, now: datetime
) -> tuple[list[skips.SkipRange], datetime | None]:
    """The windows a paused clock trigger owed up to ``now``, recorded ``paused`` at resume
    (``engine.pause.resume_trigger``; the latest one included: a paused trigger fires none of
    them), and the next window after ``now``."""
    spec, anchor = trigger.spec, state.anchor
    if spec is None or anchor is None:
        return [], None
    due = windows.due_window(spec, anchor, state.last_consumed, now)
    following = windows.next_window_after(spec, anchor, now)
    if due is None:
        return [], following
    end = following if following is not None else due + _TICK
    return replaced_range(trigger, state, end, skips.PAUSED), following


def paused_value_range(
    table_id: str, trigger_id: str, pause: tuple[datetime, datetime], count: int
) -> skips.SkipRange:
    """``count`` values of a date trigger whose fire instants fell inside ``pause`` and that a
    tick consumed (``engine.pause.paused_value_ranges``): one ``paused`` range per pause, its bounds
    the pause's. Its ``after`` is its own ``last``, so the values a later tick consumes for the
    same pause add to that one row (the store merges a range into the row ending at ``after``)."""
    start, until = pause
    return _range(trigger_id, table_id, skips.PAUSED, start, until, count, until)


def invalid_skips(
    stored: list[StoredTrigger], states: Mapping[str, TriggerState], now: datetime
) -> list[skips.SkipRange]:
    """Invalid stored clock triggers whose state had a window due: the tick skips them
    (``invalid_config``). Their schedule cannot be read, so the range is the state's due
    instant, its count a lower bound (recorded once: the store keeps one row per first)."""
    out = []
    for t in stored:
        state = states.get(str(t.trigger_id)) if t.trigger_id else None
        if t.valid or state is None or state.retired or state.kind == "date_column_reached":
            continue
        due = state.next_due_at
        if due is not None and due <= now:
            rng = _range(
                str(t.trigger_id),
                str(state.table_id),
                skips.INVALID_CONFIG,
                due,
                due,
                1,
                None,
                True,
            )
            out.append(rng)
    return out


def _span(
    spec: ScheduleSpec, anchor: datetime, first: datetime, before: datetime
) -> tuple[datetime, int, bool] | None:
    if first >= before:
        return None
    if isinstance(spec, Interval):
        last, count = skips.interval_span(first, before, timedelta(seconds=spec.every_seconds))
        return last, count, False
    return skips.span(first, before, lambda at: windows.next_window_after(spec, anchor, at))


def _range(
    tid: str,
    table_id: str,
    reason: str,
    first: datetime,
    last: datetime,
    count: int,
    after: datetime | None,
    capped: bool = False,
) -> skips.SkipRange:
    return skips.SkipRange(
        skips.TRIGGER, tid, reason, first, last, count, after, capped, table_id=table_id
    )


__all__ = [
    "clock_skips",
    "invalid_skips",
    "paused_skips",
    "paused_value_range",
    "replaced_range",
]
