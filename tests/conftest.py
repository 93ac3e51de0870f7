"""Shared fixtures: the backend matrix (STYLE R12, DESIGN §6).

- ``backend``: ``"sqlite"`` always, ``"postgresql"`` (marker ``pg``) when ``TOCSIN_TEST_PG_URL``
  is set, e.g. ``postgresql://postgres@127.0.0.1:5432/test``. Unset: the PG leg is skipped, but
  under ``CI=true`` it FAILS (a missing service is a failure in CI).
- ``store_url``: a fresh, isolated database URL per test that carries everything, so
  ``Tocsin.open(store_url)`` works. SQLite: a file under ``tmp_path``. PostgreSQL: a fresh schema
  ``t_<hex>`` in the test database, selected by ``?options=-csearch_path%3Dt_<hex>`` on the URL,
  dropped after the test.
- Templates (built once per session, per backend, on first use): a test that also asks for
  ``store`` or ``tocsin`` gets its fresh database already at head, copied from a template that
  ``upgrade_to_head`` migrated once, so opening it finds the version table at head and Alembic
  runs no DDL. SQLite: a copy of the migrated template file. PostgreSQL: the statements the
  template's migration executed (captured at the driver, reads left out) replayed in the test's
  fresh schema, one transaction. A test that asks only for ``store_url`` still gets an EMPTY
  database (it may be testing migration itself). Why not ``CREATE DATABASE … TEMPLATE``: the copy
  is fast, but every ``DROP DATABASE`` forces a checkpoint (0.4–16 s each measured here).
- ``store``: a migrated ``tocsin.store.Store`` on ``store_url``.
- ``tocsin``: ``Tocsin.open(store_url, settings=...)`` with an admin token and outbound HTTP
  allowed to 127.0.0.1; closed after the test.

Time is always explicit in tests: pass ``now=``; never sleep for the scheduler.
"""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import psycopg
import pytest
from sqlalchemy import event

from tocsin.settings import Settings
from tocsin.store import Store, open_store
from tocsin.store.engine import create_store_engine
from tocsin.store.migrate import upgrade_to_head

if TYPE_CHECKING:  # imported lazily below: a broken facade must not break store-only tests
    from tocsin.service import Tocsin

PG_ENV = "TOCSIN_TEST_PG_URL"
ADMIN_TOKEN = "admin-secret"


def pg_base_url() -> str:
    """The PostgreSQL test URL; skip (or fail under CI=true) when it is not configured."""
    url = os.environ.get(PG_ENV, "").strip()
    if url:
        return url
    reason = f"PostgreSQL leg needs {PG_ENV} (e.g. postgresql://postgres@127.0.0.1:5432/test)"
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"CI=true: {reason}", pytrace=False)
    pytest.skip(reason)


def _libpq_url(url: str) -> str:
    """The same URL without a SQLAlchemy driver suffix, for psycopg.connect."""
    scheme, sep, rest = url.partition("://")
    return scheme.split("+", 1)[0] + sep + rest


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.pg)])
def backend(request: pytest.FixtureRequest) -> str:
    """Which database the test runs on."""
    name: str = request.param
    if name == "postgresql":
        pg_base_url()
    return name


def _schema_url(base: str, schema: str) -> str:
    sep = "&" if "?" in base else "?"
    return f"{base}{sep}options=-csearch_path%3D{schema}"


def _drop_schema(admin: str, schema: str) -> None:
    with psycopg.connect(admin, autocommit=True, connect_timeout=5) as conn:
        conn.execute("SET lock_timeout = '10s'")
        conn.execute(f"DROP SCHEMA {schema} CASCADE")


Statement = tuple[str, Any, bool]  # (SQL as sent to the driver, its parameters, executemany)


def _migrate_capturing(url: str) -> list[Statement]:
    """Migrate ``url`` to head with ``upgrade_to_head`` and return the statements it sent."""
    store = Store(create_store_engine(url))
    try:
        with store.read():
            pass  # the dialect's first-connect queries are not part of the migration
        sent: list[Statement] = []

        def capture(
            _conn: Any, _cur: Any, statement: str, params: Any, _ctx: Any, many: bool
        ) -> None:
            if not statement.lstrip().upper().startswith("SELECT"):  # reads fed Python only
                sent.append((statement, params, many))

        event.listen(store.engine, "before_cursor_execute", capture)
        upgrade_to_head(store)
        return sent
    finally:
        store.dispose()


@pytest.fixture(scope="session")
def _pg_template() -> Iterator[list[Statement]]:
    """PostgreSQL: a schema migrated once per session; the statements that built it."""
    base = pg_base_url()
    admin = _libpq_url(base)
    schema = f"tocsin_tmpl_{os.getpid()}_{uuid.uuid4().hex[:6]}"
    with psycopg.connect(admin, autocommit=True, connect_timeout=5) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    try:
        yield _migrate_capturing(_schema_url(base, schema))
    finally:
        _drop_schema(admin, schema)


@pytest.fixture(scope="session")
def _sqlite_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """SQLite: a database file migrated once per session (closed: its WAL checkpointed)."""
    path = tmp_path_factory.mktemp("tocsin_template") / "tocsin.db"
    open_store(f"sqlite:///{path}").dispose()
    return path


def _replay(conn: psycopg.Connection[Any], statements: list[Statement]) -> None:
    with conn.cursor() as cur:
        for statement, params, many in statements:
            args = dict(params) if isinstance(params, Mapping) else params
            if many:
                cur.executemany(statement, args)
            else:
                cur.execute(statement, args)


@pytest.fixture
def store_url(
    backend: str, tmp_path: os.PathLike[str], request: pytest.FixtureRequest
) -> Iterator[str]:
    """A fresh database URL for one test (SQLite file, or a PostgreSQL schema); at head when
    the test also opens it through ``store`` or ``tocsin`` (module docstring)."""
    at_head = not {"store", "tocsin"}.isdisjoint(request.fixturenames)
    if backend == "sqlite":
        path = Path(os.fspath(tmp_path)) / "tocsin.db"
        if at_head:
            shutil.copyfile(request.getfixturevalue("_sqlite_template"), path)
        yield f"sqlite:///{path}"
        return
    base = pg_base_url()
    template = request.getfixturevalue("_pg_template") if at_head else None
    schema = f"t_{uuid.uuid4().hex[:16]}"
    admin = _libpq_url(base)
    with psycopg.connect(admin, autocommit=True, connect_timeout=5) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
        if template is not None:
            with conn.transaction():
                conn.execute(f"SET LOCAL search_path TO {schema}")
                _replay(conn, template)
    try:
        yield _schema_url(base, schema)
    finally:
        _drop_schema(admin, schema)


@pytest.fixture
def store(store_url: str) -> Iterator[Store]:
    """A Store migrated to head on a fresh database."""
    opened = open_store(store_url)
    try:
        yield opened
    finally:
        opened.dispose()


@pytest.fixture
def settings(store_url: str) -> Settings:
    """Settings for the ``tocsin`` fixture (admin token, loopback HTTP allowed)."""
    return Settings(database_url=store_url, admin_token=ADMIN_TOKEN, outbound_allow=("127.0.0.1",))


@pytest.fixture
def tocsin(store_url: str, settings: Settings) -> Iterator[Tocsin]:
    """The facade on a fresh database, closed after the test."""
    from tocsin.service import Tocsin

    opened = Tocsin.open(store_url, settings=settings)
    try:
        yield opened
    finally:
        opened.close()
