"""The headers tocsin sets itself cannot be configured, against a real ``tocsin serve``.

``Host``, ``Content-Length``, ``Transfer-Encoding``, ``Connection``, ``Idempotency-Key``,
``User-Agent`` and ``X-Tocsin-*``, in any case, in a ``webhook`` or ``api_call``: ``PUT
…/triggers`` answers 400 with the exact text; a config stored before the rule (written through the
store, bypassing validation, as a legacy row is) fails its run and nothing reaches the receiver.
Both on SQLite and PostgreSQL (the ``env`` fixture's database).
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest

from api.hook_receiver import HookReceiver
from support.processes import ServedProcess, create_token
from support.waiting import wait_for
from tocsin import messages
from tocsin.service import Tocsin
from tocsin.settings import Settings
from tocsin.store import records as store_records

pytestmark = pytest.mark.slow

NOW = datetime(2026, 8, 27, 5, 2, 13, tzinfo=UTC)

RESERVED = [
    "Host",
    "host",
    "HOST",
    "Content-Length",
    "content-length",
    "Transfer-Encoding",
    "TRANSFER-ENCODING",
    "Connection",
    "connection",
    "Idempotency-Key",
    "idempotency-key",
    "User-Agent",
    "user-AGENT",
    "X-Tocsin-Foo",
    "x-tocsin-signature",
    "X-TOCSIN-TIMESTAMP",
]
ACTIONS = {
    "webhook": {"type": "webhook", "url": "https://hooks.example/in"},
    "api_call": {"type": "api_call", "method": "POST", "url": "https://hooks.example/in"},
}


def scope(base: str, env: dict[str, str]) -> tuple[httpx.Client, str]:
    """A client with a moderator token of a fresh chatroom, and its route prefix."""
    chatroom = str(uuid.uuid4())
    headers = {"Authorization": f"Bearer {create_token(env, chatroom)}"}
    prefix = f"{base}/private/module/custom_tables/chatroom/{chatroom}"
    return httpx.Client(headers=headers, timeout=10), prefix


def test_a_reserved_header_is_refused_at_save_in_any_case(
    env: dict[str, str], served: tuple[ServedProcess, str]
) -> None:
    _, base = served
    http, prefix = scope(base, env)
    with http:
        table = http.post(f"{prefix}/tables", json={"name": "Cases", "columns": {"T": "text"}})
        assert table.status_code == 201, table.text
        url = f"{prefix}/tables/{table.json()['id']}/triggers"
        resp = http.put(
            url,
            json={
                "triggers": [
                    {
                        "on": "created",
                        "actions": [{**ACTIONS["webhook"], "headers": {"Host": "evil"}}],
                    }
                ]
            },
        )
        assert (resp.status_code, resp.json()) == (
            400,
            {
                "detail": "action invalid: webhook action header 'Host' is tocsin's own and "
                "cannot be configured (in any case: Host, Content-Length, Transfer-Encoding, "
                "Connection, Idempotency-Key, User-Agent and X-Tocsin-*); remove it from "
                "'headers'"
            },
        )
        for kind, action in ACTIONS.items():
            for name in RESERVED:
                headers = {"X-Team": "ops", name: "evil"}
                trigger = {"on": "created", "actions": [{**action, "headers": headers}]}
                resp = http.put(url, json={"triggers": [trigger]})
                detail = messages.action_invalid(messages.header_reserved(kind, name))
                assert (resp.status_code, resp.json()) == (400, {"detail": detail}), (kind, name)
            allowed = {"X-Team": "ops", "Authorization": "Bearer t", "X-Tocsin": "not a prefix"}
            trigger = {"on": "created", "actions": [{**action, "headers": allowed}]}
            resp = http.put(url, json={"triggers": [trigger]})
            assert resp.status_code == 200, (kind, resp.text)


def test_a_stored_reserved_header_fails_its_run_without_sending(
    env: dict[str, str], served: tuple[ServedProcess, str]
) -> None:
    _, base = served
    http, prefix = scope(base, env)
    with HookReceiver(200) as hook, http:
        table = http.post(f"{prefix}/tables", json={"name": "Cases", "columns": {"T": "text"}})
        assert table.status_code == 201, table.text
        table_id = table.json()["id"]
        legacy = [
            ("trg_host", {"type": "webhook", "url": hook.url, "headers": {"Host": "evil"}}),
            ("trg_sig", {"type": "webhook", "url": hook.url, "headers": {"x-tocsin-foo": "1"}}),
            (
                "trg_ua",
                {
                    "type": "api_call",
                    "method": "POST",
                    "url": hook.url,
                    "headers": {"User-Agent": "me"},
                },
            ),
            ("trg_ok", {"type": "webhook", "url": hook.url, "headers": {"X-Team": "ops"}}),
        ]
        triggers = [
            {"id": tid, "on": "created", "actions": [{"id": "act_1", **action}]}
            for tid, action in legacy
        ]
        tocsin = Tocsin.open(settings=Settings.from_environ(env))
        try:  # a row written before the rule: no validation on this path
            with tocsin.store.begin() as tx:
                store_records.set_table_triggers(tx, table_id=table_id, triggers=triggers, now=NOW)
        finally:
            tocsin.close()
        created = http.post(f"{prefix}/tables/{table_id}/records", json={"data": {"T": "x"}})
        assert created.status_code == 201, created.text

        def finished() -> dict[str, Any] | None:
            items = http.get(f"{prefix}/tables/{table_id}/trigger-runs").json()["items"]
            ended = {r["trigger_id"]: r for r in items if r["status"] in ("done", "failed")}
            return ended if len(ended) == len(legacy) else None

        runs = wait_for("four finished runs", finished)
    assert runs["trg_ok"]["status"] == "done"
    assert (runs["trg_host"]["status"], runs["trg_host"]["error"]) == (
        "failed",
        messages.header_reserved("webhook", "Host"),
    )
    assert (runs["trg_sig"]["status"], runs["trg_sig"]["error"]) == (
        "failed",
        messages.header_reserved("webhook", "x-tocsin-foo"),
    )
    assert (runs["trg_ua"]["status"], runs["trg_ua"]["error"]) == (
        "failed",
        messages.header_reserved("api_call", "User-Agent"),
    )
    (got,) = hook.received  # the control's request only
    assert got.headers["X-Team"] == "ops" and got.headers["Host"] != "evil"
