"""The tick: ``run_due_triggers`` claims due occurrences and inserts pending runs (SPEC §6).

One pass, given ``now``:

1. the two recovery sweeps, each in its own transaction; a sweep that raises reports 0;
2. candidate tables (live, with triggers, ``next_due_at`` unknown or ``<= now``), least recently
   ticked first, at most ``table_limit``: idle tables are never loaded (DESIGN §5);
3. the candidates in batches of ``BATCH_TABLES`` (:mod:`tocsin.engine.tick_batch`), each batch
   one transaction: its tables locked with ``FOR NO KEY UPDATE SKIP LOCKED`` on PostgreSQL (a
   racing tick skips them, never waits; record writes are not blocked) or under
   ``BEGIN IMMEDIATE`` on SQLite. Tables with only clock triggers are decided in Python and
   written set-based; a table with a date trigger, or every table of a batch whose bulk write
   failed, goes through :func:`tick_table` here: its own savepoint, each trigger in a savepoint
   too. One broken trigger or table never fails the tick nor rolls back other runs;
4. per trigger, the evaluator's verdicts (:mod:`tocsin.engine.evaluate`) are acted on:

   - clock kinds: the coalesced due window, unless a run is active → ledger claim
     (``ON CONFLICT DO NOTHING``) → pending run with the frozen definition → window consumed
     (a claim lost to a racing tick consumes the window too);
   - date kind: cursor pages over live records in ``(created_at, id)`` order; the first page
     after the cursor, then up to ``MAX_EXTRA_PAGES`` more while a page has no due row, wrapping
     to the start at most once; each due row → ledger claim → run with the row snapshot; the
     cursor moves to the last examined row even when nothing was due.

The tick never waits for actions: workers claim the pending runs.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any

from tocsin.core import identity
from tocsin.core.schedules import DateColumnReached
from tocsin.engine import tick_pipeline
from tocsin.engine.configs import ALWAYS_DUE, NEVER_DUE, refresh_table_next_due
from tocsin.engine.evaluate import (
    DUE_NOW,
    FUTURE,
    ClockVerdict,
    RowVerdict,
    StoredTrigger,
    classify,
    clock_next_due,
    inspect_stored,
    page_identities,
)
from tocsin.engine.ids import uuid7
from tocsin.engine.tick_batch import BATCH_TABLES, tick_batch
from tocsin.store import claims, ledger, tick_bulk
from tocsin.store import records as store_records
from tocsin.store import runs as store_runs
from tocsin.store import state as store_state
from tocsin.store.engine_queries import lock_candidate_table, savepoint
from tocsin.store.tx import Store, Tx

log = logging.getLogger(__name__)

MAX_EXTRA_PAGES = 10  # SPEC §6: a page without due rows lets the tick read up to 10 more
Cursor = tuple[datetime, str]


@dataclass(slots=True)
class TickReport:
    """The SPEC §6 response."""

    tables_scanned: int = 0
    tables_with_schedules: int = 0
    runs_created: int = 0
    trigger_runs_requeued: int = 0
    staged_changes_requeued: int = 0

    def as_dict(self) -> dict[str, int]:
        return asdict(self)

    def add(self, outcomes: list[tuple[bool, int]]) -> None:
        """Count tables ticked: ``(has_schedules, runs_created)`` each."""
        for has_schedules, created in outcomes:
            self.tables_scanned += 1
            self.tables_with_schedules += int(has_schedules)
            self.runs_created += created


def run_due_triggers(
    store: Store,
    *,
    now: datetime,
    table_limit: int,
    record_limit: int,
    stuck_after_s: float,
) -> dict[str, int]:
    """One scheduler pass at ``now``; never raises because of one table, trigger or sweep."""
    report = TickReport()
    report.trigger_runs_requeued = _sweep(store, "requeue_lost_runs", now, stuck_after_s)
    report.staged_changes_requeued = _sweep(store, "requeue_staged_changes", now, None)
    ids = candidate_table_ids(store, now=now, limit=table_limit)
    if tick_pipeline.pipelined(store, len(ids)):  # SQLite
        done, ids = tick_pipeline.tick_pipelined(store, table_ids=ids, now=now)
        report.add(done)
    elif tick_pipeline.overlapped(store, len(ids)):  # PostgreSQL
        report.add(
            tick_pipeline.tick_overlapped(
                store, table_ids=ids, now=now, record_limit=record_limit, per_table=tick_table
            )
        )
        ids = []
    size = BATCH_TABLES
    for chunk in (ids[i : i + size] for i in range(0, len(ids), size)):
        try:
            outcomes = tick_batch(
                store, table_ids=chunk, now=now, record_limit=record_limit, per_table=tick_table
            )
        except Exception:  # the commit itself failed: nothing of this chunk happened
            log.exception("tick: tables %s skipped", chunk)
            continue
        report.add(outcomes)
    return report.as_dict()


def _sweep(store: Store, name: str, now: datetime, stuck_after_s: float | None) -> int:
    """Run one recovery sweep in its own transaction; 0 when missing or when it raises."""
    try:
        from tocsin.engine import sweeps

        fn: Callable[..., int] = getattr(sweeps, name)
        with store.begin() as tx:
            if stuck_after_s is None:
                return int(fn(tx, now=now))
            return int(fn(tx, now=now, stuck_after_s=stuck_after_s))
    except Exception:
        log.exception("tick: sweep %s failed; reporting 0", name)
        return 0


def candidate_table_ids(store: Store, *, now: datetime, limit: int) -> list[str]:
    """The ids of up to ``limit`` tables with due work, least recently ticked first."""
    with store.begin() as tx:
        return tick_bulk.candidate_table_ids(tx, now=now, limit=limit)


def tick_table(
    tx: Tx, *, table_id: str, now: datetime, record_limit: int
) -> tuple[bool, int] | None:
    """One table: ``(has_schedules, runs_created)``, None when skipped (taken or not due)."""
    table = lock_candidate_table(tx, table_id=table_id, now=now)
    if table is None:
        return None
    states = store_state.get_states(tx, table_id=table_id)
    live = [tid for tid, s in states.items() if not s["retired"]]
    stored = inspect_stored(table["triggers"], table["columns"], live)
    created = 0
    for trigger in stored:
        if trigger.valid and trigger.trigger_id is not None:
            state = states[trigger.trigger_id]
            if may_be_due(state, now):
                created += _tick_trigger(tx, table, trigger, state, now, record_limit)
    refresh_table_next_due(tx, table_id=table_id)
    claims.mark_tables_ticked(tx, table_ids=[table_id], now=now)
    return bool(stored), created


def may_be_due(state: Mapping[str, Any], now: datetime) -> bool:
    """False when the state's ``next_due_at`` is later than ``now``: nothing to evaluate.

    Clock triggers store their next window there (or the due window while a run is active);
    date triggers are always candidates. Idle triggers of a due table cost nothing (DESIGN §5).
    """
    next_due = state.get("next_due_at")
    return next_due is None or next_due <= now


def _tick_trigger(
    tx: Tx,
    table: Mapping[str, Any],
    trigger: StoredTrigger,
    state: Mapping[str, Any],
    now: datetime,
    record_limit: int,
) -> int:
    """One trigger inside a savepoint; a broken one is logged and skipped (SPEC §6)."""
    try:
        with savepoint(tx):
            if isinstance(trigger.spec, DateColumnReached):
                return tick_date_trigger(tx, table, trigger, state, now, record_limit)
            return tick_clock_trigger(tx, table, trigger, state, now)
    except Exception:
        log.exception("tick: trigger %s of table %s skipped", trigger.trigger_id, table["id"])
        return 0


# --- clock kinds ------------------------------------------------------------------------------


def tick_clock_trigger(
    tx: Tx,
    table: Mapping[str, Any],
    trigger: StoredTrigger,
    state: Mapping[str, Any],
    now: datetime,
) -> int:
    """Insert at most one run, for the latest due window, and consume it (SPEC §5.3)."""
    spec, trigger_id = trigger.spec, str(trigger.trigger_id)
    if spec is None or isinstance(spec, DateColumnReached):
        return 0
    anchor = state["anchor"]
    active = store_runs.has_active_run(tx, trigger_id=trigger_id)
    verdict = classify(trigger, state, now=now, active_run=active)
    if not isinstance(verdict, ClockVerdict):
        return 0
    if not verdict.due_now or verdict.due_at is None:
        if verdict.next_due_at != state["next_due_at"]:
            store_state.set_next_due(tx, trigger_id=trigger_id, next_due_at=verdict.next_due_at)
        return 0
    window = verdict.due_at
    created = _claim_and_insert(
        tx,
        table=table,
        trigger=trigger,
        identity_=identity.clock_identity(window),
        record=None,
        scheduled_for=window,
        now=now,
    )
    if created is None:  # a run became active since has_active_run: the window stays due
        return 0
    next_due = clock_next_due(spec, anchor=anchor, last_consumed=window)
    store_state.consume_window(
        tx, trigger_id=trigger_id, window=window, now=now, next_due_at=next_due
    )
    return created


def _claim_and_insert(
    tx: Tx,
    *,
    table: Mapping[str, Any],
    trigger: StoredTrigger,
    identity_: str,
    record: Mapping[str, Any] | None,
    scheduled_for: datetime | None,
    now: datetime,
) -> int | None:
    """Claim the identity in the ledger, then insert its pending run; 1 when a run was created.

    0 when the identity was claimed before. None when the one-active-run index refused the run
    (a clock run became active meanwhile): the claim is released, so no identity is ever
    claimed without its run.
    """
    run_id = uuid7(now)
    trigger_id = str(trigger.trigger_id)
    claimed = ledger.claim_occurrence(
        tx,
        trigger_id=trigger_id,
        identity=identity_,
        table_id=str(table["id"]),
        run_id=run_id,
        now=now,
    )
    if not claimed:
        return 0
    run = store_runs.insert_run(
        tx,
        id=run_id,
        table_id=str(table["id"]),
        trigger_id=trigger_id,
        record_id=None if record is None else str(record["id"]),
        source="schedule",
        clock=record is None,
        payload={} if record is None else row_payload(record),
        definition=dict(trigger.raw),
        identity=identity_,
        scheduled_for=scheduled_for,
        now=now,
    )
    if run is None:
        ledger.release_occurrence(
            tx, table_id=str(table["id"]), trigger_id=trigger_id, identity=identity_, run_id=run_id
        )
        return None
    return 1


def row_payload(record: Mapping[str, Any]) -> dict[str, Any]:
    """The run payload of a record: its id and a copy of its cells (SPEC §8 row snapshot)."""
    data = record.get("data")
    return {"id": str(record["id"]), "data": dict(data) if isinstance(data, Mapping) else {}}


# --- date kind --------------------------------------------------------------------------------


def state_cursor(state: Mapping[str, Any]) -> Cursor | None:
    """The date trigger's cursor (last examined record), or None at the start."""
    created_at, record_id = state.get("cursor_created_at"), state.get("cursor_id")
    if created_at is None or record_id is None:
        return None
    return created_at, str(record_id)


