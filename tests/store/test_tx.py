"""Store transactions: a read is one snapshot and cannot write (the preview relies on it)."""

from __future__ import annotations

import pytest
from sqlalchemy import text

from tocsin.core.model import Table
from tocsin.store import Store
from tocsin.store import records as rec

from .helpers import NOW, new_id


def _insert(store: Store, table_id: str) -> None:
    with store.begin() as tx:
        rec.insert_records(tx, table_id=table_id, rows=[{"id": new_id(), "data": {}}], now=NOW)


def test_a_read_sees_one_snapshot(store: Store, table: Table) -> None:
    """Counts and pages read by one preview agree even while records are written meanwhile
    (PostgreSQL READ COMMITTED gave every statement a fresh snapshot)."""
    _insert(store, table.id)
    with store.read() as tx:
        before = rec.count_live_records(tx, table_id=table.id)
        _insert(store, table.id)  # another connection commits mid-read
        page = rec.page_live_records(tx, table_id=table.id, after=None, limit=10)
        assert before == len(page) == 1
    with store.read() as tx:
        assert rec.count_live_records(tx, table_id=table.id) == 2


def test_a_read_refuses_writes_at_the_database_too(store: Store) -> None:
    # the Tx guard of every store write function
    with pytest.raises(RuntimeError), store.read() as tx:
        tx.require_writable()
    if not store.is_postgres:
        return
    with pytest.raises(Exception, match="read-only transaction"), store.read() as tx:
        tx.conn.execute(text("CREATE TABLE must_not_exist (a int)"))
