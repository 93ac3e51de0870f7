"""Auth on every route (SPEC §15, §6): bearer tokens per scope and role; X-ADMIN-TOKEN on root.

- no token or an unknown token → 401 with ``WWW-Authenticate: Bearer``
- another tenant's token → 403; a member on a moderator route → 403
- a table of another scope under my scope's path → 404 (my scope owns no such table)
- root routes: missing, wrong or unconfigured admin token → 403 with the SPEC text
"""

from __future__ import annotations

from typing import Any

import pytest
from api_support import ADMIN, Tenant, table_url
from fastapi.testclient import TestClient

from tocsin import messages
from tocsin.api.app import create_app
from tocsin.service import Tocsin
from tocsin.settings import Settings

RUN = "00000000-0000-4000-8000-000000000000"

# (method, suffix under the table, body); every one is a moderator route
MODERATOR_TABLE_ROUTES: list[tuple[str, str, Any]] = [
    ("POST", "/trash", None),
    ("POST", "/restore", None),
    ("POST", "/records", {"data": {"Title": "x"}}),
    ("PATCH", f"/records/{RUN}", {"data": {"Title": "x"}}),
    ("POST", f"/records/{RUN}/trash", None),
    ("POST", f"/records/{RUN}/restore", None),
    ("GET", "/triggers", None),
    ("PUT", "/triggers", {"triggers": []}),
    ("GET", "/triggers/schedule-preview", None),
    ("GET", "/trigger-runs", None),
    ("GET", f"/trigger-runs/{RUN}", None),
    ("POST", f"/trigger-runs/{RUN}/retry", None),
    ("GET", "/staged-changes", None),
    ("POST", f"/staged-changes/{RUN}/approve", None),
    ("POST", f"/staged-changes/{RUN}/reject", None),
]
MEMBER_TABLE_ROUTES: list[tuple[str, str, Any]] = [("GET", "", None), ("GET", "/records", None)]
ALL_TABLE_ROUTES = MODERATOR_TABLE_ROUTES + MEMBER_TABLE_ROUTES


def call(client: TestClient, method: str, url: str, body: Any, headers: dict[str, str]) -> Any:
    return client.request(method, url, json=body, headers=headers)


def test_missing_and_unknown_tokens_are_401(
    client: TestClient, tenant: Tenant, table: dict[str, Any]
) -> None:
    for method, suffix, body in ALL_TABLE_ROUTES:
        url = table_url(tenant, table, suffix)
        for headers in (
            {},
            {"Authorization": "Bearer not-a-token"},
            {"Authorization": "Basic eA=="},
        ):
            resp = call(client, method, url, body, headers)
            assert resp.status_code == 401, (method, suffix, headers, resp.text)
            assert resp.json() == {"detail": messages.TOKEN_INVALID}
            assert resp.headers["WWW-Authenticate"] == "Bearer"


def test_another_tenants_token_is_403(
    client: TestClient, tenant: Tenant, other: Tenant, table: dict[str, Any]
) -> None:
    for method, suffix, body in ALL_TABLE_ROUTES:
        resp = call(client, method, table_url(tenant, table, suffix), body, other.moderator)
        assert resp.status_code == 403, (method, suffix)
        assert resp.json() == {"detail": messages.SCOPE_FORBIDDEN}


def test_a_member_on_a_moderator_route_is_403(
    client: TestClient, tenant: Tenant, table: dict[str, Any]
) -> None:
    for method, suffix, body in MODERATOR_TABLE_ROUTES:
        resp = call(client, method, table_url(tenant, table, suffix), body, tenant.member)
        assert resp.status_code == 403, (method, suffix)
        assert resp.json() == {"detail": messages.role_required("moderator")}


def test_a_member_may_read(client: TestClient, tenant: Tenant, table: dict[str, Any]) -> None:
    for method, suffix, body in MEMBER_TABLE_ROUTES:
        resp = call(client, method, table_url(tenant, table, suffix), body, tenant.member)
        assert resp.status_code == 200, (method, suffix, resp.text)


def test_a_member_may_not_create_tables(client: TestClient, tenant: Tenant) -> None:
    resp = client.post(
        f"{tenant.prefix}/tables", json={"name": "T", "columns": {}}, headers=tenant.member
    )
    assert resp.status_code == 403


def test_a_table_of_another_scope_under_my_path_is_404(
    client: TestClient, tenant: Tenant, other: Tenant, table: dict[str, Any]
) -> None:
    for method, suffix, body in ALL_TABLE_ROUTES:
        url = f"{other.prefix}/tables/{table['id']}{suffix}"
        resp = call(client, method, url, body, other.moderator)
        assert resp.status_code == 404, (method, suffix)
        assert resp.json() == {"detail": messages.TABLE_NOT_FOUND}


