"""Statements the tick needs beyond the shared store modules (SPEC §6; DESIGN §5; STYLE R4, R5).

- :func:`lock_candidate_table`: the tick's per-table claim, so each table's work is its own
  transaction (one broken table never rolls back another's runs).
- :func:`lock_table`: serialises config writes (triggers, SCP rules) with each other and with
  the tick, so the §2 exclusivity and the kind-change guard read the config they replace.
- :func:`savepoint`: per-trigger isolation inside that transaction (a statement that fails on
  PostgreSQL must not abort the other triggers' work).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import Any

from sqlalchemy import false, or_, select

from tocsin.store.records import table_dict
from tocsin.store.tables import tables
from tocsin.store.tx import Tx


def lock_candidate_table(tx: Tx, *, table_id: str, now: datetime) -> dict[str, Any] | None:
    """Lock one table for this tick if it is still a candidate; None when not (or taken).

    Eligibility (the same list as ``claims.claim_candidate_tables``):

    - the table is live (not trashed) and its triggers config is not SQL NULL
    - it has due work: ``next_due_at IS NULL`` or ``next_due_at <= now``
    - PostgreSQL: no other transaction holds its row (``FOR NO KEY UPDATE SKIP LOCKED``: a racing
      tick or a config write skips it instead of waiting, while record writes, whose foreign key
      check takes only KEY SHARE, go on). SQLite: call inside ``store.begin_immediate()``.
    """
    tx.require_writable()
    stmt = select(tables).where(
        tables.c.id == table_id,
        tables.c.trashed == false(),
        tables.c.triggers.is_not(None),
        or_(tables.c.next_due_at.is_(None), tables.c.next_due_at <= now),
    )
    if tx.is_postgres:  # NO KEY UPDATE: record writes (their FK KEY SHARE) never wait for a tick
        stmt = stmt.with_for_update(skip_locked=True, of=tables, key_share=True)
    row = tx.conn.execute(stmt).mappings().one_or_none()
    return None if row is None else table_dict(row)


def lock_table(tx: Tx, *, table_id: str) -> dict[str, Any] | None:
    """Lock one live table row for a config write and return it; None when missing or trashed.

    PostgreSQL: ``SELECT … FOR UPDATE`` (waits for a tick or another config write holding it).
    SQLite: call inside ``store.begin_immediate()`` (one writer at a time).
    """
    tx.require_writable()
    stmt = select(tables).where(tables.c.id == table_id, tables.c.trashed == false())
    if tx.is_postgres:
        stmt = stmt.with_for_update(of=tables)
    row = tx.conn.execute(stmt).mappings().one_or_none()
    return None if row is None else table_dict(row)


@contextmanager
def savepoint(tx: Tx) -> Iterator[None]:
    """A SAVEPOINT around a block: an exception rolls back the block only, then propagates."""
    nested = tx.conn.begin_nested()
    try:
        yield
    except BaseException:
        nested.rollback()
        raise
    nested.commit()


__all__ = ["lock_candidate_table", "lock_table", "savepoint"]
