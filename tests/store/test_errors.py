"""Driver errors → TransientStoreError at one boundary (SPEC §9.5; STYLE R8)."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import create_engine, event, text
from sqlalchemy.exc import IntegrityError, OperationalError

from tocsin.errors import StatementTimeout, TransientStoreError
from tocsin.store import Store
from tocsin.store.errors import is_transient, map_db_errors
from tocsin.store.records import insert_table

from .helpers import NOW, PG_ONLY, SQLITE_ONLY, new_id


class _PgLike(Exception):
    """Stands in for a psycopg error: only ``sqlstate`` is read."""

    def __init__(self, sqlstate: str) -> None:
        super().__init__(f"sqlstate {sqlstate}")
        self.sqlstate = sqlstate


def _wrapped(orig: BaseException) -> OperationalError:
    return OperationalError("SELECT 1", {}, orig)


@pytest.mark.parametrize("sqlstate", ["40001", "40P01", "55P03"])
def test_pg_lock_conflicts_are_transient(sqlstate: str) -> None:
    assert is_transient(_PgLike(sqlstate))
    assert is_transient(_wrapped(_PgLike(sqlstate)))


@pytest.mark.parametrize("sqlstate", ["23505", "42P01", "57014"])
def test_other_pg_errors_are_not(sqlstate: str) -> None:
    assert not is_transient(_wrapped(_PgLike(sqlstate)))


def test_sqlite_lock_texts_are_transient() -> None:
    assert is_transient(_wrapped(sqlite3.OperationalError("database is locked")))
    assert is_transient(sqlite3.OperationalError("database table is locked"))
    assert not is_transient(_wrapped(sqlite3.OperationalError("no such table: x")))
    assert not is_transient(ValueError("database is locked"))  # not a driver error


def test_a_real_sqlite_busy_becomes_transient_with_its_cause(tmp_path: Path) -> None:
    path = tmp_path / "busy.db"
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("CREATE TABLE t (x INTEGER)")
    holder.execute("BEGIN IMMEDIATE")
    engine = create_engine(f"sqlite:///{path}", connect_args={"timeout": 0})
    try:
        with pytest.raises(TransientStoreError) as caught, map_db_errors(), engine.begin() as conn:
            conn.execute(text("INSERT INTO t VALUES (1)"))
    finally:
        engine.dispose()
        holder.close()
    assert isinstance(caught.value.__cause__, OperationalError)
    assert caught.value.status == 503


def test_everything_else_passes_through(store: Store) -> None:
    table_id = new_id()
    fields: dict[str, Any] = {
        "id": table_id, "scope": "user", "scope_id": new_id(), "name": "T", "columns": {},
        "now": NOW,
    }  # fmt: skip
    with store.begin() as tx:
        insert_table(tx, **fields)
    with pytest.raises(IntegrityError), map_db_errors(), store.begin() as tx:
        insert_table(tx, **fields)
    with pytest.raises(KeyError), map_db_errors():
        raise KeyError("x")


def test_map_db_errors_is_also_a_decorator() -> None:
    @map_db_errors()
    def flaky() -> None:
        raise _wrapped(_PgLike("40P01"))

    with pytest.raises(TransientStoreError, match="transient database conflict"):
        flaky()


def test_a_canceled_statement_is_a_statement_timeout_not_a_conflict() -> None:
    """57014 (past a pool's ``statement_timeout``): 503, not retried in place (SPEC §9.5)."""
    with pytest.raises(StatementTimeout) as caught, map_db_errors():
        raise _wrapped(_PgLike("57014"))
    assert caught.value.status == 503
    assert not isinstance(caught.value, TransientStoreError)


@PG_ONLY
def test_a_real_pg_lock_not_available_becomes_transient(store: Store) -> None:
    table_id = new_id()
    with store.begin() as tx:
        insert_table(
            tx, id=table_id, scope="user", scope_id=new_id(), name="T", columns={}, now=NOW
        )
    with store.begin() as holder:
        holder.conn.execute(
            text("SELECT id FROM tables WHERE id = :id FOR UPDATE"), {"id": table_id}
        )
        with pytest.raises(TransientStoreError) as caught, map_db_errors(), store.begin() as tx:
            tx.conn.execute(
                text("SELECT id FROM tables WHERE id = :id FOR UPDATE NOWAIT"), {"id": table_id}
            )
    assert getattr(caught.value.__cause__, "orig", None) is not None
    assert caught.value.__cause__.orig.sqlstate == "55P03"  # type: ignore[union-attr]


@SQLITE_ONLY
def test_store_transactions_map_a_busy_begin(store: Store) -> None:
    """A lock conflict at BEGIN IMMEDIATE (outside any statement) is transient too."""

    @event.listens_for(store.engine, "connect")
    def _no_wait(dbapi_conn: Any, _record: Any) -> None:
        dbapi_conn.execute("PRAGMA busy_timeout = 0")

    store.engine.dispose()
    holder = sqlite3.connect(str(store.engine.url.database), isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        with pytest.raises(TransientStoreError), store.begin():
            pass
    finally:
        holder.close()
    with store.begin() as tx:  # and the store works again
        assert tx.conn.exec_driver_sql("SELECT 1").scalar_one() == 1
