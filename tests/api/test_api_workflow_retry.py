"""A workflow's retry, alert and timeout policies over HTTP: ``GET /api/workflows/{id}`` shows
them, a run shows its attempt number, ``next_attempt_at``, the policy in force and the alert's
outcome."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from api_support import Clock, TestClient, bearer

from tocsin import Schedule, step, workflow
from tocsin.service import Tocsin

POLICY = {"max_attempts": 2, "backoff_s": 30, "jitter": False}
ALERTS = [{"type": "invoke_command", "command": "page", "inputs": {"e": "$run.error"}}]


@step(id="wobbly", timeout_s=5)
def wobbly(data: Any) -> Any:
    raise RuntimeError("upstream 503")


@pytest.fixture
def read(tocsin: Tocsin) -> dict[str, str]:
    pages: list[Any] = []
    tocsin.register_command("page", pages.append)
    sched = Schedule(cron="0 9 * * *", timezone="UTC", retry={"max_attempts": 4})
    tocsin.register_workflows(
        [
            workflow(id="wob", schedule=sched, retry=POLICY, on_failure=ALERTS, timeout_s=60)
            .then(wobbly)
            .commit()
        ]
    )
    return bearer(tocsin.create_token(permissions=["schedules:read"]))


def test_policies_and_attempts_over_http(
    client: TestClient, read: dict[str, str], tocsin: Tocsin, clock: Clock
) -> None:
    shown = client.get("/api/workflows/wob", headers=read).json()
    assert shown["retry"] == POLICY and shown["timeout_s"] == 60
    assert shown["on_failure"][0]["command"] == "page"
    assert shown["steps"] == [{"id": "wobbly", "parallel": False, "retry": None, "timeout_s": 5.0}]
    assert shown["schedule_policies"] == {
        "wf_wob": {"retry": {"max_attempts": 4}, "on_failure": None}
    }
    run = tocsin.start_workflow("wob", {}, now=clock.now)
    got = client.get(f"/api/workflows/runs/{run['id']}", headers=read).json()
    assert got["status"] == "pending" and got["attempt"] == 2 and got["alert"] is None
    assert got["next_attempt_at"].startswith(
        (clock.now + timedelta(seconds=30)).strftime("%Y-%m-%dT%H:%M:%S")
    )
    assert got["retry"]["max_attempts"] == 2 and got["retry"]["backoff_s"] == 30
    tocsin.work(now=clock.now + timedelta(seconds=30))
    done = client.get(f"/api/workflows/runs/{run['id']}", headers=read).json()
    assert done["status"] == "failed" and done["next_attempt_at"] is None
    assert done["alert"]["status"] == "sent"
    assert done["alert"]["results"][0]["id"] == "on-failure-1"
