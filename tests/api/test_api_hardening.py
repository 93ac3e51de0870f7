"""Hardening through the HTTP API: body caps and early auth, an unreachable database (503),
token expiry and revocation, the metrics token and port.

The 50 MB body against a real server (memory measured) is in ``tests/e2e/test_e2e_hardening.py``;
PostgreSQL stopped and restarted under a running server in ``tests/e2e/test_e2e_pg_outage.py``.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
from api_support import ADMIN, COLUMNS, Tenant, TestClient, bearer, table_url

from support.net import free_port
from tocsin import messages
from tocsin.api.app import create_app
from tocsin.errors import NotFound, StoreUnavailable, ValidationError
from tocsin.service import Tocsin
from tocsin.settings import Settings
from tocsin.store import Store
from tocsin.store.engine import create_store_engine

LIMIT = 4096


@pytest.fixture
def small(tocsin: Tocsin) -> Iterator[TestClient]:
    """The app with a 4 KiB body cap."""
    settings = dataclasses.replace(tocsin.settings, max_body_bytes=LIMIT)
    with TestClient(create_app(settings, tocsin=tocsin)) as client:
        yield client


def records_url(tenant: Tenant, table: dict[str, Any]) -> str:
    return table_url(tenant, table, "/records")


def big_record(size: int) -> bytes:
    return json.dumps({"data": {"Title": "x" * size}}).encode()


# ---- size cap, auth before the body, short 422s ----


def test_a_body_over_the_cap_is_413_from_its_content_length(
    small: TestClient, tenant: Tenant, table: dict[str, Any]
) -> None:
    headers = {**tenant.moderator, "Content-Type": "application/json"}
    resp = small.post(records_url(tenant, table), content=big_record(LIMIT), headers=headers)
    assert resp.status_code == 413
    assert resp.json() == {"detail": messages.body_too_large(LIMIT)}
    fits = small.post(records_url(tenant, table), content=big_record(100), headers=headers)
    assert fits.status_code == 201, fits.text


def test_a_chunked_body_over_the_cap_is_413_as_it_streams(
    small: TestClient, tenant: Tenant, table: dict[str, Any]
) -> None:
    """No Content-Length to check up front: the bytes are counted as they arrive."""
    body = big_record(3 * LIMIT)
    chunks = iter([body[i : i + 1000] for i in range(0, len(body), 1000)])
    headers = {**tenant.moderator, "Content-Type": "application/json"}
    resp = small.post(records_url(tenant, table), content=chunks, headers=headers)
    assert "content-length" not in resp.request.headers
    assert resp.status_code == 413
    assert resp.json() == {"detail": messages.body_too_large(LIMIT)}


def _asgi_post(app: Any, path: str, headers: dict[str, str], chunks: list[bytes]) -> list[Any]:
    """POST ``chunks`` to ``app`` over raw ASGI, then never send the rest of the body (the
    client stalls); the messages the app sent back."""
    sent: list[Any] = []

    async def scenario() -> None:
        queue = [{"type": "http.request", "body": c, "more_body": True} for c in chunks]

        async def receive() -> dict[str, Any]:
            if queue:
                return queue.pop(0)
            await asyncio.Event().wait()  # a stalled client: nothing more ever arrives
            raise AssertionError("unreachable")

        async def send(message: Any) -> None:
            sent.append(message)

        raw = [(k.lower().encode(), v.encode()) for k, v in headers.items()]
        scope = {
            "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST",
            "scheme": "http", "path": path, "raw_path": path.encode(), "query_string": b"",
            "root_path": "", "headers": raw, "client": ("127.0.0.1", 1), "server": ("t", 80),
        }  # fmt: skip
        await asyncio.wait_for(app(scope, receive, send), timeout=30)

    asyncio.run(scenario())
    return sent


def test_a_body_that_stops_arriving_is_408_after_the_body_timeout(
    tocsin: Tocsin, tenant: Tenant, table: dict[str, Any]
) -> None:
    """A client that sends part of its body and stalls holds nothing past the deadline."""
    settings = dataclasses.replace(tocsin.settings, body_timeout_s=0.2)
    app = create_app(settings, tocsin=tocsin)
    headers = {**tenant.moderator, "content-type": "application/json", "content-length": "100"}
    sent = _asgi_post(app, records_url(tenant, table), headers, [b'{"data": {"Ti'])
    start = next(m for m in sent if m["type"] == "http.response.start")
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    assert start["status"] == 408
    assert json.loads(body) == {"detail": messages.body_too_slow(0.2)}
    assert tocsin.list_records(table["id"])["total"] == 0  # nothing written


def test_the_body_timeout_is_a_setting() -> None:
    assert Settings.from_environ({}).body_timeout_s == 30.0
    assert Settings.from_environ({"TOCSIN_BODY_TIMEOUT_S": "5"}).body_timeout_s == 5.0


@pytest.mark.parametrize(
    ("headers", "status"),
    [({}, 401), (bearer("not-a-token"), 401), ("other", 403)],
)
def test_a_write_is_refused_before_its_body_is_parsed(
    client: TestClient,
    tenant: Tenant,
    other: Tenant,
    table: dict[str, Any],
    headers: Any,
    status: int,
) -> None:
    """A body that is not even JSON: parsed first, it would be a 422; refused first, a 401/403."""
    sent = other.moderator if headers == "other" else headers
    resp = client.post(records_url(tenant, table), content=b"{not json", headers=sent)
    assert resp.status_code == status
    assert set(resp.json()) == {"detail"}


def test_root_writes_are_refused_before_their_body_is_parsed(client: TestClient) -> None:
    resp = client.post(
        "/root/custom-tables/run-due-triggers", content=b"{not json", headers={"X-ADMIN-TOKEN": "x"}
    )
    assert resp.status_code == 403
    assert resp.json() == {"detail": messages.ADMIN_DENIED}
    assert client.post("/root/custom-tables/run-due-triggers", headers=ADMIN).status_code == 200


@pytest.mark.parametrize(
    "path", ["/api/schedules", "/api/workflows/w/start", "/api/lanes/content-intake/trigger"]
)
@pytest.mark.parametrize("headers", [{}, bearer("not-a-token")])
def test_permission_route_writes_are_refused_before_their_body_is_parsed(
    client: TestClient, path: str, headers: dict[str, str]
) -> None:
    """Every ``/api/…`` write (lanes included) authenticates before its body is parsed: a body
    that is not JSON is a 401, not a 422 from parsing it for an unknown caller."""
    sent = {**headers, "Content-Type": "application/json"}
    resp = client.post(path, content=b"{not json", headers=sent)
    assert resp.status_code == 401, resp.text
    assert resp.json() == {"detail": messages.TOKEN_INVALID}


def test_a_422_does_not_echo_a_whole_large_input(
    client: TestClient, tenant: Tenant, table: dict[str, Any]
) -> None:
    huge = "y" * 500_000
    resp = client.post(
        records_url(tenant, table),
        json={"data": {"Title": "t"}, "extra": huge},
        headers=tenant.moderator,
    )
    assert resp.status_code == 422
    assert len(resp.content) < 2_000
    (error,) = resp.json()["detail"]
    assert error["input"] == "y" * 200 + "…"
    whole = client.post(records_url(tenant, table), json=[huge], headers=tenant.moderator)
    assert whole.status_code == 422
    assert len(whole.content) < 2_000
    assert whole.json()["detail"][0]["input"].startswith('["yyy')
    small = client.post(records_url(tenant, table), json={"data": 5}, headers=tenant.moderator)
    assert small.status_code == 422
    assert small.json()["detail"][0]["input"] == 5  # short inputs are still echoed


def test_the_cap_is_a_setting() -> None:
    assert Settings.from_environ({}).max_body_bytes == 1024 * 1024
    assert Settings.from_environ({"TOCSIN_MAX_BODY_BYTES": "2048"}).max_body_bytes == 2048


# ---- an unreachable database is a 503, /readyz says so ----


def test_healthz_and_readyz_answer_200_while_the_database_answers(client: TestClient) -> None:
    assert client.get("/healthz").json() == {"status": "ok"}
    assert client.get("/readyz").json() == {"status": "ok"}


def test_an_unreachable_database_is_503_with_retry_after(
    client: TestClient, tocsin: Tocsin, tenant: Tenant, table: dict[str, Any]
) -> None:
    """A PostgreSQL server nobody listens on: the facade's store cannot connect."""
    dead_port = free_port()
    live = tocsin.store
    tocsin.store = Store(create_store_engine(f"postgresql://u@127.0.0.1:{dead_port}/db"))
    try:
        for method, url in (
            ("GET", table_url(tenant, table)),
            ("POST", records_url(tenant, table)),
            ("GET", "/readyz"),
        ):
            resp = client.request(method, url, json={"data": {}}, headers=tenant.moderator)
            assert resp.status_code == 503, (url, resp.text)
            assert resp.headers["Retry-After"] == "5"
            assert resp.json() == {"detail": messages.DATABASE_UNAVAILABLE}
        assert client.get("/healthz").status_code == 200  # liveness: the process answers
    finally:
        tocsin.store.dispose()
        tocsin.store = live
    assert client.get("/readyz").status_code == 200


