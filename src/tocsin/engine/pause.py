"""Pause and resume a table's schedule trigger (SPEC §5, §6, §7).

The pause lives in the trigger's state row (``trigger_state.paused_at``), never in the triggers
config: a ``PUT …/triggers`` keeps it (only retiring the id ends it). While paused the tick
neither plans the trigger nor lets it keep its table due (``tick_plan.due_candidates``,
``TablePlan.next_due``, ``configs.refresh_table_next_due``); record writes do not wake it
(``store.state.lower_next_due``). Both operations are idempotent.

Resume recomputes from ``now`` (nothing backlogged, however long the pause); a clock trigger's
windows the pause kept from firing are recorded in the skip ledger as one ``paused`` range
(reason ``paused``):

- clock kinds (interval/daily/cron): the windows up to ``now`` are consumed (``last_consumed``
  moves to the latest window ``<= now``, with no fire); the next window after it fires.
- ``date_column_reached``: the pause ``[paused_at, now]`` is remembered in ``pause_windows``; a
  value whose fire instant falls inside a pause never fires. The tick consumes it in the
  occurrence ledger without a run when it scans its page, and records it in the skip ledger as
  ``paused`` (one range per pause: ``paused_value_ranges``); the preview counts it as
  ``already_fired``, while the trigger is still paused too. Values due before the pause, or
  after the resume, fire as usual (while paused, the preview counts those as
  ``scheduled_for_future``: nothing of a paused trigger is due now).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from tocsin import messages
from tocsin.core.model import Table, TriggerState
from tocsin.core.schedules.pause import Pause, pauses_at, value_skips
from tocsin.core.schedules.skips import SkipRange
from tocsin.core.schedules.spec import CLOCK_KINDS, parse_schedule
from tocsin.core.time.instants import to_iso
from tocsin.engine.configs import ALWAYS_DUE, NEVER_DUE, refresh_table_next_due
from tocsin.engine.evaluate import (
    StoredTrigger,
    clock_decision,
    inspect_stored,
    trigger_skips,
)
from tocsin.errors import Conflict, NotFound
from tocsin.store import skips as store_skips
from tocsin.store import state as store_state
from tocsin.store.tx import Tx

if TYPE_CHECKING:  # the tick's scan type (engine.tick_plan imports this module)
    from tocsin.engine.tick_plan import DateScan


def schedule_trigger(table: Table, trigger_id: str) -> Mapping[str, Any]:
    """The table's stored trigger ``trigger_id``: 404 when absent, 409 when it is no schedule
    trigger (row-event triggers have nothing to pause)."""
    stored = table.triggers
    for trigger in stored if isinstance(stored, list) else []:
        if isinstance(trigger, Mapping) and trigger.get("id") == trigger_id:
            if trigger.get("on") != "schedule":
                raise Conflict(messages.trigger_not_pausable(trigger_id, trigger.get("on")))
            return trigger
    raise NotFound(messages.TRIGGER_NOT_FOUND)


def _live_state(tx: Tx, table: Table, trigger_id: str) -> TriggerState:
    state = store_state.get_state(tx, table_id=table.id, trigger_id=trigger_id)
    if state is None or state.retired:
        raise Conflict(messages.trigger_without_state(trigger_id))
    return state


def pause_trigger(tx: Tx, *, table: Table, trigger_id: str, now: datetime) -> dict[str, Any]:
    """Pause (``table`` locked by the caller); the trigger's pause view."""
    schedule_trigger(table, trigger_id)
    _live_state(tx, table, trigger_id)
    store_state.pause_state(tx, table_id=table.id, trigger_id=trigger_id, now=now)
    refresh_table_next_due(tx, table_id=table.id)
    return pause_view(_live_state(tx, table, trigger_id))


