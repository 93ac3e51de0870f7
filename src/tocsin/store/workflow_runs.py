"""Workflow runs: insert, read, claim, persist step receipts, finish (SPEC §12).

Claims are ``pending → running`` with ``attempts + 1`` in one conditional UPDATE (PostgreSQL:
the pick is ``FOR UPDATE SKIP LOCKED``; SQLite: the caller holds ``store.begin()``, which is
``BEGIN IMMEDIATE``). Every write after a claim is fenced by ``(status = 'running',
attempts)``: a run canceled meanwhile is never written back to another status.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import bindparam, func, insert, literal, select, update

from tocsin.store.schema import WORKFLOW_ACTIVE, workflow_runs
from tocsin.store.tx import Tx

R = workflow_runs
RUN_STATUSES = ("pending", "running", "success", "failed", "suspended", "canceled")


def run_dict(row: Mapping[Any, Any]) -> dict[str, Any]:
    out = dict(row)
    out["steps"] = list(out.get("steps") or [])
    return out


def insert_runs(tx: Tx, *, rows: Sequence[Mapping[str, Any]]) -> None:
    """Insert pending runs (``rows`` name every non-default column)."""
    tx.require_writable()
    if rows:
        tx.conn.execute(insert(R), [dict(r) for r in rows])


def get_run(tx: Tx, *, run_id: str) -> dict[str, Any] | None:
    row = tx.conn.execute(select(R).where(R.c.id == run_id)).mappings().first()
    return run_dict(row) if row is not None else None


def runs_by_id(tx: Tx, *, run_ids: Iterable[str]) -> dict[str, dict[str, Any]]:
    """Runs by primary key (one page of fires' runs), in one statement per 500 ids."""
    wanted = sorted({i for i in run_ids if i})
    found: dict[str, dict[str, Any]] = {}
    for start in range(0, len(wanted), 500):
        stmt = select(R).where(R.c.id.in_(wanted[start : start + 500]))
        found.update((r["id"], run_dict(r)) for r in tx.conn.execute(stmt).mappings())
    return found


def list_runs(
    tx: Tx,
    *,
    workflow_id: str | None,
    status: str | None,
    skip: int,
    limit: int,
) -> tuple[list[dict[str, Any]], int]:
    """Runs newest first, optionally of one workflow and/or status; and the total."""
    where = []
    if workflow_id is not None:
        where.append(R.c.workflow_id == workflow_id)
    if status is not None:
        where.append(R.c.status == status)
    total = tx.conn.execute(select(func.count()).select_from(R).where(*where)).scalar_one()
    stmt = (
        select(R)
        .where(*where)
        .order_by(R.c.created_at.desc(), R.c.id.desc())
        .offset(skip)
        .limit(limit)
    )
    return [run_dict(r) for r in tx.conn.execute(stmt).mappings()], int(total)


def active_schedule_ids(tx: Tx, *, schedule_ids: Iterable[str]) -> set[str]:
    """Which of ``schedule_ids`` have a pending or running run (the overlap fence); backfill
    runs (issue 17, their own namespace) never fence scheduled fires."""
    wanted = sorted(set(schedule_ids))
    found: set[str] = set()
    for start in range(0, len(wanted), 500):
        chunk = wanted[start : start + 500]
        stmt = select(R.c.schedule_id).where(
            R.c.schedule_id.in_(chunk), R.c.status.in_(WORKFLOW_ACTIVE), R.c.trigger != "backfill"
        )
        found.update(str(s) for s in tx.conn.execute(stmt).scalars())
    return found


def _claim_values(now: datetime) -> dict[str, Any]:
    return {
        "status": "running",
        "attempts": R.c.attempts + 1,
        "started_at": func.coalesce(R.c.started_at, literal(now, type_=R.c.started_at.type)),
        "updated_at": now,
    }


def claim_next_runs(
    tx: Tx, *, now: datetime, limit: int, workflow_ids: Sequence[str]
) -> list[dict[str, Any]]:
    """Claim up to ``limit`` of the oldest pending runs of ``workflow_ids`` (``pending →
    running``, attempts + 1)."""
    tx.require_writable()
    pick = select(R.c.id).where(R.c.status == "pending", R.c.workflow_id.in_(list(workflow_ids)))
    pick = pick.order_by(R.c.updated_at, R.c.id)
    pick = pick.limit(limit)
    if tx.is_postgres:
        pick = pick.with_for_update(skip_locked=True)
    stmt = (
        update(R)
        .where(R.c.id.in_(pick.scalar_subquery()), R.c.status == "pending")
        .values(**_claim_values(now))
        .returning(*R.c)
    )
    claimed = [run_dict(r._mapping) for r in tx.conn.execute(stmt)]
    return sorted(claimed, key=lambda r: (r["created_at"], r["id"]))


def claim_run(tx: Tx, *, run_id: str, now: datetime) -> dict[str, Any] | None:
    """Claim one run by id if it is still pending."""
    tx.require_writable()
    stmt = (
        update(R)
        .where(R.c.id == run_id, R.c.status == "pending")
        .values(**_claim_values(now))
        .returning(*R.c)
    )
    row = tx.conn.execute(stmt).first()
    return run_dict(row._mapping) if row is not None else None


def save_steps(
    tx: Tx, *, run_id: str, attempts: int, steps: list[dict[str, Any]], now: datetime
) -> bool:
    """Store the receipts of a running run; False when the claim was lost (canceled…)."""
    tx.require_writable()
    stmt = (
        update(R)
        .where(R.c.id == run_id, R.c.status == "running", R.c.attempts == attempts)
        .values(steps=steps, updated_at=now)
    )
    return tx.conn.execute(stmt).rowcount == 1


_FINISH = (
    update(R)
    .where(R.c.id == bindparam("p_id"), R.c.status == "running")
    .where(R.c.attempts == bindparam("p_attempts"))
    .values(
        status=bindparam("p_status"),
        steps=bindparam("p_steps"),
        output=bindparam("p_output"),
        error=bindparam("p_error"),
        suspend_payload=bindparam("p_suspend"),
        updated_at=bindparam("p_now"),
        ended_at=bindparam("p_ended"),
    )
)
FINISH_KEYS = ("status", "steps", "output", "error", "suspend_payload")


def finish_run(
    tx: Tx, *, run_id: str, attempts: int, values: Mapping[str, Any], now: datetime
) -> bool:
    """``running → values['status']`` (success, failed or suspended) under the claim fence;
    ``values`` names every key of ``FINISH_KEYS`` (one prebuilt statement: the per-run cost)."""
    tx.require_writable()
    params = {
        "p_id": run_id,
        "p_attempts": attempts,
        "p_status": values["status"],
        "p_steps": values["steps"],
        "p_output": values["output"],
        "p_error": values["error"],
        "p_suspend": values["suspend_payload"],
        "p_now": now,
        "p_ended": now if values["status"] in ("success", "failed") else None,
    }
    return tx.conn.execute(_FINISH, params).rowcount == 1


def transition(
    tx: Tx,
    *,
    run_id: str,
    from_statuses: Sequence[str],
    values: Mapping[str, Any],
    now: datetime,
) -> bool:
    """Set ``values`` on a run whose status is one of ``from_statuses`` (cancel, resume, retry)."""
    tx.require_writable()
    stmt = (
        update(R)
        .where(R.c.id == run_id, R.c.status.in_(list(from_statuses)))
        .values(**values, updated_at=now)
    )
    return tx.conn.execute(stmt).rowcount == 1


def count_runs(tx: Tx, *, status: str | None = None) -> int:
    where = [] if status is None else [R.c.status == status]
    return int(tx.conn.execute(select(func.count()).select_from(R).where(*where)).scalar_one())


__all__ = [
    "RUN_STATUSES",
    "active_schedule_ids",
    "claim_next_runs",
    "claim_run",
    "count_runs",
    "finish_run",
    "get_run",
    "insert_runs",
    "list_runs",
    "run_dict",
    "runs_by_id",
    "save_steps",
    "transition",
]