def test_store_unavailable_is_a_503_error() -> None:
    assert StoreUnavailable("x").status == 503


# ---- token expiry and revocation ----


def test_an_expired_token_is_401(
    client: TestClient, tocsin: Tocsin, table: dict[str, Any], tenant: Tenant
) -> None:
    now = datetime.now(UTC)
    expired = tocsin.create_token(
        scope="chatroom",
        scope_id=tenant.scope_id,
        role="member",
        now=now - timedelta(hours=2),
        expires_at=now - timedelta(hours=1),
    )
    fresh = tocsin.create_token(
        scope="chatroom",
        scope_id=tenant.scope_id,
        role="member",
        expires_at=now + timedelta(hours=1),
    )
    assert client.get(table_url(tenant, table), headers=bearer(expired)).status_code == 401
    assert client.get(table_url(tenant, table), headers=bearer(fresh)).status_code == 200


def test_a_revoked_token_is_401_from_then_on(
    client: TestClient, tocsin: Tocsin, tenant: Tenant
) -> None:
    before = {row["id"] for row in tocsin.list_tokens()}
    token = tocsin.create_token(scope="chatroom", scope_id=tenant.scope_id, role="moderator")
    (row,) = [row for row in tocsin.list_tokens() if row["id"] not in before]
    url = f"{tenant.prefix}/tables"
    body = {"name": "T", "columns": COLUMNS}
    assert client.post(url, json=body, headers=bearer(token)).status_code == 201
    assert tocsin.revoke_token(row["id"])["revoked_at"] is not None
    resp = client.post(url, json=body, headers=bearer(token))
    assert resp.status_code == 401
    assert resp.headers["WWW-Authenticate"] == "Bearer"