def resume_trigger(tx: Tx, *, table: Table, trigger_id: str, now: datetime) -> dict[str, Any]:
    """Resume from ``now`` (the module docstring; ``table`` locked by the caller)."""
    trigger = schedule_trigger(table, trigger_id)
    state = _live_state(tx, table, trigger_id)
    if state.paused_at is not None:
        [stored] = inspect_stored([trigger], table.columns, [trigger_id])
        if stored.spec is not None and stored.spec.kind in CLOCK_KINDS and state.anchor:
            decision = clock_decision(stored, state, now=now, active_run=False, paused=True)
            ranges = trigger_skips(
                decision, table.id, trigger_id
            )  # the windows not fired: ``paused``
            store_skips.record_skips(tx, ranges=ranges, now=now)
        last, pauses, next_due = resumed(trigger, table.columns, state, now)
        store_state.resume_state(
            tx,
            table_id=table.id,
            trigger_id=trigger_id,
            last_consumed=last,
            pause_windows=pauses,
            next_due_at=next_due,
            now=now,
        )
        refresh_table_next_due(tx, table_id=table.id)
    return pause_view(_live_state(tx, table, trigger_id))


Pauses = tuple[tuple[datetime, datetime], ...]
# A date value whose fire instant fell inside a pause, for the tick to consume without a run:
# ``(table_id, trigger_id, identity, the pause)``.
PausedValue = tuple[str, str, str, Pause]


def resumed(
    trigger: Mapping[str, Any], columns: Mapping[str, str], state: TriggerState, now: datetime
) -> tuple[datetime | None, Pauses, datetime]:
    """A paused trigger's ``(last_consumed, pause_windows, next_due_at)`` once resumed at
    ``now`` (pure)."""
    spec = parse_schedule(trigger.get("schedule"), columns)
    last, pauses = state.last_consumed, state.pause_windows
    if spec.kind not in CLOCK_KINDS or state.anchor is None:
        return last, pauses_at(pauses, state.paused_at or now, now), ALWAYS_DUE
    [stored] = inspect_stored([trigger], columns, [state.trigger_id])
    decision = clock_decision(stored, state, now=now, active_run=False, paused=True)
    if decision.skips:  # the paused decision gave its owed windows up: the latest is consumed
        last = decision.state.consumed
    return last, pauses, decision.next_due_at or NEVER_DUE


def pause_view(state: TriggerState) -> dict[str, Any]:
    """What pause/resume answer: the trigger's pause status and next due instant."""
    due = state.next_due_at
    shown = None if state.paused or due is None or due in (ALWAYS_DUE, NEVER_DUE) else due
    return {
        "table_id": state.table_id,
        "trigger_id": state.trigger_id,
        "kind": state.kind,
        "paused": state.paused,
        "paused_at": None if state.paused_at is None else to_iso(state.paused_at),
        "next_due_at": None if shown is None else to_iso(shown),
    }


# --- the tick's side: date values that fell due inside a pause ----------------------------------


def paused_values(
    table_id: str,
    due: Iterable[tuple[StoredTrigger, TriggerState, DateScan | None]],
    skipped: Iterable[tuple[str, Exception]],
) -> tuple[PausedValue, ...]:
    """The values of the date triggers' scanned pages (``due``: the tick's candidates with their
    scans; ``skipped``: the triggers whose plan raised, left alone) whose fire instants fell
    inside one of their pauses, the ledger not holding them yet: the tick consumes them."""
    broken = {tid for tid, _ in skipped}
    return tuple(
        (table_id, str(trigger.trigger_id), v.identity, v.pause)
        for trigger, _, scan in due
        if scan is not None and trigger.trigger_id not in broken
        for v in scan.verdicts
        if v.pause is not None and v.identity is not None
    )


def paused_value_ranges(
    values: Sequence[PausedValue], outcome: Sequence[str | None]
) -> list[SkipRange]:
    """The ``paused`` skip ranges of the tick's paused date values (:func:`paused_values`),
    given the fire path's ``outcome`` for each (claimed in the ledger without a run, a run id no
    run has: the value never fires): one range per pause of a trigger, counting the values this
    transaction claimed (:func:`tocsin.core.schedules.pause.value_skips`, the pause rule every
    schedule's decision applies)."""
    counts: dict[tuple[str, str, Pause], int] = {}
    for (table_id, trigger_id, _, pause), got in zip(values, outcome, strict=True):
        if got:
            key = (table_id, trigger_id, pause)
            counts[key] = counts.get(key, 0) + 1
    return [value_skips(t, tid, pause, n) for (t, tid, pause), n in counts.items()]


__all__ = [
    "PausedValue",
    "pause_trigger",
    "pause_view",
    "paused_value_ranges",
    "paused_values",
    "resume_trigger",
    "resumed",
    "schedule_trigger",
]
