"""The tick, pipelined: batch N+1 is read and planned while batch N is written.

A batch's Python work (reading rows into dicts, planning, building the writes) takes about as
long as the database's (the writes, the commit): done one after the other, each waits for the
other. The database works without the GIL (Python's ``sqlite3`` releases it while SQLite executes
a statement; PostgreSQL works in its own processes), and a batch's writes are a few big
statements (:mod:`tocsin.store.tick_coarse`), so they overlap. Used for a tick with more than one
batch (:func:`batch_size`) of candidate tables:

- PostgreSQL (:func:`tick_overlapped`): each batch is its own transaction, as in
  :func:`tick_batch.tick_batch`; finisher threads write and commit earlier batches while the
  tick's thread locks, reads and decides the next one (see the section below);
- SQLite file databases (:func:`tick_pipelined`): one writer at a time, so a writer thread holds
  the lock and applies batch N on its own connection while the tick's thread reads batch N+1 on
  another connection, in a read snapshot, and plans it.

The rules are those of :mod:`tocsin.engine.tick_batch`; what makes SQLite's planning outside
the lock safe:

- the writer holds SQLite's write lock (``BEGIN IMMEDIATE``) for one batch at a time and, once it
  holds it, publishes its connection's ``PRAGMA data_version``: a *stamp*;
- a batch is read in one read transaction begun after a stamp was published. It sees the
  database as it was under that lock, plus at most the writer's own commits since, which touch
  only earlier batches' tables (and a trigger id belongs to one table): nothing it read;
- the writer applies a batch only under a lock whose stamp equals the batch's: ``data_version``
  changes when another connection commits, so equal means nobody else wrote in between;
- otherwise (another writer, a lost ledger claim or a refused run: a change count that is not the
  expected one), the batch's transaction rolls back and its tables go through the
  sequential path after the pipeline, as do tables with a date trigger. The ledger key and the
  one-active-run index fence duplicates as everywhere.
"""

from __future__ import annotations

import logging
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from datetime import datetime
from typing import Generic, TypeVar

from tocsin.engine.ids import uuid7s
from tocsin.engine.tick_batch import (
    Outcome,
    ProcessSetting,
    TablePlan,
    TableTick,
    active_of,
    collector_paused,
    decide_plans,
    frozen_definition,
    lock_and_decide,
    plan_tables,
    table_next_due,
    write_decided,
)
from tocsin.store import tick_bulk, tick_coarse
from tocsin.store.engine_queries import savepoint
from tocsin.store.tx import Pinned, Store, Tx

log = logging.getLogger(__name__)

# tables per pipelined batch: at most PIPELINE_TABLES (small enough that the first read and the
# last write, which nothing overlaps, are short), at least MIN_BATCH_TABLES (per-statement and
# per-commit costs stay small), and a tick of twice the minimum already makes two batches
PIPELINE_TABLES = 250
MIN_BATCH_TABLES = 100


