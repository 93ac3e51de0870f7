"""``tocsin serve --app …`` as a real process (SPEC §12, §16): declared schedules synced on start,
fired by the embedded ticker, executed by its worker; a schedule paused and resumed over HTTP;
fires and runs read back over HTTP; SIGTERM exits 0."""

from __future__ import annotations

import signal
import subprocess
from datetime import datetime
from typing import Any

import httpx
import pytest

from support.processes import TOCSIN, ServedProcess, stop, tocsin_env
from support.waiting import wait_for

pytestmark = pytest.mark.slow

APP = "workflows.e2e_app:WORKFLOWS"
WATCHED = "/api/schedules/wf_e2e__watched"
WITNESS = "/api/schedules/wf_e2e__witness"


@pytest.fixture
def env(store_url: str, at_head: None) -> dict[str, str]:
    return tocsin_env(store_url, tick_every_s="0.3", tests_importable=True)


@pytest.fixture
def serve_app() -> str:
    return APP


def token(env: dict[str, str]) -> str:
    out = subprocess.run(
        [TOCSIN, "tokens", "create", "--permission", "schedules:write"],
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    return out.stdout.strip().splitlines()[-1]


def _at(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def fires(http: httpx.Client, url: str) -> dict[str, Any]:
    resp = http.get(f"{url}/fires", params={"limit": 500})
    assert resp.status_code == 200, resp.text
    body: dict[str, Any] = resp.json()
    return body


def test_serve_app_fires_pauses_and_resumes_over_http(
    env: dict[str, str], served: tuple[ServedProcess, str]
) -> None:
    proc, base = served
    headers = {"Authorization": f"Bearer {token(env)}"}
    with httpx.Client(base_url=base, headers=headers, timeout=10) as http:
        listed = http.get("/api/schedules", params={"workflowId": "e2e"}).json()
        assert {s["id"] for s in listed["items"]} == {"wf_e2e__watched", "wf_e2e__witness"}
        # a fire whose run the in-process worker completed, read back over HTTP
        done = wait_for(
            "a successful fire",
            lambda: [f for f in fires(http, WATCHED)["items"] if f["run_status"] == "success"],
        )
        run = http.get(f"/api/workflows/runs/{done[0]['run_id']}").json()
        assert run["status"] == "success" and run["trigger"] == "scheduled"
        assert run["output"] == {"ok": True, "user_id": "watched"}
        fired_at, scheduled_for = (_at(done[0][k]) for k in ("fired_at", "scheduled_for"))
        assert fired_at >= scheduled_for and scheduled_for.microsecond == 0

        paused = http.post(f"{WATCHED}/pause")
        assert paused.status_code == 200 and paused.json()["paused"] is True
        frozen = fires(http, WATCHED)["total"]
        seen = fires(http, WITNESS)["total"]
        wait_for("three more witness fires", lambda: fires(http, WITNESS)["total"] >= seen + 3)
        assert fires(http, WATCHED)["total"] == frozen  # nothing fired while paused
        assert http.get(WATCHED).json()["paused"] is True

        resumed = http.post(f"{WATCHED}/resume").json()
        assert resumed["paused"] is False
        wait_for("a fire after resume", lambda: fires(http, WATCHED)["total"] > frozen)
        runs = http.get("/api/workflows/e2e/runs", params={"status": "success"}).json()
        assert runs["total"] >= 2
    assert stop(proc, signal.SIGTERM) == 0
