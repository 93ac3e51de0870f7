"""A request that meets one of the API pool's PostgreSQL timeouts answers 503 ``{"detail": …}``
with ``Retry-After`` (``TOCSIN_API_LOCK_TIMEOUT_S``, ``TOCSIN_API_STATEMENT_TIMEOUT_S``), and a
route that does not read the locked table answers 200. The same against a real ``tocsin serve``,
with the worker's and the ticker's pools busy: ``tests/e2e/test_e2e_locks.py``.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import psycopg
import pytest
from api_support import Tenant, TestClient, table_url

from tocsin import messages
from tocsin.settings import Settings

pytestmark = pytest.mark.parametrize("backend", [pytest.param("postgresql", marks=pytest.mark.pg)])


@pytest.fixture
def timeouts() -> tuple[float, float]:
    """The API's (lock, statement) timeouts in seconds; a test parametrizes its own."""
    return Settings().api_lock_timeout_s, Settings().api_statement_timeout_s


@pytest.fixture
def settings(settings: Settings, timeouts: tuple[float, float]) -> Settings:
    lock, statement = timeouts
    return replace(settings, api_lock_timeout_s=lock, api_statement_timeout_s=statement)


@pytest.fixture
def locked(store_url: str, table: dict[str, Any]) -> Iterator[None]:
    """Another session holds ``LOCK TABLE records IN ACCESS EXCLUSIVE MODE``."""
    with psycopg.connect(store_url, connect_timeout=5) as holder:  # the test's schema
        holder.execute("LOCK TABLE records IN ACCESS EXCLUSIVE MODE")
        yield
        holder.rollback()


def _write(client: TestClient, tenant: Tenant, table: dict[str, Any]) -> tuple[Any, float]:
    started = time.monotonic()
    resp = client.post(
        table_url(tenant, table, "/records"), json={"data": {}}, headers=tenant.moderator
    )
    return resp, time.monotonic() - started


@pytest.mark.parametrize("timeouts", [(0.5, 10.0)])
def test_a_write_past_the_lock_timeout_is_503_and_other_routes_answer(
    client: TestClient, tenant: Tenant, table: dict[str, Any], locked: None
) -> None:
    resp, took = _write(client, tenant, table)
    assert resp.status_code == 503, resp.text
    assert took < 5
    assert resp.headers["Retry-After"] == "1"
    detail = messages.transient_conflict("canceling statement due to lock timeout")
    assert resp.json() == {"detail": detail}
    for url, headers in (
        (f"{tenant.prefix}/tables", tenant.moderator),
        (table_url(tenant, table, "/triggers"), tenant.moderator),
        ("/readyz", {}),
        ("/metrics", {}),
    ):
        started = time.monotonic()
        assert client.get(url, headers=headers).status_code == 200, url
        assert time.monotonic() - started < 1, url


@pytest.mark.parametrize("timeouts", [(0.0, 0.5)])  # no lock timeout: the statement's cancels
def test_a_write_past_the_statement_timeout_is_503(
    client: TestClient, tenant: Tenant, table: dict[str, Any], locked: None
) -> None:
    resp, took = _write(client, tenant, table)
    assert resp.status_code == 503, resp.text
    assert took < 5
    assert resp.headers["Retry-After"] == "1"
    detail = messages.statement_canceled("canceling statement due to statement timeout")
    assert resp.json() == {"detail": detail}
