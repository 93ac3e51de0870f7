"""``Store`` and ``Tx``: what upper layers hold instead of SQLAlchemy objects (DESIGN §2).

``store.begin()`` is a read-write transaction (claims, the tick, every write). On SQLite it
takes the write lock at BEGIN (``BEGIN IMMEDIATE``): a
deferred transaction that reads and then writes cannot wait for the lock (SQLite answers
``database is locked`` at once when another writer committed in between), while BEGIN IMMEDIATE
waits up to the busy timeout. On PostgreSQL it is a plain transaction. ``store.read()`` is
a transaction whose ``Tx.readonly`` is true: store write functions refuse it (the preview).
It reads one snapshot on both backends (a deferred SQLite read transaction; ``REPEATABLE READ,
READ ONLY`` on PostgreSQL, which also refuses any write at the database), so counts and pages
read by one call agree with each other.

Every transaction runs under ``map_db_errors()``: a lock conflict at BEGIN, in a statement or at
COMMIT surfaces as ``tocsin.errors.TransientStoreError`` (SPEC §9.5); other errors pass through.

``store.outage`` is the one :class:`~tocsin.store.outage.OutageLog` of whatever retries against
this store (worker, runs, ticker, listener): one outage, two lines. A write that fails for lack
of space (``StorageFull``) marks the store ``short_of_space``: from then on :meth:`Store.ping`
(``/readyz``) also checks that the database can grow (:meth:`Store.probe_space`) and clears the
mark once it can.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, Engine

from tocsin import messages
from tocsin.errors import StorageFull
from tocsin.store import pools
from tocsin.store.errors import map_db_errors
from tocsin.store.outage import OutageLog

# first statement of a PostgreSQL read: one snapshot for the whole transaction, writes refused
_PG_SNAPSHOT = "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY"
# what idle workers listen on (``store.notify``); the schema as payload: several notifications in
# one transaction are one
WORK_CHANNEL = "tocsin_work"
_PG_NOTIFY = f"SELECT pg_notify('{WORK_CHANNEL}', current_schema())"
# the space probe: a table of its own, one value of PROBE_BYTES, rolled back (nothing is kept)
PROBE_BYTES = 64 * 1024
_PROBE = "tocsin_space_probe"
_PROBE_SQL = {
    "sqlite": (
        f"CREATE TABLE {_PROBE} (filler BLOB)",
        f"INSERT INTO {_PROBE} VALUES (zeroblob({PROBE_BYTES}))",
    ),
    "postgresql": (  # temporary (needs no CREATE on the schema), stored as is (not compressed):
        # a new relation's pages are written to disk as it grows, which a full disk refuses
        f"CREATE TEMPORARY TABLE {_PROBE} (filler bytea)",
        f"ALTER TABLE {_PROBE} ALTER COLUMN filler SET STORAGE EXTERNAL",
        f"INSERT INTO {_PROBE} VALUES (decode(repeat('00', {PROBE_BYTES}), 'hex'))",
    ),
}


Writer = Callable[["Tx", list[Any]], None]
"""Inserts rows (``Tx.append``), all of them in one statement or a few."""


@dataclass(slots=True)
class Tx:
    """One open transaction. ``conn`` is for tocsin.store only."""

    conn: Connection
    is_postgres: bool
    readonly: bool = False
    wakes: bool = False  # it leaves work pending: idle workers are told at commit
    appends: dict[Writer, list[Any]] | None = None
    """A batch's transaction (``Store.begin(appends=True)``): rows appended to a feed
    (:meth:`append`) wait here, and each writer writes its own at :meth:`flush`."""

    def require_writable(self) -> None:
        if self.readonly:
            raise RuntimeError(messages.WRITE_IN_READ_ONLY)

    def append(self, writer: Writer, row: Any) -> None:
        """Insert ``row`` with ``writer`` (rows in, one statement): at once, or in a batch's
        transaction with the batch's other rows at its :meth:`flush` (nothing in it reads
        what it appends before then)."""
        self.require_writable()
        if self.appends is None:
            with map_db_errors():
                writer(self, [row])
            return
        self.appends.setdefault(writer, []).append(row)

    def flush(self) -> None:
        """Write the rows :meth:`append` kept, each writer's in one go."""
        if not self.appends:
            return
        pending, self.appends = self.appends, {}
        with map_db_errors():
            for writer, rows in pending.items():
                writer(self, rows)

    def wake_workers(self, made: bool = True) -> None:
        """This transaction leaves work pending (``made``: runs inserted or handed back): on
        PostgreSQL its commit notifies the workers listening (``store.notify``)."""
        self.wakes = self.wakes or made


