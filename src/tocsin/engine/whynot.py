"""Why (not): next fires of a clock trigger, and the global dry run.

Both only read, and decide through the tick's own code: the dry run claims nothing, but plans
the candidate tables with :func:`tocsin.engine.tick.read_and_plan` (the very function the tick
plans with: THE evaluator, the same date-cursor scan). So what it says fires is what a tick at
that instant creates; every other trigger gets its reason. Workflow schedules:
:mod:`tocsin.engine.schedule_whynot`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from tocsin.core.model import Table, TriggerState
from tocsin.core.schedules.decide import TableClock, next_due
from tocsin.core.schedules.skips import INVALID_CONFIG, PAUSED, TABLE_TRASHED
from tocsin.core.schedules.spec import (
    CronSchedule,
    Daily,
    DateColumnReached,
    ScheduleSpec,
    zone_name,
)
from tocsin.core.time.instants import to_iso
from tocsin.engine.evaluate import (
    DUE_NOW,
    StoredTrigger,
    clock_decision,
    clock_verdict,
    inspect_stored,
    trigger_skips,
)
from tocsin.engine.tick import read_and_plan, scan_date_trigger
from tocsin.engine.tick_plan import TablePlan
from tocsin.store import records as store_records
from tocsin.store import runs as store_runs
from tocsin.store import skips as store_skips
from tocsin.store import state as store_state
from tocsin.store import whynot as store_whynot
from tocsin.store.tx import Tx

NOT_DUE = "not_due"
NO_DUE_RECORDS = "no_due_records"
EVALUATION_ERROR = "evaluation_error"
ACTIVE_RUN = "active_run"


def trigger_paused(state: TriggerState) -> bool:
    """Whether a table trigger is paused (kept in its state row); ``next_fires`` and
    the dry run honour it."""
    return state.paused


def instant_view(at: datetime, zone: str) -> dict[str, str]:
    """An instant in UTC and in ``zone`` (RFC 3339 with its offset)."""
    return {"at": to_iso(at), "local": at.astimezone(ZoneInfo(zone)).isoformat(), "zone": zone}


def clock_next_fires(
    trigger: StoredTrigger, state: TriggerState, *, active: bool, now: datetime, n: int
) -> list[dict[str, Any]]:
    """The next ``n`` instants a clock trigger fires at, from ``now``: its due window first
    (``due``, or ``waiting_for_active_run`` behind the fence), then its windows after ``now``
    (``scheduled``). DST: the windows are the tick's own (gaps never fire, folds fire once)."""
    spec, anchor = trigger.spec, state.anchor
    if spec is None or isinstance(spec, DateColumnReached) or anchor is None:
        return []
    if trigger_paused(state):
        return []
    decision = clock_decision(trigger, state, now=now, active_run=active)
    verdict = clock_verdict(decision, state, active_run=active, now=now)
    zone = zone_of(spec)
    out: list[dict[str, Any]] = []
    if verdict.due_at is not None:
        status = "waiting_for_active_run" if active else "due"
        out.append({**instant_view(verdict.due_at, zone), "status": status})
    clock = TableClock(spec, anchor)  # the decision's own instants after ``now``
    at: datetime | None = now
    while len(out) < n and at is not None:
        at = next_due(clock, {}, at)
        if at is not None:
            out.append({**instant_view(at, zone), "status": "scheduled"})
    return out


def zone_of(spec: ScheduleSpec) -> str:
    """The trigger's zone (interval triggers: UTC)."""
    return str(zone_name(spec)) if isinstance(spec, Daily | CronSchedule) else "UTC"


# --- the global dry run --------------------------------------------------------------------


def dry_run_tables(tx: Tx, *, at: datetime, record_limit: int) -> list[dict[str, Any]]:
    """What a tick at ``at`` fires, and why not, for every table trigger: one entry each."""
    tables = store_whynot.tables_with_triggers(tx)
    candidates = [
        t.as_dict()  # as the tick's claim hands its tables over
        for t in tables
        if not t.trashed and (t.next_due_at is None or t.next_due_at <= at)
    ]
    plans = {p.table_id: p for p in read_and_plan(tx, candidates, at, record_limit)}
    states = store_state.states_of_tables(tx, table_ids=[t.id for t in tables])
    entries: list[dict[str, Any]] = []
    for table in tables:
        entries += _table_entries(tx, table, states.get(table.id, {}), plans, at, record_limit)
    return entries


