"""The app's own surface: OpenAPI, docs, metrics, health, and error rendering (SPEC §15)."""

from __future__ import annotations

import logging

import pytest
from api_support import TestClient
from fastapi import FastAPI

from tocsin import messages
from tocsin.api.app import create_app
from tocsin.errors import Conflict, TransientStoreError
from tocsin.service import Tocsin


def test_openapi_and_docs_are_served(client: TestClient) -> None:
    schema = client.get("/openapi.json").json()
    paths = schema["paths"]
    prefix = "/private/module/custom_tables/{scope}/{scope_id}"
    for path in (
        f"{prefix}/tables",
        f"{prefix}/tables/{{table_id}}/triggers/schedule-preview",
        f"{prefix}/tables/{{table_id}}/trigger-runs/{{run_id}}/retry",
        "/private/module/custom_tables/chatroom/{chatroom_id}/messages",
        "/root/custom-tables/run-due-triggers",
        "/root/custom-tables/trigger-runs/requeue",
    ):
        assert path in paths, path
    assert "/demo/echo" not in paths
    assert client.get("/docs").status_code == 200


def test_health_and_metrics(client: TestClient) -> None:
    assert client.get("/healthz").json() == {"status": "ok"}
    client.post("/root/custom-tables/run-due-triggers", headers={"X-ADMIN-TOKEN": "admin-secret"})
    text = client.get("/metrics").text
    assert "tocsin_tick_duration_seconds_count 1.0" in text
    assert "tocsin_runs_created_total 0.0" in text
    assert 'tocsin_runs{status="pending"} 0.0' in text
    assert "tocsin_runs_stuck 0.0" in text


def test_demo_routes_exist_only_in_demo_mode(tocsin: Tocsin) -> None:
    with TestClient(create_app(tocsin=tocsin, demo_routes=True)) as client:
        assert client.post("/demo/echo", json={"a": 1}).json()["ok"] is True
        assert client.get("/demo/echo").json() == {"received": 1}


@pytest.fixture
def failing_app(tocsin: Tocsin) -> FastAPI:
    app = create_app(tocsin=tocsin)

    @app.get("/boom")
    def boom() -> None:
        raise RuntimeError("a real bug")

    @app.get("/conflict")
    def conflict() -> None:
        raise Conflict("nope")

    @app.get("/locked")
    def locked() -> None:
        raise TransientStoreError("database is locked")

    return app


def test_a_bug_is_logged_and_answered_500_as_json(
    failing_app: FastAPI, caplog: pytest.LogCaptureFixture
) -> None:
    with (
        TestClient(failing_app, raise_server_exceptions=False) as client,
        caplog.at_level(logging.ERROR, logger="tocsin.api"),
    ):
        resp = client.get("/boom")
    assert resp.status_code == 500
    assert resp.json() == {"detail": messages.INTERNAL_ERROR}
    assert any(r.exc_info and "a real bug" in str(r.exc_info[1]) for r in caplog.records)


def test_tocsin_errors_keep_their_status_and_detail(failing_app: FastAPI) -> None:
    with TestClient(failing_app) as client:
        resp = client.get("/conflict")
    assert resp.status_code == 409
    assert resp.json() == {"detail": "nope"}


def test_a_lock_conflict_is_503_with_retry_after(failing_app: FastAPI) -> None:
    with TestClient(failing_app) as client:
        resp = client.get("/locked")
    assert resp.status_code == 503
    assert resp.json() == {"detail": "database is locked"}
    assert resp.headers["Retry-After"] == "1"
