"""API fixtures: an app over the conftest ``tocsin`` facade, a fixed clock and two tenants.

The clock is the ``get_now`` dependency, overridden to ``clock.now`` (STYLE R9); tests move it
by assigning ``clock.now``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from api_support import COLUMNS, Clock, Tenant, TestClient, make_tenant
from fastapi import FastAPI

from tocsin.api.app import create_app
from tocsin.api.deps import get_now
from tocsin.service import Tocsin


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def app(tocsin: Tocsin, clock: Clock) -> FastAPI:
    application = create_app(tocsin=tocsin)
    application.dependency_overrides[get_now] = lambda: clock.now
    return application


@pytest.fixture
def client(app: FastAPI) -> Iterator[TestClient]:
    with TestClient(app) as test_client:
        yield test_client


@pytest.fixture
def tenant(tocsin: Tocsin) -> Tenant:
    return make_tenant(tocsin)


@pytest.fixture
def other(tocsin: Tocsin) -> Tenant:
    """A second tenant: its tokens must never reach the first tenant's tables."""
    return make_tenant(tocsin)


@pytest.fixture
def table(client: TestClient, tenant: Tenant) -> dict[str, Any]:
    """A live table of ``tenant`` created through the API."""
    resp = client.post(
        f"{tenant.prefix}/tables",
        json={"name": "Cases", "columns": COLUMNS},
        headers=tenant.moderator,
    )
    assert resp.status_code == 201, resp.text
    body: dict[str, Any] = resp.json()
    return body