def _table_entries(
    tx: Tx,
    table: Table,
    states: Mapping[str, TriggerState],
    plans: Mapping[str, TablePlan],
    at: datetime,
    record_limit: int,
) -> list[dict[str, Any]]:
    live = {tid for tid, s in states.items() if not s.retired}
    stored = inspect_stored(table.triggers, table.columns, live)
    plan = plans.get(table.id)
    clock_ids = [str(t.trigger_id) for t in stored if t.valid and t.kind != "date_column_reached"]
    active = (
        store_runs.active_clock_trigger_ids(tx, table_id=table.id, trigger_ids=clock_ids)
        if plan
        else set()
    )
    out = []
    for trigger in stored:
        entry = {"kind": "trigger", "table_id": table.id, "trigger_id": trigger.trigger_id}
        entry.update(_why(tx, table, trigger, states, plan, active, at, record_limit))
        out.append(entry)
    return out


def _why(
    tx: Tx,
    table: Table,
    trigger: StoredTrigger,
    states: Mapping[str, TriggerState],
    plan: TablePlan | None,
    active: set[str],
    at: datetime,
    record_limit: int,
) -> dict[str, Any]:
    tid = str(trigger.trigger_id)
    if table.trashed:
        return {"status": "skipped", "reason": TABLE_TRASHED, "runs": 0}
    if not trigger.valid or trigger.trigger_id is None:
        codes = list(trigger.error_codes)
        return {"status": "skipped", "reason": INVALID_CONFIG, "error_codes": codes, "runs": 0}
    state = states[tid]
    if trigger_paused(state):
        return {"status": "skipped", "reason": PAUSED, "runs": 0}
    fires = [f for f in plan.fires if f[1] == tid] if plan else []  # (tick_plan.Fire)
    if fires:
        skipped = (
            [{"reason": r.reason, "count": r.count} for r in plan.skips if r.target_id == tid]
            if plan
            else []
        )
        instants = [to_iso(f[4]) for f in fires[:10] if f[4] is not None]  # scheduled_for
        return {"status": "fires", "runs": len(fires), "scheduled_for": instants, "skips": skipped}
    if plan is not None and any(s == tid for s, _ in plan.skipped):
        return {"status": "skipped", "reason": EVALUATION_ERROR, "runs": 0}
    next_due = state.next_due_at
    if plan is None or (next_due is not None and next_due > at):
        return {"status": NOT_DUE, "reason": NOT_DUE, "next_at": _iso(next_due), "runs": 0}
    if isinstance(trigger.spec, DateColumnReached):
        scan = scan_date_trigger(tx, table.as_dict(), trigger, state, at, record_limit)
        counts: dict[str, int] = {}
        for v in scan.verdicts:
            counts[v.verdict] = counts.get(v.verdict, 0) + 1
        counts.pop(DUE_NOW, None)
        return {"status": NOT_DUE, "reason": NO_DUE_RECORDS, "counts": counts, "runs": 0}
    decision = clock_decision(trigger, state, now=at, active_run=tid in active)
    verdict = clock_verdict(decision, state, active_run=tid in active, now=at)
    if verdict.active_run and verdict.due_at is not None:
        return {
            "status": "skipped",
            "reason": ACTIVE_RUN,
            "due_at": _iso(verdict.due_at),
            "runs": 0,
        }
    return {"status": NOT_DUE, "reason": NOT_DUE, "next_at": _iso(verdict.next_due_at), "runs": 0}


def record_restore_skips(tx: Tx, *, table_id: str, now: datetime) -> None:
    """A trashed table was restored at ``now``: its clock triggers were held as by an active
    run (their decision under the one-active-run rule): the windows they owed while it was
    trashed, up to the latest one (which the next tick still fires, SPEC §5.3), are recorded
    ``table_trashed``; each trigger's ``next_due_at`` moves onto that latest window (the mark
    of what is recorded)."""
    table = store_records.get_table(tx, table_id=table_id)
    if table is None:
        return
    states = store_state.get_states(tx, table_id=table_id)
    live = {tid for tid, s in states.items() if not s.retired}
    ranges, moves = [], []
    for trigger in inspect_stored(table.triggers, table.columns, live):
        state = states.get(str(trigger.trigger_id))
        spec = trigger.spec
        if not trigger.valid or state is None or state.anchor is None or spec is None:
            continue
        if isinstance(spec, DateColumnReached):
            continue
        held = clock_decision(trigger, state, now=now, active_run=True)
        found = [
            replace(r, reason=TABLE_TRASHED)
            for r in trigger_skips(held, table.id, str(trigger.trigger_id))
        ]
        if found and held.next_due_at is not None:
            ranges += found
            moves.append((table.id, str(trigger.trigger_id), held.next_due_at))
    store_skips.record_skips(tx, ranges=ranges, now=now)
    store_state.set_next_dues(tx, next_dues=moves)


def _iso(value: datetime | None) -> str | None:
    return None if value is None else to_iso(value)


__all__ = [
    "clock_next_fires",
    "dry_run_tables",
    "instant_view",
    "record_restore_skips",
    "trigger_paused",
    "zone_of",
]