class Store:
    """Owns the Engines; hands out transactions. ``engine`` serves every role unless
    ``engines`` gives a role one of its own (``store.pools``: the API's, the worker's, the
    ticker's pool)."""

    def __init__(self, engine: Engine, engines: Mapping[str, Engine] | None = None) -> None:
        self.engines = {role: engine for role in pools.ROLES} | dict(engines or {})
        self.is_postgres = engine.dialect.name == "postgresql"
        self.is_sqlite = engine.dialect.name == "sqlite"
        self.short_of_space = False  # a write failed for lack of space; see probe_space
        self.outage = OutageLog()  # what the loops and runs that retry against it log

    @property
    def engine(self) -> Engine:
        """The Engine of the role bound in this context (``pools.bound``)."""
        return self.engines[pools.current_role()]

    @contextmanager
    def _tx(self, *, immediate: bool, readonly: bool, appends: bool = False) -> Iterator[Tx]:
        try:
            with (
                map_db_errors(),
                self.engine.connect() as conn,
                self._tx_on(conn, immediate=immediate, readonly=readonly) as tx,
            ):
                if appends:
                    tx.appends = {}
                yield tx
                tx.flush()
        except StorageFull:
            self.short_of_space = True
            raise

    @contextmanager
    def _tx_on(self, conn: Connection, *, immediate: bool, readonly: bool) -> Iterator[Tx]:
        with map_db_errors():
            if self.is_sqlite and immediate:
                conn.info["tocsin_begin"] = "BEGIN IMMEDIATE"
            with conn.begin():
                if readonly and self.is_postgres:
                    conn.exec_driver_sql(_PG_SNAPSHOT)
                tx = Tx(conn=conn, is_postgres=self.is_postgres, readonly=readonly)
                yield tx
                if tx.wakes and self.is_postgres:  # delivered at commit (store.notify)
                    conn.exec_driver_sql(_PG_NOTIFY)

    @contextmanager
    def begin(self, *, appends: bool = False) -> Iterator[Tx]:
        """A read-write transaction; with ``appends``, a batch's: rows appended to a feed
        (``Tx.append``) are written together before it commits (``Tx.flush``)."""
        with self._tx(immediate=True, readonly=False, appends=appends) as tx:
            yield tx

    @contextmanager
    def read(self) -> Iterator[Tx]:
        with self._tx(immediate=False, readonly=True) as tx:
            yield tx

    def ping(self) -> None:
        """One trivial query: raises ``StoreUnavailable`` while the database does not answer;
        after a write failed for lack of space, ``StorageFull`` until :meth:`probe_space`
        passes."""
        with self.read() as tx:
            tx.conn.exec_driver_sql("SELECT 1")
        if self.short_of_space:
            self.probe_space()
            self.short_of_space = False

    def probe_space(self) -> None:
        """Raise ``StorageFull`` unless the database can grow by ``PROBE_BYTES``: a table of
        that much is written in a write transaction that is then rolled back."""
        with self.begin() as tx:
            for statement in _PROBE_SQL[self.engine.dialect.name]:
                tx.conn.exec_driver_sql(statement)
            tx.conn.rollback()

    def dispose(self) -> None:
        for engine in {id(e): e for e in self.engines.values()}.values():
            engine.dispose()