# ---- /metrics behind a token, or on a port of its own ----


def test_metrics_require_the_metrics_token_when_set(tocsin: Tocsin) -> None:
    token = "m" * 32
    settings = dataclasses.replace(tocsin.settings, metrics_token=token)
    with TestClient(create_app(settings, tocsin=tocsin)) as client:
        assert client.get("/metrics").status_code == 401
        assert client.get("/metrics", headers=bearer("m" * 31)).status_code == 401
        ok = client.get("/metrics", headers=bearer(token))
        assert ok.status_code == 200
        assert "tocsin_runs" in ok.text


def test_metrics_without_a_token_setting_stay_open(client: TestClient) -> None:
    assert client.get("/metrics").status_code == 200


def test_metrics_on_their_own_port_leave_the_api_port(tocsin: Tocsin) -> None:
    port = free_port()
    settings = dataclasses.replace(tocsin.settings, metrics_port=port)
    with TestClient(create_app(settings, tocsin=tocsin)) as client:
        assert client.get("/metrics").status_code == 404
        scraped = httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=5)
        assert scraped.status_code == 200
        assert "tocsin_runs" in scraped.text
    with pytest.raises(httpx.TransportError):  # stopped with the app
        httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=2)


def test_revoking_an_unknown_token_is_404(tocsin: Tocsin) -> None:
    with pytest.raises(NotFound, match="token not found"):
        tocsin.revoke_token(str(uuid.uuid4()))


def test_an_expiry_must_be_aware_and_ahead(tocsin: Tocsin) -> None:
    scope = {"scope": "chatroom", "scope_id": str(uuid.uuid4()), "role": "member"}
    with pytest.raises(ValidationError, match="timezone-aware"):
        tocsin.create_token(**scope, expires_at=datetime(2099, 1, 1))
    with pytest.raises(ValidationError, match="future"):
        tocsin.create_token(**scope, expires_at=datetime.now(UTC) - timedelta(seconds=1))


def test_head_is_answered_as_get_without_a_body(
    client: TestClient, tenant: Tenant, table: dict[str, Any]
) -> None:
    """``curl -I`` and HEAD probes get the GET's status and headers (they were 405)."""
    for url, headers in (("/healthz", {}), (table_url(tenant, table), tenant.moderator)):
        got, head = client.get(url, headers=headers), client.head(url, headers=headers)
        assert got.status_code == head.status_code == 200, (url, head.text)
        assert head.content == b""
        assert head.headers["content-length"] == str(len(got.content))
        assert head.headers["content-type"] == got.headers["content-type"]
    assert client.head(table_url(tenant, table)).status_code == 401  # still authenticated
    assert client.head("/no/such/route").status_code == 404
