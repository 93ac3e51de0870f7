"""SPEC §10 webhook and api_call: httpx, non-2xx fails, Idempotency-Key, templates, the guard."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from runs.helpers import LATER, NOW, add_record, make_run, make_table, read_run, trigger
from tocsin import messages
from tocsin.service import Tocsin


class Hook:
    """An httpx.MockTransport that records requests and answers ``status``."""

    def __init__(self, status: int = 200, body: str = "fine") -> None:
        self.requests: list[httpx.Request] = []
        self.status, self.body = status, body

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        return httpx.Response(self.status, text=self.body)


@pytest.fixture
def hook(tocsin: Tocsin) -> Hook:
    recorder = Hook()
    tocsin.configure_outbound(
        transport=httpx.MockTransport(recorder), resolve=lambda host: ["93.184.216.34"]
    )
    return recorder


def run_one(t: Tocsin, *actions: dict[str, Any], row: dict[str, Any] | None = None, **kw: Any):  # type: ignore[no-untyped-def]
    trg = trigger(*actions, **kw)
    table = make_table(t, trg)
    record = (add_record(t, table["id"], row), row) if row is not None else None
    source = "schedule" if kw.get("on") == "schedule" else "created"
    run = make_run(t, table, trg, record=record, source=source, scheduled_for=NOW)
    t.work(now=LATER)
    return read_run(t, run["id"]), trg


def test_webhook_posts_the_default_payload_with_an_idempotency_key(
    tocsin: Tocsin, hook: Hook
) -> None:
    run, trg = run_one(
        tocsin, {"type": "webhook", "url": "https://hooks.example/in"}, row={"Title": "Leak"}
    )
    assert run["status"] == "done"
    assert run["action_results"][0]["detail"] == "POST https://hooks.example/in → 200"
    (request,) = hook.requests
    assert request.method == "POST"
    assert request.headers["Idempotency-Key"] == f"tocsin-{run['id']}-act_1"
    body = json.loads(request.content)
    assert body["run_id"] == run["id"] and body["trigger_id"] == trg["id"]
    assert body["row"] == {"Title": "Leak"} and body["record_id"] == run["record_id"]
    assert body["scheduled_for"] == "2026-08-27T05:02:13+00:00"


def test_webhook_templates_payload_and_headers(tocsin: Tocsin, hook: Hook) -> None:
    action = {
        "type": "webhook",
        "url": "https://hooks.example/$row.Title",
        "payload": {"title": "$row.Title", "n": "$row.N"},
        "headers": {"X-Run": "$run.id"},
    }
    run, _ = run_one(tocsin, action, row={"Title": "Leak", "N": 3})
    (request,) = hook.requests
    assert request.url.path == "/Leak" and request.headers["Host"] == "hooks.example"
    assert json.loads(request.content) == {"title": "Leak", "n": 3}
    assert request.headers["X-Run"] == run["id"]


def test_recordless_webhook_renders_row_tokens_empty(tocsin: Tocsin, hook: Hook) -> None:
    action = {"type": "webhook", "url": "https://hooks.example/x", "payload": {"t": "[$row.Title]"}}
    run, _ = run_one(
        tocsin, action, on="schedule", schedule={"type": "interval", "every_seconds": 60}
    )
    assert run["status"] == "done"
    assert json.loads(hook.requests[0].content) == {"t": "[]"}


def test_non_2xx_fails_the_run(tocsin: Tocsin, hook: Hook) -> None:
    hook.status, hook.body = 503, "down for maintenance"
    run, _ = run_one(tocsin, {"type": "webhook", "url": "https://hooks.example/in"})
    assert run["status"] == "failed"
    assert run["error"] == "POST https://hooks.example/in answered 503: down for maintenance"
    assert run["action_results"][0]["ok"] is False


def test_transport_errors_fail_the_run(tocsin: Tocsin) -> None:
    def timeout(request: httpx.Request) -> httpx.Response:
        raise httpx.ReadTimeout("timed out", request=request)

    tocsin.configure_outbound(
        transport=httpx.MockTransport(timeout), resolve=lambda h: ["93.184.216.34"]
    )
    run, _ = run_one(tocsin, {"type": "webhook", "url": "https://hooks.example/in"})
    assert run["status"] == "failed" and "ReadTimeout" in run["error"]


def test_private_targets_are_refused_before_any_request(tocsin: Tocsin, hook: Hook) -> None:
    run, _ = run_one(tocsin, {"type": "webhook", "url": "http://169.254.169.254/latest"})
    assert run["status"] == "failed" and "refused" in run["error"]
    assert hook.requests == []


def test_api_call_sends_method_headers_and_json_body(tocsin: Tocsin, hook: Hook) -> None:
    action = {
        "type": "api_call",
        "method": "put",
        "url": "https://api.example/items/$row.id",
        "headers": {"Authorization": "Bearer t0k"},
        "body": {"status": "$row.Status"},
    }
    run, _ = run_one(tocsin, action, row={"Status": "Open"})
    (request,) = hook.requests
    assert request.method == "PUT" and request.url.path.endswith(run["record_id"])
    assert request.headers["Authorization"] == "Bearer t0k"
    assert request.headers["Idempotency-Key"] == f"tocsin-{run['id']}-act_1"
    assert json.loads(request.content) == {"status": "Open"}
    assert run["action_results"][0]["detail"].startswith("PUT https://api.example/items/")


def test_api_call_string_body_and_bad_method(tocsin: Tocsin, hook: Hook) -> None:
    run, _ = run_one(
        tocsin,
        {"type": "api_call", "method": "POST", "url": "https://a.example/", "body": "raw $run.id"},
    )
    assert hook.requests[0].content == f"raw {run['id']}".encode()
    bad, _ = run_one(tocsin, {"type": "api_call", "method": "TRACE", "url": "https://a.example/"})
    assert bad["status"] == "failed" and "TRACE" in bad["error"]


def test_redirects_are_not_followed(tocsin: Tocsin) -> None:
    """A public URL answering 3xx towards a private address fails; the Location is never hit."""
    seen: list[str] = []

    def bounce(request: httpx.Request) -> httpx.Response:
        seen.append(str(request.url))
        return httpx.Response(302, headers={"Location": "http://169.254.169.254/latest"})

    tocsin.configure_outbound(
        transport=httpx.MockTransport(bounce), resolve=lambda h: ["93.184.216.34"]
    )
    for action in (
        {"type": "webhook", "url": "https://hooks.example/in"},
        {"type": "api_call", "method": "GET", "url": "https://hooks.example/in"},
    ):
        run, _ = run_one(tocsin, action)
        assert run["status"] == "failed" and "answered 302" in run["error"]
    assert seen == ["https://93.184.216.34/in"] * 2


@pytest.mark.parametrize(("kind", "extra"), [("webhook", {}), ("api_call", {"method": "POST"})])
def test_a_stored_header_tocsin_sets_fails_the_run_unsent(
    tocsin: Tocsin, hook: Hook, kind: str, extra: dict[str, Any]
) -> None:
    """A config stored before such headers were refused at save (``run_one`` writes it through
    the store): the action fails before anything is sent."""
    action = {
        "type": kind,
        "url": "https://hooks.example/in",
        "headers": {"X-Other": "kept", "idempotency-key": "mine"},
        **extra,
    }
    run, _ = run_one(tocsin, action)
    assert (run["status"], run["error"]) == (
        "failed",
        messages.header_reserved(kind, "idempotency-key"),
    )
    assert hook.requests == []


def test_the_request_connects_to_the_address_the_guard_vetted(tocsin: Tocsin, hook: Hook) -> None:
    """DNS rebinding: the name is resolved once, by the guard; the request goes to that address
    (Host and TLS server name stay the name's), so a later private answer is never used."""
    answers = iter([["93.184.216.34"], ["127.0.0.1"]])
    asked: list[str] = []

    def rebinding(host: str) -> list[str]:
        asked.append(host)
        return next(answers)

    tocsin.configure_outbound(transport=httpx.MockTransport(hook), resolve=rebinding)
    run, _ = run_one(tocsin, {"type": "webhook", "url": "https://hooks.example:8443/in?a=1"})
    assert run["status"] == "done" and asked == ["hooks.example"]
    (request,) = hook.requests
    assert str(request.url) == "https://93.184.216.34:8443/in?a=1"
    assert request.headers.get_list("Host") == ["hooks.example:8443"]
    assert request.extensions["sni_hostname"] == "hooks.example"


def test_a_huge_answer_is_not_downloaded(tocsin: Tocsin) -> None:
    """Only the start of an answer is read for the receipt: an endless body cannot exhaust the
    worker."""
    sent: list[int] = []

    def endless() -> Any:
        for _ in range(64):
            sent.append(1)
            yield b"x" * 1_000_000

    tocsin.configure_outbound(
        transport=httpx.MockTransport(lambda request: httpx.Response(200, content=endless())),
        resolve=lambda h: ["93.184.216.34"],
    )
    run, _ = run_one(tocsin, {"type": "api_call", "method": "GET", "url": "https://a.example/"})
    assert run["status"] == "done"
    assert run["action_results"][0]["detail"].endswith(": " + "x" * 200)
    assert len(sent) == 1
