"""Waking idle workers when another process makes work.

PostgreSQL (``LISTEN``/``NOTIFY``): a transaction that leaves work pending (runs inserted,
requeued or released, lane attempts) calls ``Tx.wake_workers()``; at its end ``Store`` sends
one ``pg_notify`` on :data:`CHANNEL` with the schema as payload (delivered at commit, never for
a rollback; several in one transaction are one notification). SQLite has no notifications, but
``PRAGMA data_version`` on a connection changes whenever another connection commits to the
file (read from the WAL index in shared memory: no disk read), so the listener looks at it
every :data:`SQLITE_LOOK_S`.

A worker idles in :meth:`WorkListener.wait`: on a connection of its own, outside the pool, it
returns as soon as work may have been made (PostgreSQL: a notification for its schema; SQLite:
any commit by another connection), so a run a separate ``tocsin scheduler`` fires starts at
once instead of a poll later. The listener only shortens waits: a wake that finds nothing costs
one empty pass, and a notification lost (the connection dropped, the listener reconnecting)
costs one poll interval, as before; it never decides what runs.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

from tocsin.store.tx import Store

log = logging.getLogger("tocsin.store")

CHANNEL = "tocsin_work"  # what ``Store`` notifies at the commit of a ``Tx.wake_workers()``
RETRY_S = 5.0  # a listener whose connection failed connects again after this long
STOP_POLL_S = 0.1  # PostgreSQL: how often a listening wait looks at its interrupt event
SQLITE_LOOK_S = 0.02  # SQLite: how often a wait reads ``PRAGMA data_version``


class WorkListener:
    """``wait(timeout)`` ends when another process may have made work for this store, once
    ``interrupt`` is set (the stop; ``serve``'s in-process wake), or at the timeout. One per
    worker loop, used from its thread; ``close()`` when done."""

    def __init__(self, store: Store, interrupt: threading.Event) -> None:
        self._store = store
        self._interrupt = interrupt
        self._conn: Any = None
        self._seen: Any = None  # PostgreSQL: the schema listened for; SQLite: the data version
        self._failed_at = 0.0  # monotonic time of the last failed connect (0: none)

    def wait(self, timeout: float) -> bool:
        """Until work may have been made, ``interrupt``, or ``timeout`` seconds: True when the
        database said so, or at once when it has just started listening (what was made before
        it listened is for the caller's next pass to find)."""
        fresh = self._conn is None
        conn = self._connection()
        if conn is None:
            self._interrupt.wait(timeout)
            return False
        if fresh:
            return True
        deadline = time.monotonic() + timeout
        try:
            if self._store.is_postgres:
                return self._notified(conn, deadline)
            return self._committed(conn, deadline)
        except Exception:  # the connection broke: wait as without one, reconnect later
            log.warning("work listener lost its connection; polling", exc_info=True)
            self.close()
            self._failed_at = time.monotonic()
            self._interrupt.wait(max(0.0, deadline - time.monotonic()))
        return False

    def _notified(self, conn: Any, deadline: float) -> bool:
        while not self._interrupt.is_set():
            left = deadline - time.monotonic()
            if left <= 0:
                break
            for note in conn.notifies(timeout=min(left, STOP_POLL_S), stop_after=1):
                if note.payload == self._seen:  # (another schema's work: wait on)
                    return True
        return False

    def _committed(self, conn: Any, deadline: float) -> bool:
        while True:
            version = conn.execute("PRAGMA data_version").fetchone()[0]
            if version != self._seen:
                self._seen = version
                return True
            left = deadline - time.monotonic()
            if left <= 0 or self._interrupt.wait(min(left, SQLITE_LOOK_S)):
                return False

    def _connection(self) -> Any:
        if self._conn is not None:
            return self._conn
        if self._failed_at and time.monotonic() - self._failed_at < RETRY_S:
            return None
        engine = self._store.engine
        if not self._store.is_postgres and engine.url.database in (None, "", ":memory:"):
            return None  # another connection would open another, empty, database
        try:  # a connection of its own: a pooled one would be held for the process's life
            cargs, cparams = engine.dialect.create_connect_args(engine.url)
            if not self._store.is_postgres:  # (closed by whichever thread stops the worker)
                cparams = {**cparams, "check_same_thread": False}
            conn = engine.dialect.loaded_dbapi.connect(*cargs, **cparams)
            if self._store.is_postgres:
                conn.autocommit = True
                self._seen = conn.execute("SELECT current_schema()").fetchone()[0]
                conn.execute(f"LISTEN {CHANNEL}")
            else:
                conn.isolation_level = None  # no transaction held open between looks
                self._seen = conn.execute("PRAGMA data_version").fetchone()[0]
        except Exception:
            log.warning("work listener cannot connect; polling", exc_info=True)
            self._failed_at = time.monotonic()
            return None
        self._conn, self._failed_at = conn, 0.0
        return conn

    def close(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            try:
                conn.close()
            except Exception:  # already broken: nothing to release
                log.debug("work listener close failed", exc_info=True)


__all__ = ["CHANNEL", "WorkListener"]
