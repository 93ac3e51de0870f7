"""Signed webhooks: every webhook carries ``X-Tocsin-Timestamp`` and
``X-Tocsin-Signature: v1=<hex HMAC-SHA256 of "<timestamp>.<body>">`` keyed with the scope's
secret, and ``User-Agent: tocsin/<version>``. Verified here with the standard library's hmac,
against a real receiver on 127.0.0.1, never with tocsin's own signing code."""

from __future__ import annotations

import hashlib
import hmac
import json
from importlib.metadata import version
from pathlib import Path
from typing import Any

from api_support import NOW, Tenant, table_url
from fastapi.testclient import TestClient
from hook_receiver import HookReceiver, Received

from tocsin.service import Tocsin


def verify(secret: str, received: Received) -> bool:
    """What a receiver does (the README snippet, in short)."""
    timestamp = received.headers["X-Tocsin-Timestamp"]
    signed = timestamp.encode() + b"." + received.body
    expected = "v1=" + hmac.new(secret.encode(), signed, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, received.headers["X-Tocsin-Signature"])


def fire(
    client: TestClient,
    tocsin: Tocsin,
    tenant: Tenant,
    table: dict[str, Any],
    action: dict[str, Any],
) -> None:
    resp = client.put(
        table_url(tenant, table, "/triggers"),
        json={"triggers": [{"on": "created", "actions": [action]}]},
        headers=tenant.moderator,
    )
    assert resp.status_code == 200, resp.text
    resp = client.post(
        table_url(tenant, table, "/records"),
        json={"data": {"Title": "Łódź ✓"}},
        headers=tenant.moderator,
    )
    assert resp.status_code == 201, resp.text
    assert tocsin.work(now=NOW) == 1


def test_a_webhook_is_signed_with_the_scopes_secret(
    client: TestClient, tocsin: Tocsin, tenant: Tenant, table: dict[str, Any]
) -> None:
    secret = tocsin.rotate_secret("chatroom", tenant.scope_id, now=NOW)
    assert secret.startswith("whsec_") and len(secret) == 6 + 64
    with HookReceiver(200) as hook:
        action = {
            "type": "webhook",
            "url": hook.url,
            "method": "PUT",
            "timeout_s": 5,
            "payload": {"title": "$row.Title", "n": 1},
            "headers": {"X-Team": "ops"},  # X-Tocsin-* are refused at save
        }
        fire(client, tocsin, tenant, table, action)
    (got,) = hook.received
    assert got.method == "PUT"
    assert got.headers["X-Tocsin-Timestamp"] == str(int(NOW.timestamp()))
    assert got.headers["User-Agent"] == f"tocsin/{version('tocsin')}"
    assert got.headers["X-Team"] == "ops"  # configured headers go along
    assert got.headers["X-Tocsin-Signature"].startswith("v1=")
    assert verify(secret, got)
    assert json.loads(got.body) == {"title": "Łódź ✓", "n": 1}
    tampered = Received(got.method, got.path, got.headers, got.body.replace(b"1", b"2"))
    assert not verify(secret, tampered)


def test_rotating_the_secret_signs_with_the_new_one_only(
    client: TestClient, tocsin: Tocsin, tenant: Tenant, table: dict[str, Any]
) -> None:
    old = tocsin.rotate_secret("chatroom", tenant.scope_id, now=NOW)
    new = tocsin.rotate_secret("chatroom", tenant.scope_id, now=NOW)
    assert new != old and tocsin.signing_secret("chatroom", tenant.scope_id) == new
    with HookReceiver(200) as hook:
        fire(client, tocsin, tenant, table, {"type": "webhook", "url": hook.url})
    (got,) = hook.received
    assert got.method == "POST" and verify(new, got) and not verify(old, got)


def test_a_scope_without_a_secret_gets_one_on_its_first_webhook(
    client: TestClient, tocsin: Tocsin, tenant: Tenant, table: dict[str, Any]
) -> None:
    assert tocsin.signing_secret("chatroom", tenant.scope_id) is None
    with HookReceiver(200) as hook:
        fire(client, tocsin, tenant, table, {"type": "webhook", "url": hook.url})
    secret = tocsin.signing_secret("chatroom", tenant.scope_id)
    assert secret is not None and verify(secret, hook.received[0])


def test_api_call_is_not_signed_but_says_who_it_is(
    client: TestClient, tocsin: Tocsin, tenant: Tenant, table: dict[str, Any]
) -> None:
    with HookReceiver(200) as hook:
        fire(client, tocsin, tenant, table, {"type": "api_call", "method": "POST", "url": hook.url})
    (got,) = hook.received
    assert "X-Tocsin-Signature" not in got.headers
    assert got.headers["User-Agent"] == f"tocsin/{version('tocsin')}"


def documented_verify() -> Any:
    """The receiver snippet of docs/retries-alerts-webhooks.md, executed as written."""
    doc = (Path(__file__).parents[2] / "docs" / "retries-alerts-webhooks.md").read_text()
    snippet = doc.split("```python\n", 1)[1].split("```", 1)[0]
    assert len(snippet.strip().splitlines()) <= 10
    scope: dict[str, Any] = {}
    exec(snippet, scope)  # the documentation's own code, nothing else
    return scope["verify"]


def test_the_documented_receiver_snippet_verifies_a_real_delivery(
    client: TestClient, tocsin: Tocsin, tenant: Tenant, table: dict[str, Any]
) -> None:
    secret = tocsin.rotate_secret("chatroom", tenant.scope_id, now=NOW)
    with HookReceiver(200) as hook:
        fire(client, tocsin, tenant, table, {"type": "webhook", "url": hook.url})
    (got,) = hook.received
    check = documented_verify()
    forever = 10**10  # NOW is a fixed instant in the past: switch the replay window off
    assert check(secret, got.headers, got.body, tolerance_s=forever)
    assert not check(secret, got.headers, got.body + b" ", tolerance_s=forever)
    assert not check("whsec_other", got.headers, got.body, tolerance_s=forever)
    assert not check(secret, got.headers, got.body)  # a day-old timestamp is a replay
