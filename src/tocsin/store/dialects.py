"""The dialect-specific ``INSERT`` that carries ``ON CONFLICT`` (STYLE F3).

``sqlalchemy.insert`` has no ON CONFLICT clause; PostgreSQL's and SQLite's own ``insert``
constructs do, with the same method names, and both compile ``… ON CONFLICT … DO NOTHING
RETURNING …``.
"""

from __future__ import annotations

from sqlalchemy import Table
from sqlalchemy.dialects import postgresql, sqlite

from tocsin.store.tx import Tx


def upsert_insert(tx: Tx, table: Table) -> postgresql.Insert | sqlite.Insert:
    """An INSERT into ``table`` that supports ``on_conflict_do_nothing`` / ``…_do_update``."""
    if tx.is_postgres:
        return postgresql.insert(table)
    return sqlite.insert(table)


__all__ = ["upsert_insert"]
