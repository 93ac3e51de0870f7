"""SQLite write transactions take the write lock at BEGIN IMMEDIATE, retried every 0.5-1 ms
while another connection holds it (``store.engine._quick_begin``), then SQLite's own busy
handler for the rest of the busy timeout; a lock held past it is a ``TransientStoreError``."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tocsin.errors import TransientStoreError
from tocsin.store import Store, engine, open_store


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "tocsin.db"


@pytest.fixture
def sqlite_store(path: Path) -> Iterator[Store]:
    opened = open_store(f"sqlite:///{path}")
    try:
        yield opened
    finally:
        opened.dispose()


def _hold_write_lock(path: Path) -> sqlite3.Connection:
    other = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    other.execute("BEGIN IMMEDIATE")  # another process's write transaction, say
    return other


def _busy_timeout(store: Store) -> int:
    with store.read() as tx:
        return int(tx.conn.exec_driver_sql("PRAGMA busy_timeout").scalar_one())


def test_a_write_waits_for_the_lock_and_begins_once_it_is_released(
    sqlite_store: Store, path: Path
) -> None:
    other = _hold_write_lock(path)
    began = threading.Event()

    def write() -> None:
        with sqlite_store.begin() as tx:
            tx.conn.exec_driver_sql("CREATE TABLE written (a int)")
            began.set()

    writer = threading.Thread(target=write)
    writer.start()
    assert not began.wait(0.05)  # held: the write waits
    other.execute("COMMIT")
    writer.join(5)
    assert began.is_set() and not writer.is_alive()
    other.close()
    assert _busy_timeout(sqlite_store) == engine.SQLITE_BUSY_TIMEOUT_MS  # put back after BEGIN


def test_a_lock_held_past_the_busy_timeout_is_a_transient_error(
    sqlite_store: Store, path: Path
) -> None:
    """At the real waits: ~0.1 s of quick retries, then SQLite's own busy timeout (5 s)."""
    other = _hold_write_lock(path)
    try:
        with pytest.raises(TransientStoreError), sqlite_store.begin():
            pass
    finally:
        other.execute("ROLLBACK")
        other.close()
    with sqlite_store.begin() as tx:  # the connection is usable again, its timeout put back
        assert tx.conn.exec_driver_sql("PRAGMA busy_timeout").scalar_one() == (
            engine.SQLITE_BUSY_TIMEOUT_MS
        )


def test_the_quick_retries_begin_or_hand_over(path: Path) -> None:
    open_store(f"sqlite:///{path}").dispose()  # the file, in WAL mode
    mine = sqlite3.connect(path, isolation_level=None)
    mine.execute(f"PRAGMA busy_timeout = {engine.SQLITE_BUSY_TIMEOUT_MS}")
    other = _hold_write_lock(path)
    assert engine._quick_begin(mine, "BEGIN IMMEDIATE") is False  # still held: SQLite's turn
    assert mine.execute("PRAGMA busy_timeout").fetchone()[0] == engine.SQLITE_BUSY_TIMEOUT_MS
    other.execute("COMMIT")
    assert engine._quick_begin(mine, "BEGIN IMMEDIATE") is True
    assert mine.in_transaction
    mine.execute("ROLLBACK")
    assert engine._quick_begin(mine, "BEGIN NONSENSE") is False  # not a lock: raised by the caller
    assert not mine.in_transaction
    mine.close()
    other.close()
