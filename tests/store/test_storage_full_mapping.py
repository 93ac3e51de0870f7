"""The translation of "no room to write": SQLite's SQLITE_FULL and PostgreSQL's disk_full
(SQLSTATE 53100) are ``StorageFull`` (507, the exact text), neither a lock conflict to retry in
place nor a database that does not answer; a store that met one says so (``short_of_space``).
"""

from __future__ import annotations

import sqlite3

import psycopg
import pytest
from sqlalchemy.exc import OperationalError

from tocsin import messages
from tocsin.errors import StorageFull
from tocsin.store import Store
from tocsin.store.errors import is_storage_full, is_transient, is_unavailable, map_db_errors
from tocsin.store.outage import is_outage


def _raised_through_mapping(exc: Exception) -> StorageFull:
    with pytest.raises(StorageFull) as caught, map_db_errors():
        raise exc
    return caught.value


def test_postgresql_disk_full_is_storage_full() -> None:
    orig = psycopg.errors.DiskFull('could not extend file "base/5/16384": No space left on device')
    assert orig.sqlstate == "53100"
    wrapped = OperationalError("INSERT INTO records …", {}, orig)
    error = _raised_through_mapping(wrapped)
    assert (error.status, error.detail) == (507, messages.STORAGE_FULL)
    assert error.detail == "storage full: the database cannot grow; free space and retry"
    assert error.__cause__ is wrapped
    assert not is_transient(wrapped) and not is_unavailable(wrapped)
    assert is_storage_full(wrapped) and is_outage(wrapped)


def test_sqlite_full_is_storage_full() -> None:
    conn = sqlite3.connect(":memory:")
    conn.execute("PRAGMA max_page_count = 2")
    conn.execute("CREATE TABLE t (x BLOB)")
    with pytest.raises(sqlite3.OperationalError) as full:
        conn.execute("INSERT INTO t VALUES (zeroblob(100000))")
    assert full.value.sqlite_errorcode == sqlite3.SQLITE_FULL
    wrapped = OperationalError("INSERT …", {}, full.value)
    error = _raised_through_mapping(wrapped)
    assert (error.status, error.detail) == (507, messages.STORAGE_FULL)
    assert not is_transient(wrapped) and not is_unavailable(wrapped)


@pytest.mark.parametrize("backend", [pytest.param("postgresql", marks=pytest.mark.pg)])
def test_a_write_refused_for_disk_full_marks_the_store(store: Store) -> None:
    """The server's own 53100 (raised by the database, as a full disk does), through the
    store's transaction; ``/readyz`` then probes for space (tests/api). PostgreSQL only: SQLite
    raises no chosen error code (tests/api fills a capped file instead)."""
    raise_disk_full = (
        "DO $$ BEGIN RAISE EXCEPTION 'No space left on device' USING ERRCODE = 'disk_full'; END $$"
    )
    assert not store.short_of_space
    with pytest.raises(StorageFull), store.begin() as tx:
        tx.conn.exec_driver_sql(raise_disk_full)
    assert store.short_of_space
    store.ping()  # the probe finds room: ready again
    assert not store.short_of_space