def test_messages_need_a_token_of_that_chatroom(
    client: TestClient, tenant: Tenant, other: Tenant
) -> None:
    url = f"{tenant.prefix}/messages"
    assert client.get(url).status_code == 401
    assert client.get(url, headers=other.member).status_code == 403
    assert client.get(url, headers=tenant.member).status_code == 200
    assert client.get(url, headers=tenant.moderator).status_code == 200


def test_a_token_for_one_scope_kind_does_not_open_another(
    client: TestClient, tocsin: Tocsin, tenant: Tenant
) -> None:
    token = tocsin.create_token(scope="workspace", scope_id=tenant.scope_id, role="moderator")
    resp = client.get(f"{tenant.prefix}/messages", headers={"Authorization": f"Bearer {token}"})
    assert resp.status_code == 403


def test_tokens_are_stored_hashed(tocsin: Tocsin) -> None:
    from tocsin.service.auth import token_digest

    token = tocsin.create_token(
        scope="user", scope_id="6f1c2a9e-0b7d-4c1e-9a53-2f0e8d7c4b11", role="member"
    )
    principal = tocsin.verify_token(token)
    assert principal is not None and principal.role == "member"
    assert len(token_digest(token)) == 64 and token_digest(token) != token
    assert tocsin.verify_token(token + "x") is None


ROOT_ROUTES = ["/root/custom-tables/run-due-triggers", "/root/custom-tables/trigger-runs/requeue"]


def test_root_routes_refuse_a_missing_or_wrong_admin_token(client: TestClient) -> None:
    for path in ROOT_ROUTES:
        for headers in ({}, {"X-ADMIN-TOKEN": "wrong"}, {"X-ADMIN-TOKEN": ""}):
            resp = client.post(path, headers=headers)
            assert resp.status_code == 403, (path, headers)
            assert resp.json() == {"detail": "BaseRoot access denied: Invalid X-ADMIN-TOKEN"}


def test_root_routes_accept_the_admin_token(client: TestClient) -> None:
    for path in ROOT_ROUTES:
        assert client.post(path, headers=ADMIN).status_code == 200, path


def test_root_routes_refuse_everything_without_a_configured_admin_token(tocsin: Tocsin) -> None:
    app = create_app(Settings(database_url="sqlite://"), tocsin=tocsin)
    with TestClient(app) as client:
        for path in ROOT_ROUTES:
            resp = client.post(path, headers=ADMIN)
            assert resp.status_code == 403, path
            assert resp.json() == {"detail": messages.ADMIN_DENIED}


def test_bearer_tokens_do_not_open_root_routes(client: TestClient, tenant: Tenant) -> None:
    resp = client.post(ROOT_ROUTES[0], headers=tenant.moderator)
    assert resp.status_code == 403


def test_only_the_digest_of_a_token_is_stored(tocsin: Tocsin) -> None:
    from sqlalchemy import select

    from tocsin.service.auth import token_digest
    from tocsin.store.schema import api_tokens

    token = tocsin.create_token(
        scope="chatroom", scope_id="6f1c2a9e-0b7d-4c1e-9a53-2f0e8d7c4b11", role="moderator"
    )
    with tocsin.store.read() as tx:
        rows = [dict(r) for r in tx.conn.execute(select(api_tokens)).mappings()]
    (row,) = rows
    assert row["token_hash"] == token_digest(token)
    assert all(token not in str(value) for value in row.values())


def test_token_and_admin_checks_compare_in_constant_time(
    client: TestClient, tenant: Tenant, table: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Both secrets are checked with ``hmac.compare_digest`` (never ``==``)."""
    import hmac

    calls: list[tuple[object, object]] = []
    real = hmac.compare_digest

    def spy(a: Any, b: Any) -> bool:
        calls.append((a, b))
        return real(a, b)

    monkeypatch.setattr(hmac, "compare_digest", spy)  # the module deps and auth both use
    assert client.get(table_url(tenant, table), headers=tenant.member).status_code == 200
    assert len(calls) == 1
    assert client.post(ROOT_ROUTES[0], headers=ADMIN).status_code == 200
    assert client.post(ROOT_ROUTES[0], headers={"X-ADMIN-TOKEN": "wrong"}).status_code == 403
    # a POST is checked before its body is read (api/guard.py), and again by the route
    ok, wrong = (b"admin-secret", b"admin-secret"), (b"wrong", b"admin-secret")
    assert calls[1:] == [ok, ok, wrong]
