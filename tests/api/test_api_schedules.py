"""SPEC §12, §15 over HTTP: /api/schedules and /api/workflows with permission tokens."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from api_support import Clock, Tenant, TestClient, bearer

from tocsin import messages
from tocsin.service import Tocsin
from workflows.helpers import daily, every_minute


def iso(at: datetime) -> str:
    return at.isoformat().replace("+00:00", "Z")


@pytest.fixture
def tokens(tocsin: Tocsin, clock: Clock) -> dict[str, dict[str, str]]:
    tocsin.register_workflows([daily(), every_minute()])
    tocsin.sync_schedules(now=clock.now)
    read = tocsin.create_token(permissions=["schedules:read"])
    write = tocsin.create_token(permissions=["schedules:write"])
    return {"read": bearer(read), "write": bearer(write)}


def test_auth_is_401_without_a_token_and_403_without_the_permission(
    client: TestClient, tokens: dict[str, dict[str, str]], tenant: Tenant
) -> None:
    assert client.get("/api/schedules").status_code == 401
    bad = client.get("/api/schedules", headers=bearer("nope"))
    assert bad.status_code == 401 and bad.json() == {"detail": messages.TOKEN_INVALID}
    denied = client.get("/api/schedules", headers=tenant.moderator)
    assert denied.status_code == 403
    assert denied.json() == {"detail": "this token lacks the 'schedules:read' permission"}
    assert (
        client.post("/api/schedules/wf_tick-tock/pause", headers=tokens["read"]).status_code == 403
    )
    # a permission-only token has no tenant scope
    body = {"name": "T", "columns": {"A": "text"}}
    url = f"{tenant.prefix}/tables"
    assert client.post(url, json=body, headers=tokens["write"]).status_code == 403


def test_list_filter_get_pause_resume_and_fires(
    client: TestClient, tokens: dict[str, dict[str, str]], tocsin: Tocsin, clock: Clock
) -> None:
    page = client.get("/api/schedules", headers=tokens["read"]).json()
    assert page["total"] == 2 and {s["id"] for s in page["items"]} == {
        "wf_daily-report",
        "wf_tick-tock",
    }
    only = client.get("/api/schedules?workflowId=tick-tock", headers=tokens["write"]).json()
    assert [s["id"] for s in only["items"]] == ["wf_tick-tock"]
    one = client.get("/api/schedules/wf_tick-tock", headers=tokens["read"]).json()
    assert one["cron"] == "* * * * *" and one["paused"] is False and one["description"]
    assert one["paused_at"] is None
    paused = client.post("/api/schedules/wf_tick-tock/pause", headers=tokens["write"])
    assert paused.status_code == 200 and paused.json()["paused"] is True
    assert paused.json()["paused_at"] == iso(clock.now)  # since when: the pause's instant
    assert tocsin.tick(now=clock.now + timedelta(minutes=5))["schedules_fired"] == 0
    clock.now += timedelta(minutes=10)
    resumed = client.post("/api/schedules/wf_tick-tock/resume", headers=tokens["write"]).json()
    assert resumed["paused"] is False and resumed["paused_at"] is None
    next_fire = clock.now.replace(second=0) + timedelta(minutes=1)
    assert resumed["next_fire_at"] == iso(next_fire)
    tocsin.tick(now=next_fire)
    fires = client.get("/api/schedules/wf_tick-tock/fires", headers=tokens["read"]).json()
    (fire,) = fires["items"]
    assert fire["scheduled_for"] == iso(next_fire) and fire["run_status"] == "pending"
    tocsin.work(now=next_fire)
    run = client.get(f"/api/workflows/runs/{fire['run_id']}", headers=tokens["read"]).json()
    assert run["status"] == "success" and run["trigger"] == "scheduled"


def test_create_and_delete_imperative_schedules(
    client: TestClient, tokens: dict[str, dict[str, str]]
) -> None:
    body: dict[str, Any] = {
        "workflowId": "daily-report",
        "cron": "*/15 * * * *",
        "timezone": "UTC",
        "inputData": {"user_id": "u7"},
    }
    made = client.post("/api/schedules", json=body, headers=tokens["write"])
    assert made.status_code == 201, made.text
    sid = made.json()["id"]
    assert sid.startswith("sch_") and made.json()["input_data"] == {"user_id": "u7"}
    bad = client.post("/api/schedules", json={**body, "cron": "0 9 * *"}, headers=tokens["write"])
    assert bad.status_code == 400 and bad.json()["detail"].startswith("cron schedule invalid: ")
    unknown = client.post(
        "/api/schedules", json={**body, "workflowId": "x"}, headers=tokens["write"]
    )
    assert unknown.status_code == 404
    extra = client.post("/api/schedules", json={**body, "bogus": 1}, headers=tokens["write"])
    assert extra.status_code == 422
    declared = client.delete("/api/schedules/wf_daily-report", headers=tokens["write"])
    assert declared.status_code == 409
    assert client.delete(f"/api/schedules/{sid}", headers=tokens["write"]).status_code == 204
    assert client.get(f"/api/schedules/{sid}", headers=tokens["read"]).status_code == 404
    assert client.get("/api/schedules/nope", headers=tokens["read"]).json() == {
        "detail": "schedule not found"
    }


def test_workflows_start_runs_cancel(
    client: TestClient, tokens: dict[str, dict[str, str]], tocsin: Tocsin, clock: Clock
) -> None:
    listed = client.get("/api/workflows", headers=tokens["read"]).json()
    assert [w["id"] for w in listed] == ["daily-report", "tick-tock"]
    detail = client.get("/api/workflows/daily-report", headers=tokens["read"]).json()
    assert detail["schedules"] == ["wf_daily-report"] and detail["steps"][0]["id"] == "send-report"
    assert client.get("/api/workflows/nope", headers=tokens["read"]).status_code == 404
    started = client.post(
        "/api/workflows/daily-report/start",
        json={"input": {"user_id": "u1"}, "wait": True},
        headers=tokens["write"],
    ).json()
    assert started["status"] == "success" and started["output"] == {"ok": True, "user_id": "u1"}
    queued = client.post(
        "/api/workflows/daily-report/start",
        json={"input": {"user_id": "u2"}},
        headers=tokens["write"],
    ).json()
    assert queued["status"] == "pending"
    canceled = client.post(f"/api/workflows/runs/{queued['id']}/cancel", headers=tokens["write"])
    assert canceled.json()["status"] == "canceled"
    again = client.post(f"/api/workflows/runs/{queued['id']}/cancel", headers=tokens["write"])
    assert again.status_code == 409
    resumed = client.post(
        f"/api/workflows/runs/{queued['id']}/resume", json={"data": 1}, headers=tokens["write"]
    )
    assert resumed.status_code == 409
    runs = client.get(
        "/api/workflows/daily-report/runs?status=success", headers=tokens["read"]
    ).json()
    assert [r["id"] for r in runs["items"]] == [started["id"]]
    assert client.get("/api/workflows/runs/nope", headers=tokens["read"]).status_code == 404
    assert (
        client.post(
            "/api/workflows/daily-report/start", json={}, headers=tokens["read"]
        ).status_code
        == 403
    )


RUN_KEYS = [  # a workflow run's JSON (SPEC §12), in order
    "id",
    "workflow_id",
    "schedule_id",
    "trigger",
    "status",
    "attempts",
    "input",
    "output",
    "error",
    "scheduled_for",
    "suspend_payload",
    "created_at",
    "started_at",
    "ended_at",
    "attempt",
    "next_attempt_at",
    "alert",
    "steps",
    "retry",
    "duration_ms",
]
STEP_KEYS = ["id", "status", "output", "error", "started_at", "ended_at"]


def test_a_workflow_run_answers_the_same_json_from_its_start_its_read_and_its_listing(
    client: TestClient, tokens: dict[str, dict[str, str]], clock: Clock
) -> None:
    started = client.post(
        "/api/workflows/daily-report/start",
        json={"input": {"user_id": "u1"}, "wait": True},
        headers=tokens["write"],
    ).json()
    got = client.get(f"/api/workflows/runs/{started['id']}", headers=tokens["read"]).json()
    (listed,) = client.get("/api/workflows/daily-report/runs", headers=tokens["read"]).json()[
        "items"
    ]
    assert started == got == listed
    assert list(got) == RUN_KEYS and [list(step) for step in got["steps"]] == [STEP_KEYS]
    ended = datetime.fromisoformat(got["ended_at"])
    assert clock.now <= ended < clock.now + timedelta(seconds=1)
    assert got["duration_ms"] == round((ended - clock.now).total_seconds() * 1000)
    assert {k: v for k, v in got.items() if k not in ("id", "ended_at", "duration_ms")} == {
        "workflow_id": "daily-report",
        "schedule_id": None,
        "trigger": "manual",
        "status": "success",
        "attempts": 1,
        "input": {"user_id": "u1"},
        "output": {"ok": True, "user_id": "u1"},
        "error": None,
        "scheduled_for": None,
        "suspend_payload": None,
        "created_at": iso(clock.now),
        "started_at": iso(clock.now),
        "attempt": 1,
        "next_attempt_at": None,
        "alert": None,
        "steps": [
            {
                "id": "send-report",
                "status": "success",
                "output": {"ok": True, "user_id": "u1"},
                "error": None,
                "started_at": got["steps"][0]["started_at"],
                "ended_at": got["steps"][0]["ended_at"],
            }
        ],
        "retry": None,
    }


def test_permission_tokens_expire_and_are_revoked_like_any_token(
    client: TestClient, tocsin: Tocsin, tenant: Tenant
) -> None:
    """A token may carry permissions and an expiry (and a scope); an
    expired or revoked one is 401 on ``/api/…`` as on the tenant routes."""
    now = datetime.now(UTC)
    expired = tocsin.create_token(
        permissions=["schedules:write"],
        now=now - timedelta(hours=2),
        expires_at=now - timedelta(hours=1),
    )
    fresh = tocsin.create_token(
        scope="chatroom",
        scope_id=tenant.scope_id,
        role="moderator",
        permissions=["schedules:read"],
        expires_at=now + timedelta(hours=1),
    )
    refused = client.get("/api/schedules", headers=bearer(expired))
    assert refused.status_code == 401 and refused.json() == {"detail": messages.TOKEN_INVALID}
    assert client.get("/api/schedules", headers=bearer(fresh)).status_code == 200
    url, body = f"{tenant.prefix}/tables", {"name": "T", "columns": {"A": "text"}}
    assert client.post(url, json=body, headers=bearer(fresh)).status_code == 201
    (row,) = [r for r in tocsin.list_tokens() if r["expires_at"] and r["expires_at"] > now]
    assert row["permissions"] == ["schedules:read"] and row["role"] == "moderator"
    tocsin.revoke_token(row["id"])
    assert client.get("/api/schedules", headers=bearer(fresh)).status_code == 401
    assert client.post(url, json=body, headers=bearer(fresh)).status_code == 401


@pytest.mark.parametrize("token", [None, "not-a-token", "expired"])
def test_api_writes_are_refused_before_their_body_is_parsed(
    client: TestClient, tocsin: Tocsin, token: str | None
) -> None:
    """Not JSON: parsed first, it would be a 422; authenticated first, it is a 401."""
    if token == "expired":
        now = datetime.now(UTC)
        token = tocsin.create_token(
            permissions=["schedules:write"],
            now=now - timedelta(hours=2),
            expires_at=now - timedelta(hours=1),
        )
    headers = bearer(token) if token is not None else {}
    for url in ("/api/schedules", "/api/workflows/daily-report/start"):
        resp = client.post(url, content=b"{not json", headers=headers)
        assert resp.status_code == 401 and resp.json() == {"detail": messages.TOKEN_INVALID}


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("POST", "/api/workflows/daily-report/start", {"input": {"user_id": "a\u0000"}}),
        ("POST", "/api/workflows/runs/wfr_1/resume", {"data": {"x": "\u0000"}}),
        (
            "POST",
            "/api/schedules",
            {"workflowId": "daily-report", "cron": "0 9 * * *", "inputData": {"k": "\u0000"}},
        ),
        ("GET", "/api/schedules?workflowId=%00", None),
    ],
)
def test_text_no_database_can_store_is_422_not_500(
    client: TestClient,
    tokens: dict[str, dict[str, str]],
    tocsin: Tocsin,
    method: str,
    path: str,
    body: Any,
) -> None:
    """A NUL character (PostgreSQL text refuses it: a 500 there) is refused up front, as the
    tenant routes' bodies are, before anything is written."""
    resp = client.request(method, path, json=body, headers=tokens["write"])
    assert resp.status_code == 422, resp.text
    assert "detail" in resp.json()
    assert tocsin.schedules.list()["total"] == 2
