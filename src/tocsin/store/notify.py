"""Waking idle workers when another process makes work.

PostgreSQL (``LISTEN``/``NOTIFY``): a transaction that leaves work pending (runs inserted,
requeued or released, lane attempts) calls ``Tx.wake_workers()``; at its end ``Store`` sends
one ``pg_notify`` on :data:`CHANNEL` with the schema as payload (delivered at commit, never for
a rollback; several in one transaction are one notification). A thread of the listener reads
them as they come, busy or idle (a listener that stopped reading would hold back the server's
notification queue, which every notifying commit shares), and marks work heard for its schema.
SQLite has no notifications, but ``PRAGMA data_version`` on a connection changes whenever
another connection commits to the file (read from the WAL index in shared memory: no disk
read), so an idle wait looks at it every :data:`SQLITE_LOOK_S`.

A worker idles in :meth:`WorkListener.wait`, on a connection of its own, outside the pool: it
returns as soon as work may have been made, so a run a separate ``tocsin scheduler`` fires
starts at once instead of a poll later. The listener only shortens waits: a wake that finds
nothing costs one empty pass, and a notification lost (the connection dropped, the listener
reconnecting) costs one poll interval, as before; it never decides what runs.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

from tocsin.store.tx import WORK_CHANNEL, Store

log = logging.getLogger("tocsin.store")

CHANNEL = WORK_CHANNEL  # what ``Store`` notifies at the commit of a ``Tx.wake_workers()``
RETRY_S = 5.0  # a listener whose connection failed connects again after this long
LOOK_S = 0.1  # how often a wait looks at its interrupt (and the reader thread at its stop)
SQLITE_LOOK_S = 0.02  # SQLite: how often a wait reads ``PRAGMA data_version``
_LISTENER = "work listener"  # who reports to ``store.outage``


class WorkListener:
    """``wait(timeout)`` ends when another process may have made work for this store, once
    ``interrupt`` is set (the stop; ``serve``'s in-process wake), or at the timeout. One per
    worker loop; ``close()`` when done."""

    def __init__(self, store: Store, interrupt: threading.Event) -> None:
        self._store = store
        self._interrupt = interrupt
        self._heard = threading.Event()  # PostgreSQL: set by the reader for this schema
        self._closed = threading.Event()
        self._reader: threading.Thread | None = None
        self._conn: Any = None  # SQLite: the connection the waits read the version on
        self._version: Any = None

    def wait(self, timeout: float) -> bool:
        """Until work may have been made, ``interrupt``, or ``timeout`` seconds: True when the
        database said so, or at once when it has just started listening (what was made before
        it listened is for the caller's next pass to find)."""
        deadline = time.monotonic() + timeout
        if self._store.is_postgres:
            if self._reader is None:
                self._reader = threading.Thread(target=self._read, name="tocsin-listen")
                self._reader.daemon = True
                self._reader.start()
            while not self._interrupt.is_set():
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                if self._heard.wait(min(left, LOOK_S)):
                    self._heard.clear()
                    return True
            return False
        return self._committed(deadline)

    def _read(self) -> None:
        """The reader thread (PostgreSQL): connect, listen, mark what is heard; reconnect
        after ``RETRY_S`` when the connection fails, until :meth:`close`."""
        while not self._closed.is_set():
            conn = _connect(self._store)
            if conn is None:
                self._closed.wait(RETRY_S)
                continue
            try:
                with conn:
                    schema = conn.execute("SELECT current_schema()").fetchone()[0]
                    conn.execute(f"LISTEN {CHANNEL}")
                    self._heard.set()  # listening from now: catch up with a pass
                    while not self._closed.is_set():
                        for note in conn.notifies(timeout=LOOK_S):
                            if note.payload == schema:  # (another schema's work: not ours)
                                self._heard.set()
            except Exception as exc:  # the connection broke: waits fall back to the poll
                if not self._closed.is_set():
                    _lost(self._store, exc)
                    self._closed.wait(RETRY_S)

    def _committed(self, deadline: float) -> bool:
        """SQLite: whether ``PRAGMA data_version`` moved (another connection committed) before
        ``deadline`` (True at once on the wait that opens the connection)."""
        if self._conn is None:
            self._conn = _connect(self._store)
            if self._conn is None:
                self._interrupt.wait(max(0.0, deadline - time.monotonic()))
                return False
        try:
            while True:
                version = self._conn.execute("PRAGMA data_version").fetchone()[0]
                if version != self._version:
                    self._version = version
                    return True
                left = deadline - time.monotonic()
                if left <= 0 or self._interrupt.wait(min(left, SQLITE_LOOK_S)):
                    return False
        except Exception as exc:  # the file went away or broke: poll, open it again next time
            _lost(self._store, exc)
            self.close()
            self._interrupt.wait(max(0.0, deadline - time.monotonic()))
            return False

    def close(self) -> None:
        self._closed.set()
        reader, self._reader = self._reader, None
        if reader is not None:
            reader.join(5 * LOOK_S)
        conn, self._conn = self._conn, None
        if conn is not None:
            conn.close()


def _connect(store: Store) -> Any:
    """A DBAPI connection of the listener's own (a pooled one would be held for the process's
    life), or None (logged) when it cannot be had; SQLite: None for an in-memory database
    (another connection would open another, empty, database)."""
    engine = store.engine
    if not store.is_postgres and engine.url.database in (None, "", ":memory:"):
        return None
    try:
        cargs, cparams = engine.dialect.create_connect_args(engine.url)
        if store.is_postgres:
            cparams = {**cparams, "autocommit": True}
        else:  # (closed by whichever thread stops the worker); no transaction held open
            cparams = {**cparams, "check_same_thread": False, "isolation_level": None}
        return engine.dialect.loaded_dbapi.connect(*cargs, **cparams)
    except Exception as exc:
        if not store.outage.failed(_LISTENER, exc, holds=False):  # logged once, with the others
            log.warning("work listener cannot connect; polling", exc_info=True)
        return None


def _lost(store: Store, exc: Exception) -> None:
    if not store.outage.failed(_LISTENER, exc, holds=False):
        log.warning("work listener lost its connection; polling", exc_info=True)


__all__ = ["CHANNEL", "WorkListener"]