def record_key(record: Mapping[str, Any]) -> Cursor:
    """A record's position in the cursor order ``(created_at, id)``."""
    return record["created_at"], str(record["id"])


def read_cursor_page(
    tx: Tx,
    *,
    table_id: str,
    cursor: Cursor | None,
    start: Cursor | None,
    wrapped: bool,
    limit: int,
) -> tuple[list[dict[str, Any]], bool]:
    """The next page after ``cursor`` (wrapping to the start at most once): ``(page, wrapped)``.

    ``start`` is where this pass began; after the wrap, rows past it are not read again.
    Read-only: the preview reads its "next cursor page" through this same function.
    """
    page = store_records.page_live_records(tx, table_id=table_id, after=cursor, limit=limit)
    if not page and cursor is not None and not wrapped and start is not None:
        wrapped = True
        page = store_records.page_live_records(tx, table_id=table_id, after=None, limit=limit)
    if wrapped and start is not None:
        page = [r for r in page if record_key(r) <= start]
    return page, wrapped


def tick_date_trigger(
    tx: Tx,
    table: Mapping[str, Any],
    trigger: StoredTrigger,
    state: Mapping[str, Any],
    now: datetime,
    record_limit: int,
) -> int:
    """Fire the due rows of the next cursor page(s) and move the cursor (SPEC §4.1, §6).

    When the pass examined every live record (a whole lap) and none was due, the trigger's
    ``next_due_at`` becomes the earliest future fire instant it saw (``NEVER_DUE`` when none):
    until then, or until a record write wakes it (``configs.wake_date_triggers``), the tick
    does not read this table's records again (DESIGN §5).
    """
    spec, trigger_id, table_id = trigger.spec, str(trigger.trigger_id), str(table["id"])
    if not isinstance(spec, DateColumnReached):
        return 0
    column_type = str(table["columns"][spec.column])
    start = cursor = state_cursor(state)
    wrapped, created, lap_closed, earliest = False, 0, False, NEVER_DUE
    for _ in range(1 + MAX_EXTRA_PAGES):
        page, wrapped = read_cursor_page(
            tx, table_id=table_id, cursor=cursor, start=start, wrapped=wrapped, limit=record_limit
        )
        if not page:  # the end (no cursor to wrap from), or back at the start after the wrap
            lap_closed = True
            break
        ids = page_identities(spec, column_type, page)
        fired = ledger.fired_identities(
            tx, table_id=table_id, trigger_id=trigger_id, identities=ids
        )
        verdicts = classify(
            trigger, state, now=now, column_type=column_type, page=page, fired=fired
        )
        rows = verdicts if isinstance(verdicts, list) else []
        due = [v for v in rows if v.verdict == DUE_NOW]
        created += _fire_rows(tx, table, trigger, due, now)
        earliest = min([earliest, *(v.fire_at for v in rows if v.verdict == FUTURE and v.fire_at)])
        cursor = record_key(page[-1])
        if due:
            break
        if wrapped and start is not None and cursor >= start:
            lap_closed = True
            break
    # a lap closes only when nothing was due
    _save_date_state(tx, state, cursor, earliest if lap_closed else ALWAYS_DUE, now)
    return created


