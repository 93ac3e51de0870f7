"""The tick: ``run_due_triggers`` claims due occurrences and inserts pending runs (SPEC §6).

One path, given ``now``: the recovery sweeps (:func:`tocsin.engine.sweeps.recover`); up to
``table_limit`` candidate tables, least recently ticked first (idle tables are never loaded,
DESIGN §5); then per batch of ``BATCH_TABLES``, one transaction: **claim** the tables still due
(``store.claims``), then **read** their active clock runs and, one table at a time, its trigger
states, config and date triggers' cursor pages (the first page after the cursor, then up to
``MAX_EXTRA_PAGES`` more while a page has no due row, wrapping to the start at most once), and
**plan** it without I/O (:mod:`tocsin.engine.tick_plan`); **apply** the plans set-based
(:mod:`tocsin.engine.tick_apply`). A batch whose transaction fails is retried table by table; a
table that still fails, or a trigger whose evaluation raises, is skipped and logged (SPEC §6).
The tick never waits for actions: workers claim the pending runs.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from contextlib import closing
from datetime import datetime
from typing import Any

from tocsin.core.model import TriggerState
from tocsin.core.schedules import DateColumnReached
from tocsin.engine import sweeps
from tocsin.engine.evaluate import (
    DUE_NOW,
    RowVerdict,
    StoredTrigger,
    classify,
    inspect_stored,
    page_identities,
)
from tocsin.engine.tick_apply import apply_plans
from tocsin.engine.tick_plan import Cursor, DateScan, TablePlan, due_candidates, plan_table
from tocsin.store import claims, ledger
from tocsin.store import records as store_records
from tocsin.store import runs as store_runs
from tocsin.store import state as store_state
from tocsin.store.tx import Store, Tx

log = logging.getLogger(__name__)

MAX_EXTRA_PAGES = 10  # SPEC §6: a page without due rows lets the tick read up to 10 more
# tables per transaction: big enough that per-statement costs vanish, small enough that a lock
# (SQLite's write lock, PostgreSQL's row locks) is short
BATCH_TABLES = 1000
Counts = tuple[int, int, int]  # tables ticked, of them with schedules, runs created


def run_due_triggers(
    store: Store, *, now: datetime, table_limit: int, record_limit: int, stuck_after_s: float
) -> dict[str, int]:
    """One scheduler pass at ``now``: the recovery sweeps (:func:`sweeps.recover`), then the
    due tables; never raises because of one table, trigger or sweep. The SPEC §6 response."""
    report = {"tables_scanned": 0, "tables_with_schedules": 0, "runs_created": 0}
    report |= sweeps.recover(store, now=now, stuck_after_s=stuck_after_s)
    done: list[str] = []  # the tables this tick took: later batches skip them
    while len(done) < table_limit:
        size = min(BATCH_TABLES, table_limit - len(done))
        counts, taken = tick_batch(store, now, size, record_limit, done)
        if not taken:
            break
        done += taken
        for tables, with_schedules, created in counts:
            report["tables_scanned"] += tables
            report["tables_with_schedules"] += with_schedules
            report["runs_created"] += created
    return report


def tick_batch(
    store: Store, now: datetime, size: int, record_limit: int, skip: list[str]
) -> tuple[list[Counts], list[str]]:
    """Up to ``size`` tables in one transaction: ``(counts, the table ids it took)``. If the
    transaction fails after its claim, each table gets its own; a table that still fails is
    skipped and logged."""
    taken: list[str] = []
    try:
        return [tick_tables(store, now, record_limit, taken, limit=size, skip_ids=skip)], taken
    except Exception:
        log.exception("tick: a batch of %d tables failed; retrying table by table", len(taken))
    counts: list[Counts] = []
    for table_id in taken:
        try:
            counts.append(tick_tables(store, now, record_limit, [], limit=1, only_ids=[table_id]))
        except Exception:
            log.exception("tick: table %s skipped", table_id)
    return counts, taken


def tick_tables(
    store: Store, now: datetime, record_limit: int, taken: list[str], **claim: Any
) -> Counts:
    """Claim (``claims.claim_candidate_tables`` with ``claim``; their ids into ``taken``), read,
    plan and apply in one transaction (the module docstring)."""
    with store.begin() as tx:
        tables = claims.claim_candidate_tables(tx, now=now, **claim)
        taken += [t["id"] for t in tables]
        plans = read_and_plan(tx, tables, now, record_limit)
        for plan in plans:
            for trigger_id, exc in plan.skipped:
                log.error("tick: trigger %s of %s skipped", trigger_id, plan.table_id, exc_info=exc)
        return len(plans), sum(p.has_schedules for p in plans), apply_plans(tx, plans, now)


def read_and_plan(
    tx: Tx, tables: list[dict[str, Any]], now: datetime, limit: int
) -> list[TablePlan]:
    """Read what the claimed tables' triggers need and plan each, one table at a time in table
    id order: its config decoded, its states read (``state.stream_states``), its due date
    triggers' pages scanned, then let go, so only the plans outlive the table (a batch's
    thousands of states and configs never live at once: the garbage collector's full passes walk
    what does). A table's ``triggers`` is the stored config, or its JSON text (the claim's)."""
    by_id = {str(t["id"]): t for t in tables}
    active: dict[str, set[str]] = {}  # table id → its clock triggers with an active run
    for tab, tid in store_runs.active_clock_triggers(tx, table_ids=list(by_id)):
        active.setdefault(tab, set()).add(tid)
    plans = []
    # closed here if a table raises: a stream left to the collector closed its cursor late, on
    # the connection the failed batch had handed back
    with closing(store_state.stream_states(tx, table_ids=by_id)) as stream:
        for table_id, states in stream:
            table, config = by_id[table_id], by_id[table_id]["triggers"]
            live = {tid for tid, s in states.items() if not s.retired}
            config = json.loads(config) if isinstance(config, str) else config
            stored = inspect_stored(config, table["columns"], live)
            due = []  # (trigger, state, its pages read when it is a date trigger)
            for t, s in due_candidates(stored, states, now):
                scan = isinstance(t.spec, DateColumnReached)
                due.append((t, s, scan_date_trigger(tx, table, t, s, now, limit) if scan else None))
            active_here = active.get(table_id, set())
            plans.append(plan_table(table_id, stored, states, due, active_here, now))
    return plans


def record_key(record: Mapping[str, Any]) -> Cursor:
    """A record's position in the cursor order ``(created_at, id)``."""
    return record["created_at"], str(record["id"])


