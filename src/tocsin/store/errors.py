"""Driver errors → tocsin errors, at exactly one boundary (STYLE R8, SPEC §9.5).

Transient lock conflicts become :class:`tocsin.errors.TransientStoreError` (retryable):

- SQLite: ``database is locked`` / ``database table is locked`` / busy (SQLITE_BUSY, SQLITE_LOCKED)
- PostgreSQL: serialization_failure ``40001``, deadlock_detected ``40P01``,
  lock_not_available ``55P03``

Everything else passes through unchanged. The cause is kept (``raise … from exc``).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy.exc import DBAPIError

from tocsin.errors import TransientStoreError

PG_TRANSIENT_SQLSTATES = frozenset({"40001", "40P01", "55P03"})
SQLITE_TRANSIENT_CODES = frozenset({5, 6})  # SQLITE_BUSY, SQLITE_LOCKED (primary result codes)
SQLITE_TRANSIENT_TEXTS = ("database is locked", "database table is locked", "database is busy")


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


@contextmanager
def map_db_errors() -> Iterator[None]:
    """Translate transient driver errors into ``TransientStoreError``; usable as a decorator."""
    try:
        yield
    except TransientStoreError:
        raise
    except Exception as exc:
        if is_transient(exc):
            raise TransientStoreError(f"transient database conflict: {_driver_error(exc)}") from exc
        raise


__all__ = ["is_transient", "map_db_errors"]
