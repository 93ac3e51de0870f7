"""The tick (SPEC §6): the recovery sweeps, then every kind of schedule through the one paging
loop (:mod:`tocsin.engine.passes`), the tables' triggers first (:func:`table_pass`).

The tables' pass (docs/INTERNALS.md, "The tick"), given ``now``: pages of candidate tables up
to the tick's ``table_limit``, each one transaction: **claim** (``store.claims``), **read**,
**plan** without I/O (:mod:`tocsin.engine.tick_plan`), **apply** set-based. Workers claim the
pending runs.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping, Sequence
from contextlib import closing
from datetime import datetime
from operator import itemgetter
from typing import Any

from tocsin.core.model import TriggerState, row_payload
from tocsin.core.schedules.spec import DateColumnReached
from tocsin.engine import evaluate, fire, pause, sweeps
from tocsin.engine.ids import uuid7s
from tocsin.engine.passes import Pass, Take, fire_passes
from tocsin.engine.tick_plan import Cursor, DateScan, Fire, TablePlan, due_candidates, plan_table
from tocsin.store import claims, dialects, ledger
from tocsin.store import records as store_records
from tocsin.store import runs as store_runs
from tocsin.store import state as store_state
from tocsin.store.tx import Store, Tx

log = logging.getLogger(__name__)

MAX_EXTRA_PAGES = 10  # SPEC §6: a page without due rows lets the tick read up to 10 more
BATCH_TABLES = 1000  # per transaction: per-statement costs vanish, a lock is still short
# the tables' keys of the tick's report (SPEC §6), first in it
TABLE_COUNTS = ("tables_scanned", "tables_with_schedules", "runs_created")
record_key: Callable[[Mapping[str, Any]], Cursor] = itemgetter("created_at", "id")  # its order


def tick(
    store: Store,
    *,
    now: datetime,
    table_limit: int,
    record_limit: int,
    stuck_after_s: float,
    passes: Sequence[Pass] = (),
) -> dict[str, int]:
    """One tick at ``now``; never raises because of one table, trigger, sweep or page: the
    sweeps (:func:`tocsin.engine.sweeps.recover`), then the tables up to ``table_limit``
    (:func:`table_pass`) and every other pass (the workflow schedules', the trigger trees', the
    lanes') through the one paging loop (:func:`tocsin.engine.passes.fire_passes`). The SPEC §6
    report, then the passes' counts."""
    swept = sweeps.recover(store, now=now, stuck_after_s=stuck_after_s)
    counts = fire_passes(store, [table_pass(table_limit, record_limit), *passes], now=now)
    return {key: counts[key] for key in TABLE_COUNTS} | swept | counts


def table_pass(table_limit: int, record_limit: int) -> Pass:
    """The tables' triggers as a pass of the tick's loop: pages of up to :data:`BATCH_TABLES`
    candidate tables, least recently ticked first, until ``table_limit`` tables were taken or a
    page claims none. A unit is a table: a page that raises goes again table by table (a broken
    table is skipped, the others proceed); a later page leaves out the tables the tick took
    already (the next tick's rotation reaches them again)."""

    def page(tx: Tx, now: datetime, take: Take) -> bool:
        if take.only is not None:
            claim: dict[str, Any] = {"limit": 1, "only_ids": [take.only]}
        else:
            size = BATCH_TABLES if take.room is None else min(BATCH_TABLES, take.room)
            claim = {"limit": size, "skip_ids": take.skip}
        tables = claims.claim_candidate_tables(tx, now=now, **claim)
        if not tables:  # nothing due (the idle tick): no state to read, nothing to write
            return False
        take.units += [t["id"] for t in tables]
        plans = read_and_plan(tx, tables, now, record_limit)
        for plan in plans:
            for trigger_id, exc in plan.skipped:
                log.error("tick: trigger %s of %s skipped", trigger_id, plan.table_id, exc_info=exc)
        take.counts["runs_created"] += apply_plans(tx, plans, now)
        take.counts["tables_scanned"] += len(plans)
        take.counts["tables_with_schedules"] += sum(p.has_schedules for p in plans)
        return True

    return Pass(TABLE_COUNTS, page, limit=table_limit)


def read_and_plan(
    tx: Tx, tables: list[dict[str, Any]], now: datetime, limit: int
) -> list[TablePlan]:
    """Read what the claimed tables' triggers need and plan each, one table at a time in id
    order, then let its states and config go: only the plans outlive a table (what lives for a
    whole batch is what the collector's full passes walk). A table's ``triggers`` is its stored
    config or that config's JSON text (the claim's)."""
    by_id = {str(t["id"]): t for t in tables}
    active: dict[str, set[str]] = {}  # table id → its clock triggers with an active run
    for tab, tid in store_runs.active_clock_triggers(tx, table_ids=list(by_id)):
        active.setdefault(tab, set()).add(tid)
    plans = []
    # closed here if a table raises, not late by the collector on a connection handed back
    with closing(store_state.stream_states(tx, table_ids=by_id)) as stream:
        for table_id, states in stream:
            table, config = by_id[table_id], by_id[table_id]["triggers"]
            live = {tid for tid, s in states.items() if not s.retired}
            config = json.loads(config) if isinstance(config, str) else config
            stored = evaluate.inspect_stored(config, table["columns"], live)
            due = []  # (trigger, state, its pages read when it is a date trigger)
            for t, s in due_candidates(stored, states, now):
                scan = isinstance(t.spec, DateColumnReached)
                due.append((t, s, scan_date_trigger(tx, table, t, s, now, limit) if scan else None))
            active_here = active.get(table_id, set())
            plans.append(plan_table(table_id, stored, states, due, active_here, now))
    return plans


def scan_date_trigger(
    tx: Tx,
    table: Mapping[str, Any],
    trigger: evaluate.StoredTrigger,
    state: TriggerState,
    now: datetime,
    limit: int,
    pages: int = 1 + MAX_EXTRA_PAGES,
) -> DateScan:
    """Read and classify a date trigger's next cursor page(s) (SPEC §4.1, §6): the page after its
    cursor, wrapping to the start at most once (after the wrap, rows past where this pass began
    are not read again); stop after a page with a due row, at the end of a lap, or after
    ``pages`` pages. Read-only: the preview reads the first page (``pages=1``) through it."""
    spec, tid, table_id = trigger.spec, str(trigger.trigger_id), str(table["id"])
    assert isinstance(spec, DateColumnReached)
    kind = str(table["columns"][spec.column])
    start = cursor = state.cursor
    wrapped = False
    verdicts: list[evaluate.RowVerdict] = []
    for _ in range(pages):
        page = store_records.page_live_records(tx, table_id=table_id, after=cursor, limit=limit)
        if not page and start is not None and not wrapped:
            wrapped = True
            page = store_records.page_live_records(tx, table_id=table_id, after=None, limit=limit)
        if wrapped and start is not None:
            page = [r for r in page if record_key(r) <= start]
        if not page:  # the end (no cursor to wrap from), or back at the start after the wrap
            return DateScan(verdicts, cursor, lap_closed=True)
        ids = evaluate.page_identities(spec, kind, page)
        fired = ledger.fired_identities(tx, table_id=table_id, trigger_id=tid, identities=ids)
        found = evaluate.classify(trigger, state, now=now, column_type=kind, page=page, fired=fired)
        found = found if isinstance(found, list) else []
        verdicts += found
        cursor = record_key(page[-1])
        if any(v.verdict == evaluate.DUE_NOW for v in found):
            break
        if wrapped and start is not None and cursor >= start:
            return DateScan(verdicts, cursor, lap_closed=True)
    return DateScan(verdicts, cursor, lap_closed=False)


def apply_plans(tx: Tx, plans: Sequence[TablePlan], now: datetime) -> int:
    """Write a batch's plans, every fire of every plan at once (SPEC §5.3, §6); how many runs
    it created: the ledger claims and their runs (:func:`claim_and_insert`, with the date values
    fallen due inside a pause, claimed without a run), then the clock windows consumed (a claim
    lost to a racing tick consumes its window too; a run refused by the one-active-run index
    leaves its window due), triggers' ``next_due_at``, date cursors, skip records (each plan's,
    then ``pause.paused_value_ranges``), each table's ``next_due_at`` and rotation stamp."""
    fires = [f for p in plans for f in p.fires]
    values = [v for p in plans for v in p.paused_values]
    outcome = claim_and_insert(tx, fires, now, paused=values)
    claimed = outcome[: len(fires)]  # run id per fire; None: refused
    next_due = {p.table_id: p.next_due for p in plans}
    consumed: list[store_state.Consumed] = []
    for (table_id, trigger_id, _, _, _, _, window, after), run_id in zip(
        fires, claimed, strict=True
    ):
        if run_id is None and window is not None:  # refused: the window stays due
            next_due[table_id] = min(next_due[table_id], window)
        elif window is not None:
            consumed.append((table_id, trigger_id, window, after))
    if tx.is_postgres:  # the updates below are by key: never a table hashed whole for a page
        dialects.keyed_access_only(tx)
    store_state.consume_windows(tx, consumed=consumed, now=now)
    ranges = [r for p in plans for r in p.skips]
    ranges += pause.paused_value_ranges(values, outcome[len(fires) :])
    fire.record_skips(tx, ranges=ranges, now=now)
    next_dues = [(p.table_id, tid, at) for p in plans for tid, at in p.next_dues]
    store_state.set_next_dues(tx, next_dues=next_dues)
    cursors = [(p.table_id, tid, *(c or (None, None))) for p in plans for tid, c in p.cursors]
    store_state.advance_cursors(tx, cursors=cursors, now=now)
    claims.finish_tables(tx, values=list(next_due.items()), now=now)
    return sum(map(bool, claimed))


def claim_and_insert(
    tx: Tx, fires: Sequence[Fire], now: datetime, *, paused: Sequence[pause.PausedValue] = ()
) -> list[str | None]:
    """Through the fire path, per fire then per paused value: its run's id when this
    transaction claimed its identity in the ledger (and, for a fire, inserted the run), ``""``
    when the identity was claimed before (by an earlier or a racing tick), None when the run
    was refused (its claim released: no identity without its run). A paused value's claim
    keeps a run id no run has: the value never fires."""
    count = len(fires)
    run_ids = uuid7s(now, count + len(paused))
    firings = [(*f[:3], r) for f, r in zip(fires, run_ids, strict=False)]
    firings += [(*v[:3], r) for v, r in zip(paused, run_ids[count:], strict=True)]

    def write(claimed: list[int]) -> list[str]:
        mine = [i for i in claimed if i < count]
        new_runs = (  # consumed as the statement's rows are built: no NewRun outlives its row
            store_runs.NewRun(
                id=run_ids[i],
                table_id=table_id,
                trigger_id=trigger_id,
                record_id=None if record is None else str(record["id"]),
                source="schedule",
                clock=window is not None,
                payload={} if record is None else row_payload(record),
                definition=None,
                identity=identity,
                scheduled_for=scheduled_for,
                definition_hash=digest,
            )
            for i in mine
            for table_id, trigger_id, identity, digest, scheduled_for, record, window, _ in (
                fires[i],
            )
        )
        inserted = store_runs.insert_runs(tx, runs_=new_runs, now=now)
        return [run_ids[i] for i in mine if run_ids[i] not in inserted]

    return fire.fire(tx, firings, write, now=now)
