"""URL → SQLAlchemy Engine, with the SQLite pragmas tocsin relies on (DESIGN §5)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import make_url

SQLITE_BUSY_TIMEOUT_MS = 5000


def normalize_url(url: str) -> str:
    """``postgresql://`` and ``postgres://`` mean psycopg 3."""
    for prefix in ("postgresql://", "postgres://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix) :]
    return url


def create_store_engine(url: str) -> Engine:
    """An Engine for ``url``; SQLite gets WAL, a busy timeout, foreign keys and manual BEGIN."""
    url = normalize_url(url)
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite":
        return create_engine(url, pool_pre_ping=True, future=True)
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
        cur.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Any) -> None:
        mode = conn.info.pop("tocsin_begin", "BEGIN")
        conn.exec_driver_sql(mode)

    return engine
