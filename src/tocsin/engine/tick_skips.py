"""The tick's skip records that are not a clock trigger's decision (a clock trigger's skips are
its schedule decision's, :func:`tocsin.engine.evaluate.clock_decision`, the same for every
schedule): the due window of an invalid stored clock trigger (``invalid_config``), and the date
values a tick consumed because they fell due inside a pause (:func:`paused_value_range`, the
pause rule of a date trigger's per-record scan, SPEC §4.1).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from tocsin.core.model import TriggerState
from tocsin.core.schedules import skips
from tocsin.engine.evaluate import StoredTrigger


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


__all__ = ["invalid_skips", "paused_value_range"]