def scan_date_trigger(
    tx: Tx,
    table: Mapping[str, Any],
    trigger: StoredTrigger,
    state: TriggerState,
    now: datetime,
    limit: int,
    pages: int = 1 + MAX_EXTRA_PAGES,
) -> DateScan:
    """Read and classify a date trigger's next cursor page(s) (SPEC §4.1, §6): the page after its
    cursor, wrapping to the start at most once (after the wrap, rows past where this pass began
    are not read again); stop after a page with a due row, at the end of a lap, or after
    ``pages`` pages. Read-only: the preview reads the first page (``pages=1``) through it."""
    spec, trigger_id, table_id = trigger.spec, str(trigger.trigger_id), str(table["id"])
    assert isinstance(spec, DateColumnReached)
    column_type = str(table["columns"][spec.column])
    start = cursor = state.cursor
    wrapped = False
    verdicts: list[RowVerdict] = []
    for _ in range(pages):
        page = store_records.page_live_records(tx, table_id=table_id, after=cursor, limit=limit)
        if not page and start is not None and not wrapped:
            wrapped = True
            page = store_records.page_live_records(tx, table_id=table_id, after=None, limit=limit)
        if wrapped and start is not None:
            page = [r for r in page if record_key(r) <= start]
        if not page:  # the end (no cursor to wrap from), or back at the start after the wrap
            return DateScan(verdicts, cursor, lap_closed=True)
        ids = page_identities(spec, column_type, page)
        fired = ledger.fired_identities(
            tx, table_id=table_id, trigger_id=trigger_id, identities=ids
        )
        found = classify(trigger, state, now=now, column_type=column_type, page=page, fired=fired)
        found = found if isinstance(found, list) else []
        verdicts += found
        cursor = record_key(page[-1])
        if any(v.verdict == DUE_NOW for v in found):
            break
        if wrapped and start is not None and cursor >= start:
            return DateScan(verdicts, cursor, lap_closed=True)
    return DateScan(verdicts, cursor, lap_closed=False)


__all__ = [
    "BATCH_TABLES",
    "MAX_EXTRA_PAGES",
    "read_and_plan",
    "record_key",
    "run_due_triggers",
    "scan_date_trigger",
    "tick_batch",
    "tick_tables",
]
