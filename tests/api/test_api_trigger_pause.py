"""Pause and resume of a table's schedule trigger over HTTP: ``POST
…/tables/{id}/triggers/{trigger_id}/pause|resume``, moderator only, kept across ``PUT
…/triggers``, shown in the schedule preview."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from api_support import ADMIN, NOW, Clock, Tenant, table_url
from api_support import save_triggers as put
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


DUE = {
    "name": "due",
    "on": "schedule",
    "schedule": {"type": "date_column_reached", "column": "Due"},
    "actions": [{"type": "notify", "message": "due"}],
}
SIX = {
    "already_fired",
    "missing_schedule_value",
    "invalid_schedule_value",
    "scheduled_for_future",
    "when_filter_mismatch",
    "due_now",
}


def _counts_hold(arm: dict[str, Any], live: int) -> None:
    """SPEC §7: exactly the six counts, their sum scanned, the rest unscanned."""
    counted = {k for k, v in arm.items() if isinstance(v, int) and not isinstance(v, bool)}
    assert counted == SIX | {"records_scanned", "unscanned"}, arm
    assert arm["records_scanned"] == sum(arm[k] for k in SIX)
    assert live == arm["records_scanned"] + arm["unscanned"]
    assert arm["truncated"] is (arm["unscanned"] > 0)


def test_a_date_value_due_during_a_pause_counts_as_already_fired_and_is_skipped_paused(
    client: TestClient, clock: Clock, tenant: Tenant, table: dict[str, Any]
) -> None:
    [saved] = put(client, tenant, table, [DUE])
    records = table_url(tenant, table, "/records")

    def insert(due: str) -> str:
        resp = client.post(records, json={"data": {"Due": due}}, headers=tenant.moderator)
        assert resp.status_code == 201, resp.text
        return str(resp.json()["id"])

    fired = insert("2026-08-27T01:00")
    assert tick(client) == 1
    clock.now = NOW + timedelta(minutes=5)
    assert post(client, tenant, table, saved["id"], "pause").status_code == 200
    during = insert("2026-08-28T09:00")  # falls due while paused: never fires
    later = insert("2026-09-10T09:00")

    clock.now = NOW + timedelta(days=2)
    assert tick(client) == 0
    arm = preview_arm(client, tenant, table)
    assert arm["paused"] is True and arm["paused_since"] == "2026-08-27T05:07:13"
    assert (arm["already_fired"], arm["scheduled_for_future"], arm["due_now"]) == (1, 1, 0)
    _counts_hold(arm, 3)

    clock.now = NOW + timedelta(days=3)
    assert post(client, tenant, table, saved["id"], "resume").status_code == 200
    arm = preview_arm(client, tenant, table)
    assert "paused" not in arm and "paused_since" not in arm
    assert (arm["already_fired"], arm["due_now"]) == (1, 0)
    _counts_hold(arm, 3)
    assert tick(client) == 0  # scans the page: the value is consumed, without a run
    skips_url = table_url(tenant, table, f"/triggers/{saved['id']}/skips")
    page = client.get(skips_url, headers=tenant.moderator).json()
    assert page["items"] == [
        {
            "reason": "paused",
            "first_instant": "2026-08-27T05:07:13",
            "last_instant": "2026-08-30T05:02:13",
            "count": 1,
            "count_is_lower_bound": False,
        }
    ]
    clock.now = NOW + timedelta(days=20)
    assert tick(client) == 1
    runs = client.get(table_url(tenant, table, "/trigger-runs"), headers=tenant.moderator)
    assert {r["record_id"] for r in runs.json()["items"]} == {fired, later}
    assert during not in {r["record_id"] for r in runs.json()["items"]}
    arm = preview_arm(client, tenant, table)
    assert arm["already_fired"] == 3
    _counts_hold(arm, 3)
    assert client.get(skips_url, headers=tenant.moderator).json()["total"] == 1