def _save_date_state(
    tx: Tx, state: Mapping[str, Any], cursor: Cursor | None, next_due: datetime, now: datetime
) -> None:
    """Move the cursor to the last examined row and record ``next_due_at``, when they changed."""
    trigger_id = str(state["trigger_id"])
    if cursor != state_cursor(state):
        created_at, record_id = cursor if cursor is not None else (None, None)
        store_state.advance_cursor(
            tx, trigger_id=trigger_id, created_at=created_at, record_id=record_id, now=now
        )
    if next_due != state["next_due_at"]:
        store_state.set_next_due(tx, trigger_id=trigger_id, next_due_at=next_due)


def _fire_rows(
    tx: Tx,
    table: Mapping[str, Any],
    trigger: StoredTrigger,
    due: list[RowVerdict],
    now: datetime,
) -> int:
    created = 0
    for verdict in due:
        if verdict.identity is None:
            continue
        created += (
            _claim_and_insert(
                tx,
                table=table,
                trigger=trigger,
                identity_=verdict.identity,
                record=verdict.record,
                scheduled_for=verdict.fire_at,
                now=now,
            )
            or 0
        )
    return created


__all__ = [
    "MAX_EXTRA_PAGES",
    "TickReport",
    "candidate_table_ids",
    "may_be_due",
    "read_cursor_page",
    "record_key",
    "row_payload",
    "run_due_triggers",
    "state_cursor",
    "tick_clock_trigger",
    "tick_date_trigger",
    "tick_table",
]
