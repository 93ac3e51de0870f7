"""Shared fixtures: the backend matrix (STYLE R12, DESIGN §6).

- ``backend``: ``"sqlite"`` always, ``"postgresql"`` (marker ``pg``) when ``TOCSIN_TEST_PG_URL``
  is set, e.g. ``postgresql://postgres@127.0.0.1:5432/test``. Unset: the PG leg is skipped, but
  under ``CI=true`` it FAILS (a missing service is a failure in CI).
- ``store_url``: a fresh, isolated database URL per test that carries everything, so
  ``Tocsin.open(store_url)`` works. SQLite: a file under ``tmp_path``. PostgreSQL: a fresh schema
  ``t_<hex>`` in the test database, selected by ``?options=-csearch_path%3Dt_<hex>`` on the URL,
  dropped after the test.
- ``store``: a migrated ``tocsin.store.Store`` on ``store_url``.
- ``tocsin``: ``Tocsin.open(store_url, settings=...)`` with an admin token and outbound HTTP
  allowed to 127.0.0.1; closed after the test.

Time is always explicit in tests: pass ``now=``; never sleep for the scheduler.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from typing import TYPE_CHECKING

import psycopg
import pytest

from tocsin.settings import Settings
from tocsin.store import Store, open_store

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


@pytest.fixture
def store_url(backend: str, tmp_path: os.PathLike[str]) -> Iterator[str]:
    """A fresh database URL for one test (SQLite file, or a PostgreSQL schema)."""
    if backend == "sqlite":
        yield f"sqlite:///{os.fspath(tmp_path)}/tocsin.db"
        return
    base = pg_base_url()
    schema = f"t_{uuid.uuid4().hex[:16]}"
    admin = _libpq_url(base)
    with psycopg.connect(admin, autocommit=True, connect_timeout=5) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    sep = "&" if "?" in base else "?"
    try:
        yield f"{base}{sep}options=-csearch_path%3D{schema}"
    finally:
        with psycopg.connect(admin, autocommit=True, connect_timeout=5) as conn:
            conn.execute("SET lock_timeout = '10s'")
            conn.execute(f"DROP SCHEMA {schema} CASCADE")


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
