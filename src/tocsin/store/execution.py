"""Run execution statements: claim, receipts, finish, retry reset, requeue (SPEC §8, §9).

``runs.status`` state machine (STYLE R6)::

    pending ──claim──▶ running ──finish──▶ done | failed
       ▲                  │
       ├── release ───────┘   (graceful stop: the worker hands the run back)
       ├── requeue ───────┘   (stale running: updated_at older than the stale window)
       ├── schedule_retry ┘   (automatic retry: a failed attempt waits until next_attempt_at)
       └── reset_for_retry ◀── failed | pending | stale running

Every write a worker makes after its claim is *fenced* by ``(status='running', attempts=n)``: a
worker whose run was requeued and claimed again (``attempts`` moved on) writes nothing.

The PostgreSQL and SQLite claim variants live side by side (STYLE R5):

- PostgreSQL: ``WITH claimable AS MATERIALIZED (SELECT id … LIMIT n FOR UPDATE SKIP LOCKED)
  UPDATE … FROM claimable``: concurrent workers skip each other's rows instead of queueing on
  them, and the CTE, evaluated once, bounds the claim to ``n`` runs.
- SQLite: the same conditional ``UPDATE … WHERE status='pending' … RETURNING`` inside a
  ``BEGIN IMMEDIATE`` transaction (``Store.begin``): one writer at a time, and the
  ``status='pending'`` predicate is the fence.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import and_, bindparam, exists, func, literal, or_, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.sql.elements import ColumnElement

from tocsin.core.model import RUN_TRANSITIONS, Run, RunStatus
from tocsin.store.dialects import ordered_scans_only
from tocsin.store.errors import map_db_errors
from tocsin.store.runs import RUN_COLUMNS, run_value
from tocsin.store.schema import ACTIVE_STATUSES, runs
from tocsin.store.tx import Tx

_FINISHED = frozenset({RunStatus.DONE, RunStatus.FAILED})


def _run_value(row: Any) -> Run:
    return run_value(row._mapping)


def _claim_values(now: datetime) -> dict[str, Any]:
    return {
        "status": "running",
        "attempts": runs.c.attempts + 1,
        # typed bind: a bare aware datetime would go in as timestamptz and be shifted by the
        # session time zone; UTCDateTime stores naive UTC like every other instant
        "started_at": func.coalesce(runs.c.started_at, literal(now, type_=runs.c.started_at.type)),
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
    pick = (
        select(runs.c.id)
        .where(runs.c.status == "pending", _attempt_due(now))
        .order_by(runs.c.updated_at, runs.c.id)
        .limit(limit)
    )
    if tx.is_postgres:
        # a MATERIALIZED CTE is evaluated once: ``WHERE id IN (SELECT … LIMIT n FOR UPDATE SKIP
        # LOCKED)`` may be planned as a semi-join that re-runs the subquery and claims every
        # pending run, far past ``limit``
        chosen = pick.with_for_update(skip_locked=True).cte("claimable").prefix_with("MATERIALIZED")
        picked: ColumnElement[bool] = runs.c.id == chosen.c.id
    else:
        picked = runs.c.id.in_(pick.scalar_subquery())
    stmt = (
        update(runs)
        .where(picked, runs.c.status == "pending")
        .values(**_claim_values(now))
        .returning(*RUN_COLUMNS)
    )
    with map_db_errors():
        if tx.is_postgres:
            ordered_scans_only(tx)  # walk ix_runs_status_updated: never sort every pending run
        claimed = [_run_value(row) for row in tx.conn.execute(stmt)]
    return sorted(claimed, key=lambda run: (run.created_at, run.id))


def _attempt_due(now: datetime) -> ColumnElement[bool]:
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
    params = {
        "p_run_id": run_id,
        "p_attempts": attempts,
        "p_status": status,
        "p_error": error,
        "p_now": now,
    }
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
        return tx.conn.execute(stmt).rowcount == 1


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
    return None if row is None else _run_value(row)


def has_other_active_run(tx: Tx, *, table_id: str, trigger_id: str, run_id: str) -> bool:
    """True when another clock run of ``trigger_id`` of ``table_id`` is pending or running."""
    stmt = select(runs.c.id).where(
        runs.c.table_id == table_id,
        runs.c.trigger_id == trigger_id,
        runs.c.id != run_id,
        runs.c.clock.is_(True),
        runs.c.status.in_(ACTIVE_STATUSES),
    )
    with map_db_errors():
        return tx.conn.execute(stmt.limit(1)).first() is not None


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
        return int(tx.conn.execute(stmt).rowcount)


def count_runs(tx: Tx, *, status: str | None = None) -> int:
    """How many runs exist (with ``status``, when given): benches and drain tests read this."""
    stmt = select(func.count()).select_from(runs)
    if status is not None:
        stmt = stmt.where(runs.c.status == status)
    with map_db_errors():
        return int(tx.conn.execute(stmt).scalar_one())


__all__ = [
    "RUN_TRANSITIONS",
    "claim_next_runs",
    "claim_run",
    "count_runs",
    "finish_run",
    "has_other_active_run",
    "release_run",
    "requeue_runs",
    "reset_for_retry",
    "save_receipt",
    "schedule_retry",
    "touch_run",
]
