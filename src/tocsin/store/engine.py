"""URL → SQLAlchemy Engine, with the SQLite pragmas tocsin relies on (DESIGN §5)."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Mapping
from typing import Any

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import make_url

from tocsin.store.pools import API, PoolSpec

SQLITE_BUSY_TIMEOUT_MS = 5000
# SQLite: how long a write transaction's BEGIN IMMEDIATE retries, 0.5-1 ms apart, before SQLite's
# own busy handler (its sleeps: 1, 2, 5, 10, 15, 20, 25… ms) waits the rest of the timeout
QUICK_BEGIN_WAITS = (0.0005,) * 20 + (0.001,) * 90  # ~100 ms


def normalize_url(url: str) -> str:
    """``postgresql://`` and ``postgres://`` mean psycopg 3."""
    for prefix in ("postgresql://", "postgres://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix) :]
    return url


def create_store_engine(
    url: str, pool: PoolSpec | None = None, *, sqlite_max_bytes: int | None = None
) -> Engine:
    """An Engine for ``url``; SQLite gets WAL, a busy timeout, foreign keys and manual BEGIN,
    and with ``sqlite_max_bytes`` (``TOCSIN_SQLITE_MAX_BYTES``) a cap on the file's size: SQLite
    keeps ``PRAGMA max_page_count`` per connection, so every connection sets it. Past the cap
    a write fails with SQLITE_FULL, as on a full disk (``StorageFull``). PostgreSQL with a
    ``pool`` (``store.pools``): that many connections, each with its ``lock_timeout`` and
    ``statement_timeout``; SQLite ignores it."""
    url = normalize_url(url)
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite":
        return _pg_engine(url, pool)
    engine = create_engine(url, future=True, connect_args={"check_same_thread": False})

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        # let SQLAlchemy's BEGIN (below) own transactions instead of pysqlite's implicit ones
        dbapi_conn.isolation_level = None
        cur = dbapi_conn.cursor()
        cur.execute(f"PRAGMA busy_timeout = {SQLITE_BUSY_TIMEOUT_MS}")
        cur.execute("PRAGMA foreign_keys = ON")
        if parsed.database not in (None, "", ":memory:"):
            cur.execute("PRAGMA journal_mode = WAL")
            cur.execute("PRAGMA synchronous = NORMAL")
        if sqlite_max_bytes is not None:
            page_size = cur.execute("PRAGMA page_size").fetchone()[0]
            cur.execute(f"PRAGMA max_page_count = {max(1, sqlite_max_bytes // page_size)}")
        cur.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Any) -> None:
        mode = conn.info.pop("tocsin_begin", "BEGIN")
        if mode == "BEGIN" or not _quick_begin(conn.connection.dbapi_connection, mode):
            conn.exec_driver_sql(mode)  # a read; else the rest of the wait, and its error

    return engine


def store_engines(
    url: str, pools: Mapping[str, PoolSpec] | None, *, sqlite_max_bytes: int | None = None
) -> tuple[Engine, dict[str, Engine]]:
    """A ``Store``'s Engines for ``url``: PostgreSQL, one per role of ``pools``; SQLite (or no
    ``pools``), one for every role (capped at ``sqlite_max_bytes``)."""
    if not pools or make_url(normalize_url(url)).get_backend_name() == "sqlite":
        return create_store_engine(url, sqlite_max_bytes=sqlite_max_bytes), {}
    engines = {role: create_store_engine(url, spec) for role, spec in pools.items()}
    return engines[API] if API in engines else create_store_engine(url), engines


def _pg_engine(url: str, pool: PoolSpec | None) -> Engine:
    if pool is None:
        return create_engine(url, pool_pre_ping=True, future=True)
    engine = create_engine(
        url, pool_pre_ping=True, future=True, pool_size=pool.size, max_overflow=0
    )
    limits = (pool.lock_timeout_s, pool.statement_timeout_s)
    timeouts = tuple(f"{max(1, round(s * 1000)) if s else 0}ms" for s in limits)

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        # session settings, kept by every transaction on this connection (0ms: none)
        autocommit, dbapi_conn.autocommit = dbapi_conn.autocommit, True
        try:
            dbapi_conn.execute(_PG_TIMEOUTS, timeouts)
        finally:
            dbapi_conn.autocommit = autocommit

    return engine


_PG_TIMEOUTS = (
    "SELECT set_config('lock_timeout', %s, false), set_config('statement_timeout', %s, false)"
)


def _quick_begin(raw: sqlite3.Connection, mode: str) -> bool:
    """``mode`` (``BEGIN IMMEDIATE``) tried every 0.5-1 ms while another connection holds the
    write lock (:data:`QUICK_BEGIN_WAITS`); whether it began. Under another process's writes
    (``tocsin scheduler`` beside ``tocsin worker``), SQLite's own sleeps overshoot each release
    by up to tens of ms: 10,000 fires and runs took 0.79-0.95 s, 0.66-0.88 s with this (paired,
    four runs each; ``bench/workflow_bench.py``'s two-process SQLite row)."""
    raw.execute("PRAGMA busy_timeout = 0")
    try:
        for delay in QUICK_BEGIN_WAITS:
            try:
                raw.execute(mode)
                return True
            except sqlite3.OperationalError as exc:
                if exc.sqlite_errorcode != sqlite3.SQLITE_BUSY:
                    return False  # the caller's try raises it as every statement's error
            time.sleep(delay)
        return False  # still held: the caller's try waits the rest of the busy timeout
    finally:
        raw.execute(f"PRAGMA busy_timeout = {SQLITE_BUSY_TIMEOUT_MS}")
