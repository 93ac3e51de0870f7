"""The schedule preview: the scheduler's own verdicts at ``now``, reported, never acted on (§7).

Read-only by construction: :func:`schedule_preview` opens ``store.read()`` (a ``Tx`` whose
``readonly`` flag makes every store write refuse) and calls only read functions. It never creates
runs, claims occurrences, moves cursors or dispatches work, and never returns record ids or cell
values: only stable English codes and counts.

Arms (a discriminated union on ``kind``), one per stored schedule trigger, in config order:

- ``date_column_reached``: mutually exclusive counts over the page the next tick reads first
  (the same cursor page, the same classification order); ``records_scanned`` is their sum,
  ``live_records = records_scanned + unscanned``, ``truncated = unscanned > 0``.
- ``interval | daily | cron``: ``last_consumed_window_at``, ``due_at`` (the tick's due-window
  computation), ``due_now``, ``active_run`` (true forces ``due_now`` false).
- ``invalid``: what the tick skips, with every stable error code.

A paused trigger's arm (:mod:`tocsin.engine.pause`) adds ``paused: true`` and ``paused_since``,
and says why nothing fires: warning ``trigger_paused``; a clock arm has no ``due_at`` and
``due_now`` false; a date arm still counts its next cursor page, with nothing due now: a value
whose fire instant fell inside a pause (this one so far, or a past one) never fires and counts
as ``already_fired``; one that would be due otherwise fires at the first tick after the resume
and counts as ``scheduled_for_future``. The six counts and their invariants hold in every state.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from tocsin import messages
from tocsin.core.model import Table, TriggerState
from tocsin.core.schedules.spec import DateColumnReached
from tocsin.core.time.instants import to_iso
from tocsin.engine.evaluate import (
    DATE_VERDICTS,
    DUE_NOW,
    ClockVerdict,
    StoredTrigger,
    classify,
    count_verdicts,
    inspect_stored,
)
from tocsin.engine.tick import scan_date_trigger
from tocsin.errors import NotFound
from tocsin.store import records as store_records
from tocsin.store import runs as store_runs
from tocsin.store import state as store_state
from tocsin.store.tx import Store, Tx

CLOCK_KINDS = ("interval", "daily", "cron")
WHEN_IGNORED = "when_ignored_for_recordless_schedule"
# No skip-if-overdue (SPEC §4.1): the next tick fires every due row of this page, however old.
OVERDUE_WILL_FIRE = "overdue_records_will_fire"
# A paused trigger (engine.pause): the tick neither plans nor fires it.
TRIGGER_PAUSED = "trigger_paused"
# The six counts in the order SPEC §7 prints them
ARM_COUNT_ORDER = (
    "already_fired",
    "missing_schedule_value",
    "invalid_schedule_value",
    "scheduled_for_future",
    "when_filter_mismatch",
    "due_now",
)


def schedule_preview(
    store: Store, *, table_id: str, now: datetime, record_limit: int, next_due: bool = False
) -> dict[str, Any]:
    """The SPEC §7 document for a live table; ``NotFound`` when missing or trashed. With
    ``next_due`` (Studio) each clock arm also carries ``next_due_at``: the due window, else the
    next window the tick will fire."""
    with store.read() as tx:
        table = store_records.get_table(tx, table_id=table_id)
        if table is None:
            raise NotFound(messages.TABLE_NOT_FOUND)
        live = store_records.count_live_records(tx, table_id=table_id)
        states = store_state.get_states(tx, table_id=table_id)
        live_ids = [tid for tid, s in states.items() if not s.retired]
        stored = inspect_stored(table.triggers, table.columns, live_ids)
        clock_ids = [
            str(t.trigger_id)
            for t in stored
            if t.valid and t.spec is not None and not isinstance(t.spec, DateColumnReached)
        ]
        active = store_runs.active_clock_trigger_ids(tx, table_id=table_id, trigger_ids=clock_ids)
        arms = [
            _arm(tx, table, t, states, active, live=live, now=now, record_limit=record_limit)
            for t in stored
        ]
        arms = [
            _with_next(t, states, arm, now) if next_due and arm["kind"] in CLOCK_KINDS else arm
            for t, arm in zip(stored, arms, strict=True)
        ]
    return {
        "table_id": table.id,
        "evaluated_at": to_iso(now),
        "live_records": live,
        "record_limit": record_limit,
        "triggers": arms,
    }


def _arm(
    tx: Tx,
    table: Table,
    trigger: StoredTrigger,
    states: Mapping[str, TriggerState],
    active: set[str],
    *,
    live: int,
    now: datetime,
    record_limit: int,
) -> dict[str, Any]:
    if not trigger.valid or trigger.trigger_id is None:
        return invalid_arm(trigger)
    state = states[trigger.trigger_id]
    if isinstance(trigger.spec, DateColumnReached):
        return date_arm(tx, table, trigger, state, live=live, now=now, record_limit=record_limit)
    return clock_arm(trigger, state, active_run=trigger.trigger_id in active, now=now)


def _with_next(
    trigger: StoredTrigger, states: Mapping[str, TriggerState], arm: dict[str, Any], now: datetime
) -> dict[str, Any]:
    """``arm`` plus ``next_due_at`` from the same verdict the tick acts on."""
    state = states[str(trigger.trigger_id)]
    verdict = classify(trigger, state, now=now, active_run=bool(arm.get("active_run")))
    following = verdict.next_due_at if isinstance(verdict, ClockVerdict) else None
    return {**arm, "next_due_at": _iso_or_none(following)}


def invalid_arm(trigger: StoredTrigger) -> dict[str, Any]:
    """A stored trigger the scheduler skips, with its stable codes."""
    return {
        "kind": "invalid",
        "trigger_id": trigger.trigger_id,
        "stored_schedule_type": trigger.stored_schedule_type,
        "config_status": "invalid",
        "error_codes": list(trigger.error_codes),
        "warnings": [],
    }


def clock_arm(
    trigger: StoredTrigger, state: TriggerState, *, active_run: bool, now: datetime
) -> dict[str, Any]:
    """An interval/daily/cron trigger: its due window as the tick computes it."""
    spec = trigger.spec
    if spec is None or isinstance(spec, DateColumnReached):
        return invalid_arm(trigger)
    verdict = classify(trigger, state, now=now, active_run=active_run)
    if not isinstance(verdict, ClockVerdict):
        return invalid_arm(trigger)
    warnings = [WHEN_IGNORED] if trigger.when and spec.kind in ("interval", "daily") else []
    paused = state.paused_at is not None
    return {
        "kind": spec.kind,
        "trigger_id": trigger.trigger_id,
        "config_status": "valid",
        "last_consumed_window_at": _iso_or_none(verdict.last_consumed),
        "due_at": None if paused else _iso_or_none(verdict.due_at),
        "due_now": verdict.due_now and not paused,
        "active_run": verdict.active_run,
        **_pause_fields(state),
        "warnings": [*warnings, TRIGGER_PAUSED] if paused else warnings,
    }


def _pause_fields(state: TriggerState) -> dict[str, Any]:
    """``paused`` and ``paused_since`` on a paused trigger's arm (none otherwise: the SPEC §7
    document of an unpaused trigger is unchanged)."""
    if state.paused_at is None:
        return {}
    return {"paused": True, "paused_since": to_iso(state.paused_at)}


def date_arm(
    tx: Tx,
    table: Table,
    trigger: StoredTrigger,
    state: TriggerState,
    *,
    live: int,
    now: datetime,
    record_limit: int,
) -> dict[str, Any]:
    """A date trigger: the verdict counts over the page the next tick reads first (paused: the
    page it reads first once resumed)."""
    spec = trigger.spec
    if not isinstance(spec, DateColumnReached):
        return invalid_arm(trigger)
    read = {"id": table.id, "columns": table.columns}
    verdicts = scan_date_trigger(tx, read, trigger, state, now, record_limit, pages=1).verdicts
    counts = count_verdicts(verdicts)
    scanned = sum(counts[name] for name in DATE_VERDICTS)
    unscanned = max(live - scanned, 0)
    paused = state.paused_at is not None
    return {
        "kind": spec.kind,
        "trigger_id": trigger.trigger_id,
        "config_status": "valid",
        "records_scanned": scanned,
        **{name: counts[name] for name in ARM_COUNT_ORDER},
        "unscanned": unscanned,
        "truncated": unscanned > 0,
        **_pause_fields(state),
        "warnings": [TRIGGER_PAUSED] if paused else [OVERDUE_WILL_FIRE] if counts[DUE_NOW] else [],
    }


def _iso_or_none(value: datetime | None) -> str | None:
    return None if value is None else to_iso(value)


__all__ = [
    "OVERDUE_WILL_FIRE",
    "TRIGGER_PAUSED",
    "WHEN_IGNORED",
    "clock_arm",
    "date_arm",
    "invalid_arm",
    "schedule_preview",
]
