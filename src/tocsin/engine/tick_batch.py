"""The tick's set-based path for clock triggers (SPEC §5.3, §6; DESIGN §5).

For a batch of candidate tables, in one transaction:

1. lock the tables still due (``FOR NO KEY UPDATE SKIP LOCKED`` on PostgreSQL; SQLite holds
   ``BEGIN IMMEDIATE``) and read their trigger states: two statements;
2. tables with a date trigger go through the per-table path (:func:`tick.tick_table`), each
   in a savepoint; the others are planned in Python with THE evaluator: a trigger idle until
   later costs nothing, one whose evaluation raises is skipped (logged), a table whose
   planning raises is skipped whole; the active clock runs are read in one query;
3. the writes, in bulk, in a savepoint: ledger claims (``ON CONFLICT DO NOTHING``), pending
   runs with the frozen definition (the one-active-run index refuses some: their claims are
   released and their windows stay due), windows consumed (a claim lost to a racing tick
   consumes its window too), next due instants of the triggers and tables, rotation stamp.
   If a bulk write fails, the savepoint rolls back and the batch's clock tables go through the
   per-table path instead.

The rules are those of :mod:`tocsin.engine.tick`; only the number of statements differs.
"""

from __future__ import annotations

import gc
import logging
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from functools import lru_cache
from typing import Any

from tocsin.core import identity
from tocsin.core.schedules import DateColumnReached
from tocsin.engine.configs import NEVER_DUE
from tocsin.engine.evaluate import (
    ClockVerdict,
    StoredTrigger,
    classify,
    clock_next_due,
    inspect_stored,
)
from tocsin.engine.ids import uuid7s
from tocsin.store import ledger, tick_bulk
from tocsin.store.engine_queries import savepoint
from tocsin.store.tx import Store, Tx

log = logging.getLogger(__name__)

# tables per transaction: big enough that per-statement costs vanish, small enough that a lock
# (SQLite's write lock, PostgreSQL's row locks) is short
BATCH_TABLES = 1000
Outcome = tuple[bool, int]  # (has_schedules, runs_created) per table ticked
TableTick = Callable[..., Outcome | None]


@dataclass(slots=True)
class TablePlan:
    """One clock-only table: its triggers that may be due, and the fires decided for them."""

    table: dict[str, Any]
    states: dict[str, dict[str, Any]]
    has_schedules: bool
    candidates: list[tuple[StoredTrigger, dict[str, Any]]]
    fires: list[Fire] = field(default_factory=list)
    next_dues: list[tuple[str, datetime | None]] = field(default_factory=list)  # not fired
    fired_dues: dict[str, datetime | None] = field(default_factory=dict)  # consumed windows'
    created: int = 0


@dataclass(slots=True)
class Fire:
    """A due window: its ledger claim and run, and the window's consumption."""

    trigger: StoredTrigger
    window: datetime
    identity: str
    next_due: datetime | None
    run_id: str = ""  # given by write_plans, for the whole batch at once


def tick_batch(
    store: Store, *, table_ids: list[str], now: datetime, record_limit: int, per_table: TableTick
) -> list[Outcome]:
    """A batch of tables in one transaction: ``(has_schedules, runs_created)`` per table ticked
    (a table taken by another tick, no longer due, or raising is left out)."""
    with collector_paused(), store.begin_immediate() as tx:
        plans, outcomes = lock_and_decide(tx, table_ids, now, record_limit, per_table)
        if plans:
            outcomes += write_decided(tx, plans, now, record_limit, per_table)
    return outcomes


def lock_and_decide(
    tx: Tx, table_ids: list[str], now: datetime, record_limit: int, per_table: TableTick
) -> tuple[list[TablePlan], list[Outcome]]:
    """Steps 1 and 2 of the module docstring: lock and read the tables still due, tick those
    with a date trigger one by one, decide the others; ``(their plans, the per-table
    outcomes)``."""
    locked = tick_bulk.lock_candidate_tables(tx, table_ids=table_ids, now=now)
    states = tick_bulk.states_of_tables(tx, table_ids=[str(t["id"]) for t in locked])
    plans, dated = plan_tables(locked, states, now)
    outcomes: list[Outcome] = []
    for table_id in dated:
        one_table(tx, per_table, table_id, now, record_limit, outcomes)
    if plans:
        decide_plans(plans, active_of(tx, plans), now)
    return plans, outcomes


