"""Staged changes of the approval gate (SPEC §9.6).

``staged_changes.status`` state machine (STYLE R6)::

    staged ──approve──▶ approved ──claim──▶ applying ──▶ applied | failed
       │                    ▲                   │
       └──reject──▶ rejected └──── requeue ─────┘  (application lost: updated_at too old,
                                                    or a transient conflict)

Claims are conditional writes (``WHERE status='approved'``); PostgreSQL also skips rows locked
by another worker (``FOR UPDATE SKIP LOCKED``), SQLite claims inside ``BEGIN IMMEDIATE``.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from functools import cache
from typing import Any

from sqlalchemy import bindparam, func, insert, select, update

from tocsin import messages
from tocsin.core.model import CHANGE_FIELDS, StagedChange
from tocsin.store.errors import map_db_errors
from tocsin.store.schema import staged_changes
from tocsin.store.tx import Tx

CHANGE_TRANSITIONS: dict[str, frozenset[str]] = {
    "staged": frozenset({"approved", "rejected"}),
    "approved": frozenset({"applying"}),
    "applying": frozenset({"applied", "failed", "approved"}),
    "applied": frozenset(),
    "failed": frozenset(),
    "rejected": frozenset(),
}


def change_value(row: Any) -> StagedChange:
    """A ``staged_changes`` row as a :class:`StagedChange`: the one place a change value is
    built."""
    found = row._mapping
    return StagedChange(**{name: found[name] for name in CHANGE_FIELDS})


def stage_change(tx: Tx, *, change: dict[str, Any], now: datetime) -> StagedChange:
    """Insert a staged change, or return the one this run's action already staged.

    ``change`` holds id, table_id, run_id, action_id, operation, record_id, values.
    """
    tx.require_writable()
    same = select(staged_changes).where(
        staged_changes.c.run_id == change["run_id"],
        staged_changes.c.action_id == change["action_id"],
    )
    with map_db_errors():
        existing = tx.conn.execute(same).first()
        if existing is not None:
            return change_value(existing)
        row = {**change, "status": "staged", "error": None, "created_at": now, "updated_at": now}
        tx.conn.execute(insert(staged_changes).values(**row))
    return StagedChange(**row, decided_at=None, applied_at=None)


def get_change(tx: Tx, *, change_id: str) -> StagedChange | None:
    with map_db_errors():
        row = tx.conn.execute(
            select(staged_changes).where(staged_changes.c.id == change_id)
        ).first()
    return None if row is None else change_value(row)


def list_changes(
    tx: Tx, *, table_id: str, status: str | None, skip: int, limit: int
) -> tuple[list[StagedChange], int]:
    """A page of staged changes, oldest first; and how many there are."""
    conds = [staged_changes.c.table_id == table_id]
    if status is not None:
        conds.append(staged_changes.c.status == status)
    page = (
        select(staged_changes)
        .where(*conds)
        .order_by(staged_changes.c.created_at, staged_changes.c.id)
        .offset(skip)
        .limit(limit)
    )
    with map_db_errors():
        items = [change_value(r) for r in tx.conn.execute(page)]
        total = tx.conn.execute(select(func.count()).where(*conds)).scalar_one()
    return items, int(total)


def decide_change(
    tx: Tx, *, change_id: str, table_id: str, status: str, now: datetime
) -> StagedChange | None:
    """``staged → approved | rejected``; None when the change is not staged any more."""
    tx.require_writable()
    if status not in CHANGE_TRANSITIONS["staged"]:
        raise ValueError(messages.change_decision_invalid(status))
    stmt = (
        update(staged_changes)
        .where(
            staged_changes.c.id == change_id,
            staged_changes.c.table_id == table_id,
            staged_changes.c.status == "staged",
        )
        .values(status=status, decided_at=now, updated_at=now)
        .returning(*staged_changes.c)
    )
    with map_db_errors():
        row = tx.conn.execute(stmt).first()
    return None if row is None else change_value(row)


def claim_approved_change(tx: Tx, *, now: datetime) -> StagedChange | None:
    """Claim the earliest staged approved change: ``approved → applying`` (None when none).

    Changes apply in the order their actions staged them (``created_at, id``).

    Eligible: ``status = 'approved'``; on PostgreSQL rows locked by another worker are skipped.
    """
    tx.require_writable()
    with map_db_errors():
        row = tx.conn.execute(_claim_approved(tx.is_postgres), {"now": now}).first()
    return None if row is None else change_value(row)


@cache
def _claim_approved(postgres: bool) -> Any:
    """:func:`claim_approved_change`'s statement, built once per dialect (every worker pass)."""
    pick = (
        select(staged_changes.c.id)
        .where(staged_changes.c.status == "approved")
        .order_by(staged_changes.c.created_at, staged_changes.c.id)
        .limit(1)
    )
    if postgres:
        pick = pick.with_for_update(skip_locked=True)
    return (
        update(staged_changes)
        .where(staged_changes.c.id == pick.scalar_subquery(), staged_changes.c.status == "approved")
        .values(
            status="applying", updated_at=bindparam("now", type_=staged_changes.c.updated_at.type)
        )
        .returning(*staged_changes.c)
    )


def finish_change(tx: Tx, *, change_id: str, status: str, error: str | None, now: datetime) -> bool:
    """``applying → applied | failed | approved`` (approved: hand back after a transient error)."""
    tx.require_writable()
    if status not in CHANGE_TRANSITIONS["applying"]:
        raise ValueError(messages.change_finish_invalid(status))
    values: dict[str, Any] = {"status": status, "error": error, "updated_at": now}
    if status == "applied":
        values["applied_at"] = now
    stmt = (
        update(staged_changes)
        .where(staged_changes.c.id == change_id, staged_changes.c.status == "applying")
        .values(**values)
    )
    with map_db_errors():
        return tx.conn.execute(stmt).rowcount == 1


def requeue_changes(tx: Tx, *, now: datetime, stale_after_s: float) -> int:
    """``applying → approved`` for applications whose worker vanished (updated_at too old)."""
    tx.require_writable()
    params = {"cutoff": now - timedelta(seconds=stale_after_s), "now": now}
    with map_db_errors():
        return int(tx.conn.execute(_REQUEUE, params).rowcount)


_REQUEUE = (  # built once: the tick runs it on every pass
    update(staged_changes)
    .where(
        staged_changes.c.status == "applying",
        staged_changes.c.updated_at < bindparam("cutoff", type_=staged_changes.c.updated_at.type),
    )
    .values(status="approved", updated_at=bindparam("now", type_=staged_changes.c.updated_at.type))
)
