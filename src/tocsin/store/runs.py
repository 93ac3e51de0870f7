"""Runs: the statements that create a run and move it through its life (SPEC §5.3, §8, §9;
DESIGN §5; STYLE F4, R4, R6). Listing and counting live in ``store/run_queries.py``.

``runs.status`` state machine (``core.model.RUN_TRANSITIONS``)::

    pending ──claim──▶ running ──finish──▶ done | failed
       ▲                  │
       ├── release ───────┘   (graceful stop: the worker hands the run back)
       ├── requeue ───────┘   (stale running: updated_at older than the stale window)
       ├── schedule_retry ┘   (automatic retry: a failed attempt waits until next_attempt_at)
       └── reset_for_retry ◀── failed | pending | stale running

Every write a worker makes after its claim is *fenced* by ``(status='running', attempts=n)``.
PostgreSQL claims skip rows other claimers lock (``FOR UPDATE SKIP LOCKED``); SQLite claims run
inside ``BEGIN IMMEDIATE`` (``Store.begin``), where ``status='pending'`` is the fence.

Reads answer :class:`~tocsin.core.model.Run` values, built here only (:func:`run_value`);
``Run.as_dict()`` is the run dict. Inserting takes :class:`NewRun` (bulk, untyped rows).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import fields
from datetime import datetime, timedelta
from functools import cache
from typing import Any, NamedTuple

from sqlalchemy import (
    BindParameter,
    ColumnElement,
    RowMapping,
    and_,
    bindparam,
    exists,
    func,
    literal,
    or_,
    select,
    type_coerce,
    update,
)
from sqlalchemy.exc import IntegrityError

from tocsin.core.model import RUN_TRANSITIONS, Run, RunStatus
from tocsin.store.bulk import instant_binder, with_rows
from tocsin.store.dialects import ordered_scans_only, upsert_insert
from tocsin.store.errors import map_db_errors
from tocsin.store.schema import ACTIVE_STATUSES, ONE_ACTIVE_CLOCK_WHERE, runs, trigger_definitions
from tocsin.store.snapshots import PAYLOAD, SnapshotBatch
from tocsin.store.tx import Tx

RUN_STATUSES = tuple(RunStatus)

RUN_FIELDS = tuple(f.name for f in fields(Run))  # its columns: the value's fields


def run_value(row: RowMapping) -> Run:
    """A ``runs`` row as a :class:`Run` (``action_results`` always a list): the one place a
    run value is built."""
    values = {name: row[name] for name in RUN_FIELDS}
    values.update(clock=bool(row["clock"]), status=RunStatus(row["status"]))
    values.update(attempts=int(row["attempts"]), action_results=list(row["action_results"] or []))
    return Run(**values)


class NewRun(NamedTuple):
    """A pending run to insert (``payload`` and ``definition``: plain JSON values; schedule and
    manual runs name their ``trigger_definitions`` row by ``definition_hash`` instead)."""

    id: str
    table_id: str
    trigger_id: str
    record_id: str | None
    source: str  # created|updated|deleted|restored|schedule
    clock: bool
    payload: Mapping[str, Any]
    definition: Mapping[str, Any] | None
    identity: str | None
    scheduled_for: datetime | None
    definition_hash: str | None = None


_ENCODE = json.JSONEncoder(check_circular=False).encode  # json.dumps' output, plain JSON

_INSERT = (
    "INSERT INTO runs (id, table_id, trigger_id, record_id, source, clock, status, attempts,"
    " error, action_results, payload, snapshot_id, definition, definition_hash, identity,"
    " scheduled_for, created_at, updated_at) SELECT rid, tab, tid, rec, src, clk, 'pending', 0,"
    " NULL, '[]', '{{}}', snap, {definition}, dh, ident, sf, ca, ca FROM v WHERE true"
    f" ON CONFLICT (table_id, trigger_id) WHERE {ONE_ACTIVE_CLOCK_WHERE} DO NOTHING RETURNING id"
)

_INSERT_COLUMNS = (
    *(("rid", "text"), ("tab", "text"), ("tid", "text"), ("rec", "text"), ("src", "text")),
    *(("clk", "boolean"), ("snap", "text"), ("df", "text"), ("dh", "text"), ("ident", "text")),
    *(("sf", "timestamp"), ("ca", "timestamp")),
)


def insert_runs(tx: Tx, *, runs_: Iterable[NewRun], now: datetime) -> set[str]:
    """Insert pending runs created at ``now``; returns the ids inserted. A clock run whose
    trigger has an active clock run is refused by the partial unique index (``ON CONFLICT …
    DO NOTHING``, which aborts no transaction; SPEC §5.3): of two, the first is inserted. A
    row fired on goes once into ``row_snapshots`` (``store.snapshots``)."""
    tx.require_writable()
    bind = instant_binder(tx)
    stamp = bind(now)
    snapshots = SnapshotBatch()
    rows = [
        (
            *r[:6],
            snapshots.add(r.id, r.record_id, r.payload),
            None if r.definition is None else _ENCODE(r.definition),
            r.definition_hash,
            r.identity,
            bind(r.scheduled_for),
            stamp,
        )
        for r in runs_
    ]
    body = _INSERT.format(definition="CAST(df AS json)" if tx.is_postgres else "df")
    inserted = {str(r[0]) for r in with_rows(tx, _INSERT_COLUMNS, body, rows)}
    snapshots.store(tx, inserted=inserted)
    tx.wake_workers(bool(inserted))
    return inserted


def put_definitions(tx: Tx, *, definitions: Mapping[str, Mapping[str, Any]]) -> None:
    """Store trigger definitions by their ``core.schedules.identity.definition_digest`` (hash →
    definition); a hash already stored is left as it is (its content is the same)."""
    tx.require_writable()
    if definitions:
        rows = [{"hash": h, "definition": d} for h, d in definitions.items()]
        tx.conn.execute(upsert_insert(tx, trigger_definitions).on_conflict_do_nothing(), rows)


# a run's definition: its copy, else the stored definition its hash names
_DEFINITION = type_coerce(
    func.coalesce(
        runs.c.definition,
        select(trigger_definitions.c.definition)
        .where(trigger_definitions.c.hash == runs.c.definition_hash)
        .scalar_subquery(),
    ),
    runs.c.definition.type,
).label("definition")


# what every read of a run selects (or returns): the columns of :data:`RUN_FIELDS`
_READ: dict[str, ColumnElement[Any]] = {"definition": _DEFINITION, "payload": PAYLOAD}
RUN_COLUMNS = tuple(_READ[name] if name in _READ else runs.c[name] for name in RUN_FIELDS)


def insert_run(tx: Tx, **fields: Any) -> Run | None:
    """:func:`insert_runs` for one run (``now`` and the :class:`NewRun` fields as keywords);
    the run inserted, or None when the one-active-run index refused it."""
    now = fields.pop("now")
    inserted = insert_runs(tx, runs_=[NewRun(**fields)], now=now)
    return get_run(tx, run_id=fields["id"]) if inserted else None


def get_run(tx: Tx, *, run_id: str) -> Run | None:
    """One run by id, or None."""
    stmt = select(*RUN_COLUMNS).where(runs.c.id == run_id)
    row = tx.conn.execute(stmt).mappings().one_or_none()
    return None if row is None else run_value(row)


TriggerKey = tuple[str, str]  # (table_id, trigger_id): a trigger id is unique within its table


def active_clock_triggers(tx: Tx, *, table_ids: Sequence[str]) -> set[TriggerKey]:
    """The ``(table_id, trigger_id)`` of ``table_ids``' clock triggers with a pending or running
    clock run (SPEC §5.3): the rows ``uq_runs_one_active_clock`` fences, read through it per
    table (a plain ``table_id IN (…)`` could walk a table's whole run history)."""
    match = f"runs.table_id = v.tab AND {ONE_ACTIVE_CLOCK_WHERE}"
    if tx.is_postgres:
        body = (
            "SELECT v.tab, a.trigger_id FROM v CROSS JOIN LATERAL (SELECT trigger_id FROM runs"
            f" WHERE {match}) AS a"
        )
    else:
        body = (
            "SELECT v.tab, runs.trigger_id FROM v JOIN runs INDEXED BY uq_runs_one_active_clock"
            f" ON {match}"
        )
    rows = with_rows(tx, (("tab", "text"),), body, [(i,) for i in table_ids])
    return {(str(r[0]), str(r[1])) for r in rows}


def active_clock_trigger_ids(tx: Tx, *, table_id: str, trigger_ids: Sequence[str]) -> set[str]:
    """:func:`active_clock_triggers` for one table: which of its ``trigger_ids`` have a pending
    or running clock run."""
    found = active_clock_triggers(tx, table_ids=[table_id])
    return {tid for _, tid in found} & set(trigger_ids)


_FINISHED = frozenset({RunStatus.DONE, RunStatus.FAILED})


def _run_value(row: Any) -> Run:
    return run_value(row._mapping)


def _claim_values(now: datetime | BindParameter[Any]) -> dict[str, Any]:
    # typed bind: a bare aware datetime would go in as timestamptz and be shifted by the
    # session time zone; UTCDateTime stores naive UTC like every other instant
    at = now if isinstance(now, BindParameter) else literal(now, type_=runs.c.started_at.type)
    return {
        "status": "running",
        "attempts": runs.c.attempts + 1,
        "started_at": func.coalesce(runs.c.started_at, at),
        "updated_at": now,
        "finished_at": None,
        "next_attempt_at": None,
    }


def claim_next_runs(tx: Tx, *, now: datetime, limit: int = 1) -> list[Run]:
    """Claim up to ``limit`` of the oldest pending runs: ``pending → running``, ``attempts + 1``.

    Eligible: ``status = 'pending'`` and ``next_attempt_at`` NULL or ``<= now`` (a run waiting
    for its automatic-retry backoff is left alone), oldest ``updated_at`` first; on PostgreSQL
    rows locked by another claimer are skipped (``FOR UPDATE SKIP LOCKED``), on SQLite the
    caller holds ``BEGIN IMMEDIATE``. The outer ``status = 'pending'`` predicate is the fence
    either way. Returns the claimed runs in creation order (empty when none is pending).
    """
    tx.require_writable()
    with map_db_errors():
        if tx.is_postgres:
            ordered_scans_only(tx)  # walk ix_runs_status_updated: never sort every pending run
        rows = tx.conn.execute(_claim_next(tx.is_postgres), {"now": now, "limit": limit})
        claimed = [_run_value(row) for row in rows]
    return sorted(claimed, key=lambda run: (run.created_at, run.id))


@cache
def _claim_next(postgres: bool) -> Any:
    """:func:`claim_next_runs`' statement, built once per dialect (a worker claims each pass)."""
    at = bindparam("now", type_=runs.c.updated_at.type)
    pick = (
        select(runs.c.id)
        .where(runs.c.status == "pending", _attempt_due(at))
        .order_by(runs.c.updated_at, runs.c.id)
        .limit(bindparam("limit"))
    )
    if postgres:
        # a MATERIALIZED CTE is evaluated once: ``WHERE id IN (SELECT … LIMIT n FOR UPDATE SKIP
        # LOCKED)`` may be planned as a semi-join that re-runs the subquery and claims every
        # pending run, far past ``limit``
        chosen = pick.with_for_update(skip_locked=True).cte("claimable").prefix_with("MATERIALIZED")
        picked: ColumnElement[bool] = runs.c.id == chosen.c.id
    else:
        picked = runs.c.id.in_(pick.scalar_subquery())
    claim = update(runs).where(picked, runs.c.status == "pending").values(**_claim_values(at))
    return claim.returning(*RUN_COLUMNS)


def _attempt_due(now: datetime | BindParameter[Any]) -> ColumnElement[bool]:
    """The run is not waiting for an automatic-retry backoff past ``now``."""
    return or_(runs.c.next_attempt_at.is_(None), runs.c.next_attempt_at <= now)


def claim_run(tx: Tx, *, run_id: str, now: datetime) -> Run | None:
    """Claim one run by id: ``pending → running`` only if it is still pending and its
    automatic-retry backoff (if any) has passed (else None)."""
    tx.require_writable()
    stmt = (
        update(runs)
        .where(runs.c.id == run_id, runs.c.status == "pending", _attempt_due(now))
        .values(**_claim_values(now))
        .returning(*RUN_COLUMNS)
    )
    with map_db_errors():
        row = tx.conn.execute(stmt).first()
    return None if row is None else _run_value(row)


def _fence(run_id: str, attempts: int) -> ColumnElement[bool]:
    return and_(runs.c.id == run_id, runs.c.status == "running", runs.c.attempts == attempts)


# Hot statements are built once with bind parameters: a worker executes them for every action.
_FENCE = and_(
    runs.c.id == bindparam("p_run_id"),
    runs.c.status == "running",
    runs.c.attempts == bindparam("p_attempts"),
)

_SAVE_RECEIPTS = (
    update(runs)
    .where(_FENCE)
    .values(
        action_results=bindparam("p_receipts", type_=runs.c.action_results.type),
        updated_at=bindparam("p_now", type_=runs.c.updated_at.type),
    )
)

_FINISH = (
    update(runs)
    .where(_FENCE)
    .values(
        status=bindparam("p_status", type_=runs.c.status.type),
        error=bindparam("p_error", type_=runs.c.error.type),
        updated_at=bindparam("p_now", type_=runs.c.updated_at.type),
        finished_at=bindparam("p_now", type_=runs.c.finished_at.type),
    )
)

_FINISH_WITH_RECEIPTS = _FINISH.values(
    action_results=bindparam("p_receipts", type_=runs.c.action_results.type)
)


def save_receipt(
    tx: Tx, *, run_id: str, attempts: int, receipts: list[dict[str, Any]], now: datetime
) -> bool:
    """Store the run's whole receipt list (replacing it); False when the claim was lost."""
    tx.require_writable()
    params = {"p_run_id": run_id, "p_attempts": attempts, "p_receipts": receipts, "p_now": now}
    with map_db_errors():
        return tx.conn.execute(_SAVE_RECEIPTS, params).rowcount == 1


def finish_run(
    tx: Tx,
    *,
    run_id: str,
    attempts: int,
    status: str,
    error: str | None,
    now: datetime,
    receipts: list[dict[str, Any]] | None = None,
) -> bool:
    """``running → done | failed`` (optionally with the final receipts); False if fenced out."""
    tx.require_writable()
    if status not in _FINISHED or not RunStatus.RUNNING.may_become(RunStatus(status)):
        raise ValueError(f"finish_run: not a terminal status: {status!r}")
    params: dict[str, Any] = {"p_run_id": run_id, "p_attempts": attempts, "p_status": status}
    params.update(p_error=error, p_now=now)
    stmt = _FINISH
    if receipts is not None:
        stmt, params["p_receipts"] = _FINISH_WITH_RECEIPTS, receipts
    with map_db_errors():
        return tx.conn.execute(stmt, params).rowcount == 1


def schedule_retry(
    tx: Tx,
    *,
    run_id: str,
    attempts: int,
    error: str,
    receipts: list[dict[str, Any]],
    next_attempt_at: datetime,
    now: datetime,
) -> bool:
    """``running → pending`` after a failed attempt that the trigger's retry policy retries:
    the error and receipts are kept (the next attempt resumes after the successful actions) and
    no worker claims the run before ``next_attempt_at``. False if fenced out."""
    tx.require_writable()
    stmt = (
        update(runs)
        .where(_fence(run_id, attempts))
        .values(
            status="pending",
            error=error,
            action_results=receipts,
            next_attempt_at=next_attempt_at,
            updated_at=now,
            enqueued_at=now,
        )
    )
    with map_db_errors():
        return tx.conn.execute(stmt).rowcount == 1


def touch_run(tx: Tx, *, run_id: str, attempts: int, now: datetime) -> bool:
    """Heartbeat: ``updated_at = now`` on a run this worker still holds; False if fenced out."""
    tx.require_writable()
    stmt = update(runs).where(_fence(run_id, attempts)).values(updated_at=now)
    with map_db_errors():
        return tx.conn.execute(stmt).rowcount == 1


def release_run(tx: Tx, *, run_id: str, attempts: int, now: datetime) -> bool:
    """``running → pending`` for a worker that was asked to stop; receipts are kept."""
    tx.require_writable()
    stmt = (
        update(runs)
        .where(_fence(run_id, attempts))
        .values(status="pending", updated_at=now, enqueued_at=now)
    )
    with map_db_errors():
        moved = tx.conn.execute(stmt).rowcount == 1
    tx.wake_workers(moved)
    return moved


def reset_for_retry(
    tx: Tx, *, run_id: str, expected_status: str, expected_updated_at: datetime, now: datetime
) -> Run | None:
    """``failed | pending | stale running → pending``, clearing the top-level error.

    Compare-and-set on (status, updated_at) so a worker that moved the run meanwhile wins. A clock
    run is not reset while another run of its trigger (in its table) is pending or running (the
    one-active-run fence); then None is returned. Receipts are kept: the next attempt resumes
    after them.
    """
    tx.require_writable()
    other = runs.alias("other")
    another_active = exists().where(
        other.c.table_id == runs.c.table_id,
        other.c.trigger_id == runs.c.trigger_id,
        other.c.id != runs.c.id,
        other.c.clock.is_(True),
        other.c.status.in_(ACTIVE_STATUSES),
    )
    stmt = (
        update(runs)
        .where(
            runs.c.id == run_id,
            runs.c.status == expected_status,
            runs.c.updated_at == expected_updated_at,
            or_(runs.c.clock.is_(False), ~another_active),
        )
        .values(
            status="pending",
            error=None,
            updated_at=now,
            enqueued_at=now,
            finished_at=None,
            next_attempt_at=None,
        )
        .returning(*RUN_COLUMNS)
    )
    try:
        with map_db_errors():
            row = tx.conn.execute(stmt).first()
    except IntegrityError:  # the one-active-run index refused: a racing run became active
        return None
    tx.wake_workers(row is not None)
    return None if row is None else _run_value(row)


def requeue_runs(
    tx: Tx,
    *,
    now: datetime,
    status: str,
    older_than_s: float,
    table_id: str | None = None,
) -> int:
    """Hand lost work back to the workers; returns how many runs moved.

    - ``status='pending'``: pending runs last (re-)enqueued longer than ``older_than_s`` ago
      (their delivery was lost): re-stamped ``enqueued_at = now``, still pending.
    - ``status='running'``: running runs whose ``updated_at`` is older than ``older_than_s``
      (their worker died): ``running → pending``; receipts kept so a worker resumes them.
    """
    tx.require_writable()
    if status not in ("pending", "running"):
        raise ValueError(f"requeue_runs: status must be pending or running, not {status!r}")
    cutoff = now - timedelta(seconds=older_than_s)
    conds: list[ColumnElement[bool]] = [runs.c.status == status]
    if status == "running":
        conds.append(runs.c.updated_at < cutoff)
        values: dict[str, Any] = {"status": "pending", "updated_at": now, "enqueued_at": now}
    else:  # keep updated_at: a re-stamped pending run keeps its place in the claim order
        # every way into pending stamps enqueued_at with updated_at (or leaves it NULL at insert)
        # and a re-stamp only moves enqueued_at later, so a pending run's enqueued_at is NULL or
        # >= its updated_at: the coalesce test implies updated_at < cutoff, said explicitly so
        # the (status, updated_at) index reads only the old pending runs, not all of them
        conds.append(runs.c.updated_at < cutoff)
        conds.append(func.coalesce(runs.c.enqueued_at, runs.c.updated_at) < cutoff)
        # a run waiting for its automatic-retry backoff was not lost: its turn has not come
        conds.append(or_(runs.c.next_attempt_at.is_(None), runs.c.next_attempt_at < cutoff))
        values = {"enqueued_at": now}
    if table_id is not None:
        conds.append(runs.c.table_id == table_id)
    stmt = update(runs).where(*conds).values(**values)
    with map_db_errors():
        moved = int(tx.conn.execute(stmt).rowcount)
    tx.wake_workers(moved > 0)
    return moved


__all__ = ["RUN_TRANSITIONS"]  # re-exported: the store checks the core's transitions
