"""Pause and resume of a table's schedule trigger over HTTP (issue 12): ``POST
…/tables/{id}/triggers/{trigger_id}/pause|resume``, moderator only, kept across ``PUT
…/triggers``, shown in the schedule preview."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from api_support import ADMIN, NOW, Clock, Tenant, table_url
from fastapi.testclient import TestClient

from tocsin import messages
from tocsin.service import Tocsin

TICK = "/root/custom-tables/run-due-triggers"
HOURLY = {
    "name": "hourly",
    "on": "schedule",
    "schedule": {"type": "interval", "every_seconds": 3600},
    "actions": [{"type": "notify", "message": "tick"}],
}
ON_CREATE = {"name": "on-create", "on": "created", "actions": [{"type": "notify", "message": "x"}]}


def put(client: TestClient, tenant: Tenant, table: dict[str, Any], triggers: Any) -> Any:
    url = table_url(tenant, table, "/triggers")
    resp = client.put(url, json={"triggers": triggers}, headers=tenant.moderator)
    assert resp.status_code == 200, resp.text
    return resp.json()["triggers"]


def post(
    client: TestClient, tenant: Tenant, table: dict[str, Any], trigger_id: str, verb: str
) -> Any:
    url = table_url(tenant, table, f"/triggers/{trigger_id}/{verb}")
    return client.post(url, headers=tenant.moderator)


def tick(client: TestClient) -> int:
    resp = client.post(TICK, headers=ADMIN)
    assert resp.status_code == 200, resp.text
    return int(resp.json()["runs_created"])


def preview_arm(client: TestClient, tenant: Tenant, table: dict[str, Any]) -> dict[str, Any]:
    url = table_url(tenant, table, "/triggers/schedule-preview")
    [arm] = client.get(url, headers=tenant.moderator).json()["triggers"]
    return dict(arm)


def test_pause_no_fire_put_keeps_it_resume_no_backlog_then_next_window(
    client: TestClient, tocsin: Tocsin, clock: Clock, tenant: Tenant, table: dict[str, Any]
) -> None:
    [saved] = put(client, tenant, table, [HOURLY])
    assert tick(client) == 1
    assert tocsin.work(now=clock.now) == 1  # the run ends: one active run blocks no window
    runs_url = table_url(tenant, table, "/trigger-runs")
    [run] = client.get(runs_url, headers=tenant.moderator).json()["items"]
    assert run["scheduled_for"].startswith("2026-08-27T05:02:13")

    clock.now = NOW + timedelta(minutes=5)
    resp = post(client, tenant, table, saved["id"], "pause")
    assert resp.status_code == 200, resp.text
    assert resp.json()["paused"] is True and resp.json()["paused_at"] == "2026-08-27T05:07:13"
    assert post(client, tenant, table, saved["id"], "pause").json() == resp.json()  # idempotent

    clock.now = NOW + timedelta(hours=1)
    assert tick(client) == 0
    arm = preview_arm(client, tenant, table)
    assert arm["paused"] is True and arm["due_now"] is False
    assert arm["warnings"] == ["trigger_paused"]
    put(client, tenant, table, [{**saved, "name": "renamed"}])  # never unpauses
    assert preview_arm(client, tenant, table)["paused"] is True

    clock.now = NOW + timedelta(days=7, minutes=10)
    assert tick(client) == 0
    resumed = post(client, tenant, table, saved["id"], "resume")
    assert resumed.status_code == 200, resumed.text
    assert resumed.json()["paused"] is False
    assert resumed.json()["next_due_at"] == "2026-09-03T06:02:13"
    assert tick(client) == 0  # no backlog
    assert "paused" not in preview_arm(client, tenant, table)
    clock.now = NOW + timedelta(days=7, hours=1)
    assert tick(client) == 1
    items = client.get(runs_url, headers=tenant.moderator).json()["items"]
    assert len(items) == 2


def test_errors_404_409_and_role(
    client: TestClient, tenant: Tenant, other: Tenant, table: dict[str, Any]
) -> None:
    scheduled, row_event = put(client, tenant, table, [HOURLY, ON_CREATE])
    resp = post(client, tenant, table, row_event["id"], "pause")
    assert resp.status_code == 409
    assert resp.json() == {"detail": messages.trigger_not_pausable(row_event["id"], "created")}
    resp = post(client, tenant, table, "trg_000000000099", "resume")
    assert resp.status_code == 404
    assert resp.json() == {"detail": messages.TRIGGER_NOT_FOUND}
    missing = {**table, "id": "00000000-0000-4000-8000-000000000000"}
    resp = post(client, tenant, missing, scheduled["id"], "pause")
    assert resp.status_code == 404
    assert resp.json() == {"detail": messages.TABLE_NOT_FOUND}
    url = table_url(tenant, table, f"/triggers/{scheduled['id']}/pause")
    assert client.post(url, headers=tenant.member).status_code == 403
    assert client.post(url, headers=other.moderator).status_code in (403, 404)
    assert client.post(url).status_code == 401
    assert "paused" not in preview_arm(client, tenant, table)  # nothing was written