def batch_size(table_count: int) -> int:
    """Tables per batch for a pipelined tick over ``table_count`` candidates."""
    return min(PIPELINE_TABLES, max(MIN_BATCH_TABLES, -(-table_count // 2)))


def _batches(table_ids: list[str]) -> Iterator[list[str]]:
    size = batch_size(len(table_ids))
    for start in range(0, len(table_ids), size):
        yield table_ids[start : start + size]


# Python's thread switch interval while a pipeline runs (seconds; CPython's default is 0.005)
SWITCH_INTERVAL_S = 0.0005


def _quicken_switches() -> Callable[[], None] | None:
    found = sys.getswitchinterval()
    if found <= SWITCH_INTERVAL_S:
        return None  # already as quick (an application's lower value is kept)
    sys.setswitchinterval(SWITCH_INTERVAL_S)
    return lambda: sys.setswitchinterval(found)


# Python's thread switch interval, lowered while pipelines run. Between its long GIL-free calls
# the writer needs the GIL for a moment (about ten times per batch); while the tick's thread
# runs Python, each such hand-over waits up to the switch interval, and at CPython's 5 ms those
# waits, not the database, paced the writer (bench/tick_bench.py).
quick_switches = ProcessSetting(_quicken_switches)


def pipelined(store: Store, table_count: int) -> bool:
    """Whether a tick over ``table_count`` candidate tables runs pipelined."""
    many = table_count > batch_size(table_count)
    return store.is_sqlite and store.has_many_connections and many


J = TypeVar("J")


@dataclass(slots=True)
class _Job:
    """A planned batch: the stamp it was read under, its writes, what they create per table."""

    stamp: int
    table_ids: list[str]
    statements: list[tick_coarse.Statement]
    outcomes: list[Outcome]


class _Pipe(Generic[J]):
    """The hand-over between the tick's thread and the writer: the latest stamp, one job."""

    def __init__(self) -> None:
        self.cond = threading.Condition()
        self.stamp: int | None = None
        self.job: J | None = None
        self.planner_done = False
        self.writer_done = False

    def latest_stamp(self) -> int | None:
        """The newest stamp (waits for the first); None once the writer has stopped."""
        with self.cond:
            self.cond.wait_for(lambda: self.stamp is not None or self.writer_done)
            return None if self.writer_done else self.stamp

    def submit(self, job: J) -> bool:
        """Hand ``job`` over once the previous one was taken; False when the writer stopped."""
        with self.cond:
            self.cond.wait_for(lambda: self.job is None or self.writer_done)
            if self.writer_done:
                return False
            self.job = job
            self.cond.notify_all()
            return True

    def publish(self, stamp: int) -> None:
        with self.cond:
            self.stamp = stamp
            self.cond.notify_all()

    def take(self) -> J | None:
        """The next job; None when the planner is done and nothing is pending."""
        with self.cond:
            self.cond.wait_for(lambda: self.job is not None or self.planner_done)
            job, self.job = self.job, None
            self.cond.notify_all()
            return job

    def close_planner(self) -> None:
        with self.cond:
            self.planner_done = True
            self.cond.notify_all()

    def close_writer(self) -> J | None:
        """The writer stops: what it had not taken."""
        with self.cond:
            self.writer_done = True
            job, self.job = self.job, None
            self.cond.notify_all()
            return job


class _Writer(threading.Thread):
    """Applies the jobs, one write transaction each, on one pinned connection."""

    def __init__(self, store: Store, pipe: _Pipe[_Job]) -> None:
        super().__init__(name="tocsin-tick-writer", daemon=True)
        self.store, self.pipe = store, pipe
        self.outcomes: list[Outcome] = []
        self.later: list[str] = []  # tables for the sequential path

    def run(self) -> None:
        try:
            with collector_paused(), self.store.pinned() as pinned:
                while self._transaction(pinned):
                    pass
        except Exception:
            log.exception("tick: the pipeline's writer stopped; its tables go batch by batch")
        finally:
            left = self.pipe.close_writer()
            if left is not None:
                self.later += left.table_ids

    def _transaction(self, pinned: Pinned) -> bool:
        """Lock, publish the stamp, apply the next job, commit; False when there is none. A job
        whose plan no longer holds is rolled back (one job per transaction) and left for the
        sequential path."""
        job: _Job | None = None
        try:
            with pinned.begin_immediate() as tx:
                stamp = tick_coarse.data_version(tx)
                self.pipe.publish(stamp)
                job = self.pipe.take()
                if job is None:
                    return False
                if job.stamp != stamp:  # another connection committed since the job's read
                    raise _Stale
                _apply(tx, job)
        except _Stale:
            assert job is not None
            self.later += job.table_ids
            return True
        except BaseException:
            if job is not None:  # not committed: the sequential path redoes it
                self.later += job.table_ids
            raise
        self.outcomes += job.outcomes
        return True


def _apply(tx: Tx, job: _Job) -> None:
    """The job's writes; raises :class:`_Stale` (the transaction rolls back) when a change count
    says the plan no longer holds, or when a statement fails (logged)."""
    try:
        applied = tick_coarse.apply(tx, job.statements)
    except Exception:
        log.exception("tick: pipelined writes failed; tables %s go batch by batch", job.table_ids)
        raise _Stale from None
    if not applied:
        raise _Stale


class _Stale(Exception):
    """The job's plan no longer holds: its transaction rolls back."""


def tick_pipelined(
    store: Store, *, table_ids: list[str], now: datetime
) -> tuple[list[Outcome], list[str]]:
    """Tick the clock-only tables among ``table_ids``, pipelined: ``(outcomes, the ids of the
    tables left for the sequential path)`` (tables with a date trigger, batches whose plan no
    longer held, anything the writer could not commit)."""
    pipe: _Pipe[_Job] = _Pipe()
    writer = _Writer(store, pipe)
    later: list[str] = []
    with collector_paused(), quick_switches():
        writer.start()
        try:
            for chunk in _batches(table_ids):
                stamp = pipe.latest_stamp()
                job = None if stamp is None else _plan_or_none(store, chunk, now, stamp, later)
                if job is None or not pipe.submit(job):
                    later += chunk if job is None else job.table_ids
        finally:
            pipe.close_planner()
            writer.join()
    return writer.outcomes, later + writer.later


def _plan_or_none(
    store: Store, chunk: list[str], now: datetime, stamp: int, dated: list[str]
) -> _Job | None:
    try:
        return _plan(store, chunk, now, stamp, dated)
    except Exception:
        log.exception("tick: planning tables %s failed; they go batch by batch", chunk)
        return None


def _plan(store: Store, chunk: list[str], now: datetime, stamp: int, dated: list[str]) -> _Job:
    """Read ``chunk``'s candidate tables in one snapshot (begun after ``stamp`` was published)
    and plan them; the tables with a date trigger are added to ``dated``."""
    with store.read() as tx:
        tables = tick_bulk.candidate_tables_snapshot(tx, table_ids=chunk, now=now)
        states = tick_bulk.states_of_tables(tx, table_ids=[str(t["id"]) for t in tables])
        plans, with_dates = plan_tables(tables, states, now)
        decide_plans(plans, active_of(tx, plans), now)
        statements = _writes(tx, plans, now)
    dated += with_dates
    ids = [str(p.table["id"]) for p in plans]
    return _Job(stamp, ids, statements, [(p.has_schedules, len(p.fires)) for p in plans])


def _writes(tx: Tx, plans: list[TablePlan], now: datetime) -> list[tick_coarse.Statement]:
    """The statements of ``tick_batch.write_plans`` when every claim and run succeeds."""
    fires = [(p, f) for p in plans for f in p.fires]
    claims, runs, consumed = [], [], []
    for (plan, fire), run_id in zip(fires, uuid7s(now, len(fires)), strict=True):
        trigger_id, table_id = str(fire.trigger.trigger_id), str(plan.table["id"])
        claims.append((trigger_id, fire.identity, table_id, run_id))
        definition = frozen_definition(plan, fire)
        runs.append((run_id, table_id, trigger_id, definition, fire.identity, fire.window))
        consumed.append((trigger_id, fire.window, fire.next_due))
    tables = []
    for plan in plans:
        changed = {
            **dict(plan.next_dues),
            **{str(f.trigger.trigger_id): f.next_due for f in plan.fires},
        }
        tables.append((str(plan.table["id"]), table_next_due(plan.states, changed)))
    return tick_coarse.prepare_clock_writes(
        tx,
        claims=claims,
        runs=runs,
        consumed=consumed,
        next_dues=[nd for p in plans for nd in p.next_dues],
        tables=tables,
        now=now,
    )


# --- PostgreSQL: each batch in its own transaction, its writes and commit on a second thread ---
#
# Batches of one tick lock disjoint tables (FOR NO KEY UPDATE SKIP LOCKED), so their
# transactions are those of racing ticks: batch N+1 can be locked, read and decided on this
# thread while finisher threads write earlier batches and commit them. Nothing is read outside
# its batch's transaction; the rules are tick_batch's, only the threads differ.


# finisher threads: the database's writes of a batch took longer than the planning of the next
# one, and two PostgreSQL backends write two batches at once (bench/tick_bench.py (a))
FINISHERS = 2


def overlapped(store: Store, table_count: int) -> bool:
    """Whether a PostgreSQL tick over ``table_count`` candidate tables overlaps its batches."""
    return store.is_postgres and table_count > batch_size(table_count)


@dataclass(slots=True)
class _Batch:
    """A batch locked, read and decided: its open transaction (``stack`` ends it), its plans,
    the outcomes of its tables done already (the per-table path)."""

    table_ids: list[str]
    stack: ExitStack
    tx: Tx
    plans: list[TablePlan]
    outcomes: list[Outcome]
    statements: list[tick_coarse.Statement]  # the plans' writes when every claim and run succeeds


class _Finisher(threading.Thread):
    """Writes each batch's plans and commits its transaction."""

    def __init__(
        self, pipe: _Pipe[_Batch], now: datetime, record_limit: int, per_table: TableTick
    ) -> None:
        super().__init__(name="tocsin-tick-finisher", daemon=True)
        self.pipe, self.now, self.record_limit, self.per_table = pipe, now, record_limit, per_table
        self.outcomes: list[Outcome] = []

    def run(self) -> None:
        try:
            with collector_paused():
                while (batch := self.pipe.take()) is not None:
                    self._finish(batch)
        finally:
            left = self.pipe.close_writer()
            if left is not None:
                _roll_back(left, RuntimeError("tick: the finisher stopped"))

    def _finish(self, batch: _Batch) -> None:
        try:
            done = self._write(batch)
        except Exception as exc:
            _roll_back(batch, exc)
            return
        try:
            batch.stack.close()  # commit
        except Exception:
            log.exception("tick: tables %s skipped", batch.table_ids)
            return
        self.outcomes += batch.outcomes + done

    def _write(self, batch: _Batch) -> list[Outcome]:
        """The coarse writes in a savepoint; when a count differs or a statement fails, rolled
        back and the precise path instead (``tick_batch.write_decided``)."""
        try:
            with savepoint(batch.tx):
                if not tick_coarse.apply(batch.tx, batch.statements):
                    raise _Stale
            return [(p.has_schedules, len(p.fires)) for p in batch.plans]
        except _Stale:
            pass
        except Exception:
            log.exception("tick: coarse writes of tables %s failed", batch.table_ids)
        return write_decided(batch.tx, batch.plans, self.now, self.record_limit, self.per_table)


def _roll_back(batch: _Batch, exc: BaseException) -> None:
    """End the batch's transaction with a rollback; its tables are skipped this tick (logged)."""
    log.error("tick: tables %s skipped", batch.table_ids, exc_info=exc)
    try:
        batch.stack.__exit__(type(exc), exc, exc.__traceback__)
    except Exception:
        log.exception("tick: rolling back tables %s failed", batch.table_ids)


def tick_overlapped(
    store: Store, *, table_ids: list[str], now: datetime, record_limit: int, per_table: TableTick
) -> list[Outcome]:
    """Tick ``table_ids`` on PostgreSQL in batches, the finishing of one overlapping the
    planning of the next: the outcome of each table ticked (as ``tick_batch``)."""
    pipe: _Pipe[_Batch] = _Pipe()
    finishers = [_Finisher(pipe, now, record_limit, per_table) for _ in range(FINISHERS)]
    with collector_paused(), quick_switches():
        for finisher in finishers:
            finisher.start()
        try:
            for chunk in _batches(table_ids):
                batch = _open_batch(store, chunk, now, record_limit, per_table)
                if batch is not None and not pipe.submit(batch):
                    _roll_back(batch, RuntimeError("tick: the finisher stopped"))
        finally:
            pipe.close_planner()
            for finisher in finishers:
                finisher.join()
    return [outcome for finisher in finishers for outcome in finisher.outcomes]


def _open_batch(
    store: Store, chunk: list[str], now: datetime, record_limit: int, per_table: TableTick
) -> _Batch | None:
    """Begin the batch's transaction, lock and read its tables, run its per-table tables and
    decide the others (what ``tick_batch`` does before its writes); None when it failed."""
    stack = ExitStack()
    try:
        tx = stack.enter_context(store.begin_immediate())
        plans, outcomes = lock_and_decide(tx, chunk, now, record_limit, per_table)
        statements = _writes(tx, plans, now)
    except Exception as exc:
        _roll_back(_Batch(chunk, stack, None, [], [], []), exc)  # type: ignore[arg-type]
        return None
    return _Batch(chunk, stack, tx, plans, outcomes, statements)


__all__ = [
    "MIN_BATCH_TABLES",
    "PIPELINE_TABLES",
    "batch_size",
    "overlapped",
    "pipelined",
    "tick_overlapped",
    "tick_pipelined",
]
