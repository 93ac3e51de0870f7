"""The tick's skip records that are not a schedule's decision (a clock trigger's skips are its
schedule decision's, :func:`tocsin.engine.evaluate.clock_decision`, the same for every schedule;
a date trigger's paused values follow the decision's pause rule,
:mod:`tocsin.core.schedules.pause`): the due window of an invalid stored clock trigger
(``invalid_config``).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from tocsin.core.model import TriggerState
from tocsin.core.schedules import skips
from tocsin.engine.evaluate import StoredTrigger


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


__all__ = ["invalid_skips"]
