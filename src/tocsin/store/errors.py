"""Driver errors → tocsin errors, at exactly one boundary (STYLE R8, SPEC §9.5).

Transient lock conflicts become :class:`tocsin.errors.TransientStoreError` (retryable):

- SQLite: ``database is locked`` / ``database table is locked`` / busy (SQLITE_BUSY, SQLITE_LOCKED)
- PostgreSQL: serialization_failure ``40001``, deadlock_detected ``40P01``,
  lock_not_available ``55P03``

A database that cannot be reached becomes :class:`tocsin.errors.StoreUnavailable` (503):

- PostgreSQL: a connection refused or lost (SQLSTATE class ``08``, or none), a server shutting
  down or starting up (``57P01``, ``57P02``, ``57P03``), a disconnect SQLAlchemy detected, a
  pool that could not hand out a connection in time
- SQLite: a database file that cannot be opened (SQLITE_CANTOPEN)

A database with no room for a write becomes :class:`tocsin.errors.StorageFull` (507):

- SQLite: SQLITE_FULL (a full disk, or ``TOCSIN_SQLITE_MAX_BYTES`` reached)
- PostgreSQL: disk_full ``53100``

Everything else passes through unchanged. The cause is kept (``raise … from exc``).
"""

from __future__ import annotations

import sqlite3
import sys
from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy.exc import DBAPIError
from sqlalchemy.exc import TimeoutError as PoolTimeout

from tocsin import messages
from tocsin.errors import StorageFull, StoreUnavailable, TransientStoreError

PG_TRANSIENT_SQLSTATES = frozenset({"40001", "40P01", "55P03"})
SQLITE_TRANSIENT_CODES = frozenset({5, 6})  # SQLITE_BUSY, SQLITE_LOCKED (primary result codes)
SQLITE_TRANSIENT_TEXTS = ("database is locked", "database table is locked", "database is busy")
PG_UNAVAILABLE_SQLSTATES = frozenset({"57P01", "57P02", "57P03"})  # shutdown, crash, starting
SQLITE_CANTOPEN = 14


def _driver_error(exc: BaseException) -> BaseException:
    """The DBAPI exception under a SQLAlchemy wrapper (or ``exc`` itself)."""
    if isinstance(exc, DBAPIError) and exc.orig is not None:
        return exc.orig
    return exc


def _sqlite_transient(exc: sqlite3.Error) -> bool:
    code = getattr(exc, "sqlite_errorcode", None)
    if isinstance(code, int) and (code & 0xFF) in SQLITE_TRANSIENT_CODES:
        return True
    text = str(exc).lower()
    return any(marker in text for marker in SQLITE_TRANSIENT_TEXTS)


def is_transient(exc: BaseException) -> bool:
    """True when ``exc`` is a lock conflict worth retrying (SPEC §9.5)."""
    if isinstance(exc, TransientStoreError):
        return True
    orig = _driver_error(exc)
    if isinstance(orig, sqlite3.OperationalError):
        return _sqlite_transient(orig)
    sqlstate = getattr(orig, "sqlstate", None)
    return isinstance(sqlstate, str) and sqlstate in PG_TRANSIENT_SQLSTATES


def is_unavailable(exc: BaseException) -> bool:
    """True when ``exc`` says the database cannot be reached (not that a statement failed)."""
    if isinstance(exc, StoreUnavailable | PoolTimeout):
        return True
    if isinstance(exc, DBAPIError) and exc.connection_invalidated:
        return True
    orig = _driver_error(exc)
    if isinstance(orig, sqlite3.OperationalError):
        code = getattr(orig, "sqlite_errorcode", None)
        return isinstance(code, int) and (code & 0xFF) == SQLITE_CANTOPEN
    psycopg = sys.modules.get("psycopg")  # not imported: not a psycopg error (SQLite-only runs)
    if psycopg is not None and isinstance(orig, psycopg.OperationalError):
        sqlstate = orig.sqlstate
        return sqlstate is None or sqlstate[:2] == "08" or sqlstate in PG_UNAVAILABLE_SQLSTATES
    return False


# ---- no room to write (507): neither a lock conflict nor an outage ----
SQLITE_FULL = 13
PG_DISK_FULL = "53100"


def is_storage_full(exc: BaseException) -> bool:
    """True when ``exc`` says the database has no room for the write (SQLITE_FULL, 53100)."""
    if isinstance(exc, StorageFull):
        return True
    orig = _driver_error(exc)
    if isinstance(orig, sqlite3.Error):
        code = getattr(orig, "sqlite_errorcode", None)
        return isinstance(code, int) and (code & 0xFF) == SQLITE_FULL
    return getattr(orig, "sqlstate", None) == PG_DISK_FULL


@contextmanager
def map_db_errors() -> Iterator[None]:
    """Translate transient driver errors into ``TransientStoreError``, an unreachable
    database into ``StoreUnavailable`` and a full one into ``StorageFull``; usable as a
    decorator."""
    try:
        yield
    except (TransientStoreError, StoreUnavailable, StorageFull):
        raise
    except Exception as exc:
        if is_storage_full(exc):
            raise StorageFull(messages.STORAGE_FULL) from exc
        if is_transient(exc):
            raise TransientStoreError(messages.transient_conflict(_driver_error(exc))) from exc
        if is_unavailable(exc):
            raise StoreUnavailable(messages.DATABASE_UNAVAILABLE) from exc
        raise


__all__ = ["is_storage_full", "is_transient", "is_unavailable", "map_db_errors"]
