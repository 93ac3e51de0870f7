"""Claiming the tick's candidate tables (SPEC §6; DESIGN §5; STYLE F2, R5).

Candidate eligibility (one list, both dialects):

- the table is live (not trashed)
- its triggers config is not SQL NULL
- it has due work: ``next_due_at IS NULL`` (unknown) or ``next_due_at <= now``
- rotation: ``last_ticked_at`` NULLS FIRST, then id, so that with more candidates than ``limit``
  every table is reached in turn (the tick calls ``mark_tables_ticked`` on what it claimed)

The two variants, side by side:

- PostgreSQL: ``SELECT … FOR NO KEY UPDATE OF tables SKIP LOCKED`` — overlapping ticks never
  block each other (nor record writes) and get disjoint sets of tables; the locks last until
  the tick's transaction ends.
- SQLite: SQLAlchemy drops ``FOR UPDATE SKIP LOCKED`` silently (F2). Call this inside
  ``store.begin_immediate()``: SQLite then has one writer at a time, so a second tick waits for
  the first to commit and sees its ``last_ticked_at`` and ledger rows. The ledger key remains the
  fence on both (``ledger.claim_occurrence``).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, and_, false, func, or_, select, update

from tocsin.store.records import table_dict
from tocsin.store.tables import tables
from tocsin.store.tx import Tx


def _live_with_triggers() -> ColumnElement[bool]:
    return and_(tables.c.trashed == false(), tables.c.triggers.is_not(None))


def claim_candidate_tables(tx: Tx, *, now: datetime, limit: int) -> list[dict[str, Any]]:
    """Lock and return up to ``limit`` candidate tables with due work, least recently ticked first.

    PostgreSQL: ``FOR NO KEY UPDATE OF tables SKIP LOCKED``.
    SQLite: run inside ``begin_immediate()``.
    """
    tx.require_writable()
    stmt = (
        select(tables)
        .where(
            _live_with_triggers(),
            or_(tables.c.next_due_at.is_(None), tables.c.next_due_at <= now),
        )
        .order_by(tables.c.last_ticked_at.asc().nulls_first(), tables.c.id)
        .limit(limit)
    )
    if tx.is_postgres:  # NO KEY UPDATE: record inserts (FK KEY SHARE) are not blocked
        stmt = stmt.with_for_update(skip_locked=True, of=tables, key_share=True)
    return [table_dict(row) for row in tx.conn.execute(stmt).mappings()]


def mark_tables_ticked(tx: Tx, *, table_ids: Iterable[str], now: datetime) -> None:
    """Stamp ``last_ticked_at`` so the rotation moves on to the others next tick."""
    tx.require_writable()
    ids = sorted(set(table_ids))
    if ids:
        stmt = update(tables).where(tables.c.id.in_(ids)).values(last_ticked_at=now)
        tx.conn.execute(stmt)


def count_candidate_tables(tx: Tx) -> int:
    """How many live tables have a triggers config (the tick's ``tables_with_schedules``)."""
    stmt = select(func.count()).select_from(tables).where(_live_with_triggers())
    return int(tx.conn.execute(stmt).scalar_one())


__all__ = ["claim_candidate_tables", "count_candidate_tables", "mark_tables_ticked"]
