"""Alembic, run programmatically: ``upgrade_to_head(store)`` (DESIGN §5).

The Alembic ``Config`` is built in code (no ``alembic.ini``); ``script_location`` is the
``migrations`` directory beside this module and the open connection travels to ``env.py``
through ``config.attributes["connection"]``. That works for SQLite files and PostgreSQL alike.

Concurrency: several processes may open the same database at once (``tocsin serve`` next to
``tocsin worker``). The whole upgrade runs in one transaction that first serialises migrators:

- PostgreSQL: ``pg_advisory_xact_lock`` keyed by the current schema (released at commit); DDL is
  transactional, so the second process finds the version table at head and does nothing.
- SQLite: ``BEGIN IMMEDIATE`` takes the write lock up front (the connection's busy_timeout waits
  for it); a lock that still times out is retried a few times.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import Connection, text

from tocsin.store.errors import is_transient
from tocsin.store.tx import Store

if TYPE_CHECKING:
    from alembic.config import Config

# The newest revision shipped (a test checks it is Alembic's head): a database already there is
# opened without importing Alembic (about 4 MB a serving process keeps otherwise)
HEAD_REVISION = "0036_oneclaim"

MIGRATIONS_DIR = Path(__file__).resolve().with_name("migrations")
MIGRATE_ATTEMPTS = 3
_PG_LOCK = text(
    "SELECT pg_advisory_xact_lock(hashtextextended('tocsin-migrate:' || current_schema(), 0))"
)
# a migration waits for another process's and may rewrite big tables: no pool's timeouts
_PG_NO_TIMEOUTS = text(
    "SELECT set_config('lock_timeout', '0', true), set_config('statement_timeout', '0', true)"
)


def alembic_config(connection: Connection | None = None) -> Config:
    """An Alembic Config for tocsin's migrations, optionally bound to ``connection``."""
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    config.set_main_option("path_separator", "os")
    if connection is not None:
        config.attributes["connection"] = connection
    return config


def head_revision() -> str | None:
    """The newest revision shipped with this package (Alembic's view of the scripts)."""
    from alembic.script import ScriptDirectory

    return ScriptDirectory.from_config(alembic_config()).get_current_head()


def current_revision(store: Store) -> str | None:
    """The revision the database is at (None before the first migration)."""
    from alembic.runtime.migration import MigrationContext

    with store.engine.connect() as conn:
        return MigrationContext.configure(conn).get_current_revision()


def _at_head(store: Store) -> bool:
    """Whether the database's version table already says :data:`HEAD_REVISION` (False when it
    has none yet, or on any error: the full upgrade then decides)."""
    try:
        with store.engine.connect() as conn:
            found = conn.execute(text("SELECT version_num FROM alembic_version")).scalars().all()
    except Exception:
        return False
    return found == [HEAD_REVISION]


def _upgrade_once(store: Store) -> None:
    from alembic import command

    with store.begin() as tx:
        if tx.is_postgres:
            tx.conn.execute(_PG_NO_TIMEOUTS)
            tx.conn.execute(_PG_LOCK)
        command.upgrade(alembic_config(tx.conn), "head")


def upgrade_to_head(store: Store) -> None:
    """Migrate ``store`` to head; safe when several processes do it at once."""
    if _at_head(store):
        return
    for attempt in range(1, MIGRATE_ATTEMPTS + 1):
        try:
            _upgrade_once(store)
            return
        except Exception as exc:
            if store.is_postgres or attempt == MIGRATE_ATTEMPTS or not is_transient(exc):
                raise


__all__ = [
    "HEAD_REVISION",
    "MIGRATIONS_DIR",
    "alembic_config",
    "current_revision",
    "head_revision",
    "upgrade_to_head",
]
