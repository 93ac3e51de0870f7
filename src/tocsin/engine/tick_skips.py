"""The tick's skip records (issue 17): which due windows of a clock trigger did not fire, and
why, derived without I/O from THE evaluator's verdict and the trigger's state.

- a fire of window ``w`` after missed windows: the windows between the last one accounted for
  and ``w`` were replaced by ``w`` (``coalesced``); a cron window in a spring-forward gap never
  existed (``dst_gap``);
- a due window refused by the one-active-run fence: ``active_run``. The window stays due and
  the trigger's ``next_due_at`` is moved onto it (the tick's existing rule), which marks how far
  the fence was recorded: a later tick records only the windows after it.

Fast path: a fire of the very window the state expected (``next_due_at``) records nothing and
computes nothing more, except the DST check of a zoned cron trigger.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from tocsin.core import skips, windows
from tocsin.core.model import TriggerState
from tocsin.core.schedules import Cron, Interval, Schedule, zone_name
from tocsin.engine.evaluate import StoredTrigger, clock_next_due


def clock_skips(
    trigger: StoredTrigger, state: TriggerState, due_at: datetime, *, fired: bool
) -> list[skips.SkipRange]:
    """The ranges a tick records for a clock trigger whose due window is ``due_at``: fired
    (coalesced and DST gaps before it) or refused by the fence (``active_run`` up to it)."""
    spec, anchor = trigger.spec, state.anchor
    if spec is None or anchor is None:
        return []
    out: list[skips.SkipRange] = []
    tid, table_id = str(trigger.trigger_id), str(state.table_id)
    if fired and isinstance(spec, Cron):
        since = state.last_consumed or anchor
        for at, walls in skips.gap_walls(spec.spec, zone_name(spec), since, due_at):
            out.append(_range(tid, table_id, skips.DST_GAP, at, at, walls, None))
    expected = state.next_due_at
    if expected == due_at and fired:
        return out
    first = clock_next_due(spec, anchor=anchor, last_consumed=state.last_consumed)
    if first is None:
        return out
    after = state.last_consumed
    if expected is not None and expected > first:  # the fence recorded up to ``expected``
        after, first = expected, windows.next_window_after(spec, anchor, expected) or due_at
    if fired:
        found = _span(spec, anchor, first, due_at)
        if found is not None:
            last, count, capped = found
            out.append(_range(tid, table_id, skips.COALESCED, first, last, count, after, capped))
    elif first <= due_at:
        last, count, capped = _span(spec, anchor, first, due_at + timedelta(microseconds=1)) or (
            due_at,
            1,
            False,
        )
        out.append(_range(tid, table_id, skips.ACTIVE_RUN, first, last, count, after, capped))
    return out


def _span(
    spec: Schedule, anchor: datetime, first: datetime, before: datetime
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


__all__ = ["clock_skips"]
