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
- PostgreSQL schemas at head are recycled within a worker (``_PgSchemas``): after the test, the
  tables it wrote to (a heap of more than zero bytes) are truncated, identities restarted, and the
  schema goes back to the worker's pool only if its catalog fingerprint (relations, sizes,
  planner statistics, columns, indexes, constraints, triggers, functions, the version row) is
  exactly what it was when the template's statements built it; anything else (a test's DDL, an
  ``ANALYZE``) drops it. So the next test sees what a freshly replayed schema would show. Why: a
  replay is ~20 CREATE TABLE and ~30 CREATE INDEX, 0.13 s on clean catalogs and 0.22 s (plus
  0.04 s to create and drop the schema) measured on the CI server, whose catalogs bloat with
  every schema created and dropped while autovacuum is off; a recycle is ~0.05 s (truncate,
  fingerprint) and leaves a few dead catalog rows instead of hundreds.
- ``store``: a migrated ``tocsin.store.Store`` on ``store_url``.
- ``tocsin``: ``Tocsin.open(store_url, settings=...)`` with an admin token and outbound HTTP
  allowed to 127.0.0.1; closed after the test.

Time is always explicit in tests: pass ``now=``; never sleep for the scheduler.
"""

from __future__ import annotations

import dataclasses
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


# one row per object of the schema, in a stable order: what "exactly as built" compares
_FINGERPRINT = """
SELECT md5(coalesce(string_agg(line, ' | ' ORDER BY line), '')) FROM (
  SELECT concat_ws(' ', 'rel', c.relname, c.relkind, c.reloptions::text, c.relpages, c.reltuples,
                   c.relallvisible, pg_relation_size(c.oid)) AS line
    FROM pg_class c WHERE c.relnamespace = %(ns)s::regnamespace
  UNION ALL
  SELECT concat_ws(' ', 'col', c.relname, a.attname, format_type(a.atttypid, a.atttypmod),
                   a.attnotnull, pg_get_expr(d.adbin, d.adrelid))
    FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
    LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
   WHERE c.relnamespace = %(ns)s::regnamespace AND a.attnum > 0 AND NOT a.attisdropped
  UNION ALL
  SELECT concat_ws(' ', 'idx', pg_get_indexdef(i.indexrelid))
    FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid
   WHERE c.relnamespace = %(ns)s::regnamespace
  UNION ALL
  SELECT concat_ws(' ', 'con', conname, pg_get_constraintdef(oid))
    FROM pg_constraint WHERE connamespace = %(ns)s::regnamespace
  UNION ALL
  SELECT concat_ws(' ', 'stat', s.starelid::regclass, s.staattnum)
    FROM pg_statistic s JOIN pg_class c ON c.oid = s.starelid
   WHERE c.relnamespace = %(ns)s::regnamespace
  UNION ALL
  SELECT concat_ws(' ', 'trg', t.tgname, t.tgrelid::regclass)
    FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
   WHERE c.relnamespace = %(ns)s::regnamespace
  UNION ALL
  SELECT concat_ws(' ', 'fn', p.oid::regprocedure) FROM pg_proc p
   WHERE p.pronamespace = %(ns)s::regnamespace
  UNION ALL
  SELECT concat_ws(' ', 'type', t.typname) FROM pg_type t
   WHERE t.typnamespace = %(ns)s::regnamespace
) AS catalog
"""


class _PgSchemas:
    """One worker's PostgreSQL schemas at head: built by replaying the template's statements,
    recycled after each test when it is safe to (module docstring), dropped at the session's
    end."""

    def __init__(self, admin: str, template: list[Statement]) -> None:
        self.admin = admin
        self.template = template
        self.free: list[tuple[str, str]] = []  # (schema, its fingerprint as built)
        # each index's planner figures (relpages, reltuples) as CREATE INDEX left them
        self.index_figures: list[tuple[str, int, float]] | None = None

    def take(self) -> tuple[str, str]:
        if self.free:
            return self.free.pop()
        schema = f"t_{uuid.uuid4().hex[:16]}"
        with psycopg.connect(self.admin, autocommit=True, connect_timeout=5) as conn:
            conn.execute(f"CREATE SCHEMA {schema}")
            with conn.transaction():
                conn.execute(f"SET LOCAL search_path TO {schema}")
                _replay(conn, self.template)
            if self.index_figures is None:  # alike in every schema the template built
                self.index_figures = conn.execute(_INDEX_FIGURES, (schema,)).fetchall()
            return schema, _fingerprint(conn, schema)

    def give_back(self, schema: str, built: str) -> None:
        """Back to the pool exactly as built, or dropped when that cannot be shown."""
        try:
            with psycopg.connect(self.admin, autocommit=True, connect_timeout=5) as conn:
                conn.execute("SET lock_timeout = '10s'")
                _truncate_written(conn, schema, self.index_figures or [])
                clean = _fingerprint(conn, schema) == built
        except psycopg.Error:
            clean = False
        if clean:
            self.free.append((schema, built))
        else:
            _drop_schema(self.admin, schema)

    def close(self) -> None:
        while self.free:
            _drop_schema(self.admin, self.free.pop()[0])


def _fingerprint(conn: psycopg.Connection[Any], schema: str) -> str:
    """The schema's catalog and version row, as one string (raises if the version table is gone)."""
    digest = conn.execute(_FINGERPRINT, {"ns": schema}).fetchone()
    version = conn.execute(
        f"SELECT array_agg(version_num) FROM {schema}.alembic_version"
    ).fetchone()
    return f"{digest} {version}"


