"""Helpers of the API tests: the fixed instant, tenants with tokens, URLs."""

from __future__ import annotations

import uuid
import warnings
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from tocsin.service import Tocsin

# Starlette 1.x deprecates its TestClient over httpx (in favour of httpx2, not installed here);
# the warning fires once, at import, so import it here before anything else does.
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

NOW = datetime(2026, 8, 27, 5, 2, 13, tzinfo=UTC)
ADMIN = {"X-ADMIN-TOKEN": "admin-secret"}
COLUMNS = {"Title": "text", "Due": "datetime", "Status": "text", "Points": "number"}


@dataclass
class Clock:
    now: datetime = NOW


@dataclass
class Tenant:
    """A chatroom scope with a moderator and a member token, and its route prefix."""

    scope_id: str
    moderator: dict[str, str]
    member: dict[str, str]

    @property
    def prefix(self) -> str:
        return f"/private/module/custom_tables/chatroom/{self.scope_id}"


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def make_tenant(tocsin: Tocsin) -> Tenant:
    scope_id = str(uuid.uuid4())
    mod = tocsin.create_token(scope="chatroom", scope_id=scope_id, role="moderator", now=NOW)
    mem = tocsin.create_token(scope="chatroom", scope_id=scope_id, role="member", now=NOW)
    return Tenant(scope_id=scope_id, moderator=bearer(mod), member=bearer(mem))


__all__ = ["ADMIN", "COLUMNS", "NOW", "Clock", "Tenant", "TestClient", "bearer", "make_tenant"]


def table_url(tenant: Tenant, table: dict[str, Any], suffix: str = "") -> str:
    return f"{tenant.prefix}/tables/{table['id']}{suffix}"


def put_triggers(
    client: TestClient,
    tenant: Tenant,
    table: dict[str, Any],
    triggers: Any,
    headers: dict[str, str] | None = None,
) -> Any:
    """``PUT …/triggers`` with ``{"triggers": triggers}`` as the tenant's moderator (or
    ``headers``); the response."""
    url = table_url(tenant, table, "/triggers")
    return client.put(url, json={"triggers": triggers}, headers=headers or tenant.moderator)


def save_triggers(
    client: TestClient, tenant: Tenant, table: dict[str, Any], triggers: Any
) -> list[dict[str, Any]]:
    """:func:`put_triggers`, which must answer 200; the saved triggers."""
    resp = put_triggers(client, tenant, table, triggers)
    assert resp.status_code == 200, resp.text
    saved: list[dict[str, Any]] = resp.json()["triggers"]
    return saved