class ProcessSetting:
    """A process-wide setting changed while any of its blocks runs (nested, in any thread): the
    first block in calls ``change``, which returns how to put the setting back (None when it had
    nothing to change); the last block out puts it back."""

    def __init__(self, change: Callable[[], Callable[[], None] | None]) -> None:
        self.change = change
        self.lock = threading.Lock()
        self.depth = 0
        self.restore: Callable[[], None] | None = None

    @contextmanager
    def __call__(self) -> Iterator[None]:
        with self.lock:
            if self.depth == 0:
                self.restore = self.change()
            self.depth += 1
        try:
            yield
        finally:
            with self.lock:
                self.depth -= 1
                if self.depth == 0 and self.restore is not None:
                    self.restore()
                    self.restore = None


def _pause_collector() -> Callable[[], None] | None:
    if not gc.isenabled():
        return None  # the application turned it off: it stays off
    gc.disable()
    return gc.enable


# Python's cyclic garbage collector, paused while tick batches run. A batch allocates tens of
# thousands of short-lived, acyclic containers (rows, states, plans) that reference counting
# frees; with the collector on they trigger full collections over the whole process heap
# (bench/tick_bench.py: 14 full passes, about 1.1 s of a 5.5 s drain of 50,000 runs). Cycles
# made meanwhile are collected after.
collector_paused = ProcessSetting(_pause_collector)


def one_table(
    tx: Tx, per_table: TableTick, table_id: str, now: datetime, limit: int, out: list[Outcome]
) -> None:
    """``per_table`` for one table in a savepoint; its outcome into ``out``; if it raises,
    logged and skipped."""
    try:
        with savepoint(tx):
            outcome = per_table(tx, table_id=table_id, now=now, record_limit=limit)
    except Exception:
        log.exception("tick: table %s skipped", table_id)
        return
    if outcome is not None:
        out.append(outcome)


def plan_tables(
    tables: list[dict[str, Any]], states: dict[str, dict[str, dict[str, Any]]], now: datetime
) -> tuple[list[TablePlan], list[str]]:
    """The plans of the clock-only tables, and the ids of the tables with a date trigger (the
    per-table path); a table whose planning raises is skipped (logged)."""
    plans: list[TablePlan] = []
    dated: list[str] = []
    for table in tables:
        try:
            plan = plan_table(table, states.get(str(table["id"]), {}), now)
        except Exception:
            log.exception("tick: table %s skipped", table["id"])
            continue
        if plan is None:
            dated.append(str(table["id"]))
        else:
            plans.append(plan)
    return plans, dated


def plan_table(
    table: dict[str, Any], states: dict[str, dict[str, Any]], now: datetime
) -> TablePlan | None:
    """The clock triggers of ``table`` that may be due at ``now``; None when it has a date
    trigger (the per-table path reads its records)."""
    # no cache of inspected configs across ticks: one decoded config per table kept alive costs
    # more in memory and full garbage collections than re-inspecting (schedules are memoized by
    # content in evaluate), measured with bench/tick_bench.py
    live = {tid for tid, s in states.items() if not s["retired"]}
    stored = inspect_stored(table["triggers"], table["columns"], live)
    candidates: list[tuple[StoredTrigger, dict[str, Any]]] = []
    for trigger in stored:
        if not trigger.valid or trigger.trigger_id is None:
            continue
        if isinstance(trigger.spec, DateColumnReached):
            return None
        state = states[trigger.trigger_id]
        next_due = state.get("next_due_at")
        if next_due is None or next_due <= now:
            candidates.append((trigger, state))
    return TablePlan(table=table, states=states, has_schedules=bool(stored), candidates=candidates)


def write_decided(
    tx: Tx, plans: list[TablePlan], now: datetime, limit: int, per_table: TableTick
) -> list[Outcome]:
    """The decided plans' bulk writes in a savepoint; if they fail, each table through the
    per-table path instead (its own savepoint)."""
    try:
        with savepoint(tx):
            write_plans(tx, plans, now)
    except Exception:
        log.exception("tick: bulk writes failed; the batch's tables go one by one")
        out: list[Outcome] = []
        for plan in plans:
            one_table(tx, per_table, str(plan.table["id"]), now, limit, out)
        return out
    return [(p.has_schedules, p.created) for p in plans]


def active_of(tx: Tx, plans: list[TablePlan]) -> set[str]:
    """Which of the plans' candidate triggers have an active clock run (one query)."""
    ids = [str(t.trigger_id) for p in plans for t, _ in p.candidates]
    return tick_bulk.active_clock_trigger_ids(tx, trigger_ids=ids)


def decide_plans(plans: list[TablePlan], active: set[str], now: datetime) -> None:
    """Each candidate trigger's verdict into its plan: a fire, or a new next due instant; a
    trigger whose evaluation raises is skipped (logged)."""
    for plan in plans:
        for trigger, state in plan.candidates:
            trigger_id = str(trigger.trigger_id)
            try:
                decided = decide_clock_trigger(trigger, state, now, trigger_id in active)
            except Exception:
                log.exception("tick: trigger %s of table %s skipped", trigger_id, plan.table["id"])
                continue
            if isinstance(decided, Fire):
                plan.fires.append(decided)
            elif decided is not None:
                plan.next_dues.append((trigger_id, decided[0]))