_INDEX_FIGURES = (
    "SELECT relname, relpages, reltuples FROM pg_class"
    " WHERE relnamespace = %s::regnamespace AND relkind = 'i'"
)


def _truncate_written(
    conn: psycopg.Connection[Any], schema: str, index_figures: list[tuple[str, int, float]]
) -> None:
    """Truncate the tables a test wrote to (their heap grew; a fresh one is 0 bytes) and restart
    the sequences it used; the version table is left alone (the fingerprint reads it).

    TRUNCATE leaves an index's planner figures at "never counted" (reltuples -1), where CREATE
    INDEX on an empty table records "counted, empty" (0 tuples; 0 pages on PostgreSQL 15, 1 on
    16): put back what the replay recorded, so a partial index is estimated as in a fresh
    schema, whatever the server's version."""
    written = conn.execute(
        "SELECT c.relname FROM pg_class c WHERE c.relnamespace = %s::regnamespace"
        " AND c.relkind = 'r' AND c.relname <> 'alembic_version'"
        " AND pg_relation_size(c.oid) > 0",
        (schema,),
    ).fetchall()
    used = conn.execute(
        "SELECT sequencename FROM pg_sequences WHERE schemaname = %s AND last_value IS NOT NULL",
        (schema,),
    ).fetchall()
    if written:
        with conn.transaction():
            tables = ", ".join(f"{schema}.{name}" for (name,) in written)
            conn.execute(f"TRUNCATE {tables} CASCADE")
            names, pages, tuples = zip(*index_figures, strict=True) if index_figures else ((),) * 3
            conn.execute(
                "UPDATE pg_class c SET relpages = f.pages, reltuples = f.tuples"
                " FROM unnest(%s::text[], %s::int[], %s::real[]) AS f(name, pages, tuples)"
                " WHERE c.relnamespace = %s::regnamespace AND c.relname = f.name"
                " AND c.relkind = 'i' AND c.reltuples = -1",
                (list(names), list(pages), list(tuples), schema),
            )
    for (name,) in used:  # even when its rows were deleted or their insert rolled back
        conn.execute(f"ALTER SEQUENCE {schema}.{name} RESTART")


@pytest.fixture(scope="session")
def _pg_schemas(_pg_template: list[Statement]) -> Iterator[_PgSchemas]:
    """This worker's pool of PostgreSQL schemas at head (module docstring)."""
    pool = _PgSchemas(_libpq_url(pg_base_url()), _pg_template)
    try:
        yield pool
    finally:
        pool.close()


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
    if at_head:
        schemas: _PgSchemas = request.getfixturevalue("_pg_schemas")
        schema, built = schemas.take()
        try:
            yield _schema_url(base, schema)
        finally:
            schemas.give_back(schema, built)
        return
    schema = f"t_{uuid.uuid4().hex[:16]}"
    admin = _libpq_url(base)
    with psycopg.connect(admin, autocommit=True, connect_timeout=5) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
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
def settings(store_url: str, request: pytest.FixtureRequest) -> Settings:
    """Settings for the ``tocsin`` fixture (admin token, loopback HTTP allowed), with the fields
    a test's ``support.settings.with_settings(...)`` gives."""
    base = Settings(database_url=store_url, admin_token=ADMIN_TOKEN, outbound_allow=("127.0.0.1",))
    return dataclasses.replace(base, **getattr(request, "param", {}))


@pytest.fixture
def tocsin(store_url: str, settings: Settings) -> Iterator[Tocsin]:
    """The facade on a fresh database, closed after the test."""
    from tocsin.service import Tocsin

    opened = Tocsin.open(store_url, settings=settings)
    try:
        yield opened
    finally:
        opened.close()