def decide_clock_trigger(
    trigger: StoredTrigger, state: Mapping[str, Any], now: datetime, active: bool
) -> Fire | tuple[datetime | None] | None:
    """THE evaluator's verdict for one clock trigger: a :class:`Fire`, a new next due instant
    (a 1-tuple), or None (nothing to write); raises for a broken trigger (skipped)."""
    spec = trigger.spec
    if spec is None or isinstance(spec, DateColumnReached):
        return None
    verdict = classify(trigger, state, now=now, active_run=active)
    if not isinstance(verdict, ClockVerdict):
        return None
    if not verdict.due_now or verdict.due_at is None:
        changed = verdict.next_due_at != state["next_due_at"]
        return (verdict.next_due_at,) if changed else None
    window = verdict.due_at
    next_due = clock_next_due(spec, anchor=state["anchor"], last_consumed=window)
    return Fire(trigger, window, _window_identity(window), next_due)


@lru_cache(maxsize=4096)
def _window_identity(window: datetime) -> str:
    """``identity.clock_identity``: a batch's windows repeat (aligned schedules)."""
    return identity.clock_identity(window)


def write_plans(tx: Tx, plans: list[TablePlan], now: datetime) -> None:
    """The batch's writes, set-based (see the module docstring)."""
    fires = [(p, f) for p in plans for f in p.fires]
    for (_, fire), run_id in zip(fires, uuid7s(now, len(fires)), strict=True):
        fire.run_id = run_id
    claims = [
        (str(f.trigger.trigger_id), f.identity, str(p.table["id"]), f.run_id) for p, f in fires
    ]
    claimed = tick_bulk.claim_occurrences(tx, rows=claims, now=now)
    mine = [(c, pf) for c, pf in zip(claims, fires, strict=True) if c[:2] in claimed]
    runs = [(c[3], c[2], c[0], frozen_definition(p, f), c[1], f.window) for c, (p, f) in mine]
    inserted = tick_bulk.insert_clock_runs(tx, rows=runs, now=now)
    consumed: list[tuple[str, datetime, datetime | None]] = []
    for plan, fire in fires:
        trigger_id = str(fire.trigger.trigger_id)
        if (trigger_id, fire.identity) in claimed and fire.run_id not in inserted:
            # the one-active-run index refused it: undo the claim, the window stays due
            ledger.release_occurrence(
                tx,
                table_id=str(plan.table["id"]),
                trigger_id=trigger_id,
                identity=fire.identity,
                run_id=fire.run_id,
            )
            continue
        plan.created += int(fire.run_id in inserted)
        consumed.append((trigger_id, fire.window, fire.next_due))
        plan.fired_dues[trigger_id] = fire.next_due
    tick_bulk.consume_windows(tx, values=consumed, now=now)
    tick_bulk.set_next_dues(tx, values=[nd for p in plans for nd in p.next_dues])
    tables = [
        (str(p.table["id"]), table_next_due(p.states, {**dict(p.next_dues), **p.fired_dues}))
        for p in plans
    ]
    tick_bulk.finish_tables(tx, values=tables, now=now)


def frozen_definition(plan: TablePlan, fire: Fire) -> Mapping[str, Any] | str:
    """What a fire's run stores as its definition: the trigger's stored JSON text when the read
    kept it (SQLite), else the trigger itself (encoded on write)."""
    text = plan.table.get("definitions", {}).get(str(fire.trigger.trigger_id))
    if isinstance(text, str):
        return text
    raw: Mapping[str, Any] = fire.trigger.raw
    return raw


def table_next_due(
    states: Mapping[str, Mapping[str, Any]], changed: Mapping[str, datetime | None]
) -> datetime:
    """The earliest ``next_due_at`` of the live states (``NEVER_DUE`` when none), ``changed``
    (trigger id → its new next due) applied: what ``configs.refresh_table_next_due`` computes,
    from the states as this batch left them."""
    dues = [
        changed[tid] if tid in changed else s["next_due_at"]
        for tid, s in states.items()
        if not s["retired"]
    ]
    return min((d for d in dues if d is not None), default=NEVER_DUE)


__all__ = [
    "BATCH_TABLES",
    "Outcome",
    "ProcessSetting",
    "TablePlan",
    "TableTick",
    "active_of",
    "collector_paused",
    "decide_clock_trigger",
    "decide_plans",
    "frozen_definition",
    "lock_and_decide",
    "one_table",
    "plan_table",
    "plan_tables",
    "table_next_due",
    "tick_batch",
    "write_decided",
]
