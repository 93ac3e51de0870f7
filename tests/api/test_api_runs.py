"""Ticks, runs, retry, messages and staged changes over HTTP (SPEC §6, §8, §9, §10)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from api_support import ADMIN, Clock, Tenant, table_url
from fastapi.testclient import TestClient

from tocsin import messages
from tocsin.service import Tocsin

TICK = "/root/custom-tables/run-due-triggers"
REQUEUE = "/root/custom-tables/trigger-runs/requeue"
COUNT_KEYS = {
    "tables_scanned",
    "tables_with_schedules",
    "runs_created",
    "trigger_runs_requeued",
    "staged_changes_requeued",
    "schedules_fired",
    "lanes_fired",
    "workflow_runs_requeued",
    "lane_attempts_requeued",
}


def notify_every_minute(client: TestClient, tenant: Tenant, table: dict[str, Any]) -> str:
    trigger = {
        "name": "every minute",
        "on": "schedule",
        "schedule": {"type": "interval", "every_seconds": 60},
        "actions": [{"type": "notify", "message": "hello from $trigger.id"}],
    }
    resp = client.put(
        table_url(tenant, table, "/triggers"),
        json={"triggers": [trigger]},
        headers=tenant.moderator,
    )
    assert resp.status_code == 200, resp.text
    trigger_id: str = resp.json()["triggers"][0]["id"]
    return trigger_id


def runs_of(client: TestClient, tenant: Tenant, table: dict[str, Any], **params: Any) -> Any:
    url = table_url(tenant, table, "/trigger-runs")
    resp = client.get(url, params=params, headers=tenant.moderator)
    assert resp.status_code == 200, resp.text
    return resp.json()


def test_a_tick_creates_a_run_that_the_worker_completes(
    client: TestClient, tocsin: Tocsin, clock: Clock, tenant: Tenant, table: dict[str, Any]
) -> None:
    trigger_id = notify_every_minute(client, tenant, table)
    resp = client.post(TICK, headers=ADMIN)
    assert resp.status_code == 200
    counts = resp.json()
    assert set(counts) == COUNT_KEYS and counts["runs_created"] == 1
    page = runs_of(client, tenant, table)
    assert page["total"] == 1 and page["skip"] == 0 and page["limit"] == 50
    (run,) = page["items"]
    assert run["trigger_id"] == trigger_id and run["status"] == "pending"
    assert run["record_id"] is None and run["source"] == "schedule"
    assert tocsin.work(now=clock.now) == 1
    url = table_url(tenant, table, f"/trigger-runs/{run['id']}")
    done = client.get(url, headers=tenant.moderator).json()
    assert done["status"] == "done" and done["action_results"][0]["ok"] is True
    feed = client.get(f"{tenant.prefix}/messages", headers=tenant.member).json()
    assert feed["total"] == 1 and feed["items"][0]["text"] == f"hello from {trigger_id}"
    assert runs_of(client, tenant, table, status="done")["total"] == 1
    assert runs_of(client, tenant, table, status="pending")["total"] == 0
    assert runs_of(client, tenant, table, status="stuck")["total"] == 0


def test_retrying_a_done_run_is_409_with_the_spec_text(
    client: TestClient, tocsin: Tocsin, clock: Clock, tenant: Tenant, table: dict[str, Any]
) -> None:
    notify_every_minute(client, tenant, table)
    client.post(TICK, headers=ADMIN)
    tocsin.work(now=clock.now)
    (run,) = runs_of(client, tenant, table)["items"]
    url = table_url(tenant, table, f"/trigger-runs/{run['id']}/retry")
    resp = client.post(url, headers=tenant.moderator)
    assert resp.status_code == 409
    assert resp.json() == {"detail": messages.retry_refused("done")}


def test_retrying_a_pending_run_keeps_it_pending(
    client: TestClient, tenant: Tenant, table: dict[str, Any]
) -> None:
    notify_every_minute(client, tenant, table)
    client.post(TICK, headers=ADMIN)
    (run,) = runs_of(client, tenant, table)["items"]
    url = table_url(tenant, table, f"/trigger-runs/{run['id']}/retry")
    resp = client.post(url, headers=tenant.moderator)
    assert resp.status_code == 200, resp.text
    assert resp.json()["status"] == "pending" and resp.json()["error"] is None


def test_unknown_runs_are_404(client: TestClient, tenant: Tenant, table: dict[str, Any]) -> None:
    url = table_url(tenant, table, "/trigger-runs/00000000-0000-4000-8000-000000000000")
    for resp in (
        client.get(url, headers=tenant.moderator),
        client.post(f"{url}/retry", headers=tenant.moderator),
    ):
        assert resp.status_code == 404
        assert resp.json() == {"detail": messages.RUN_NOT_FOUND}


def test_a_run_of_another_table_is_404(
    client: TestClient, tenant: Tenant, table: dict[str, Any]
) -> None:
    notify_every_minute(client, tenant, table)
    client.post(TICK, headers=ADMIN)
    (run,) = runs_of(client, tenant, table)["items"]
    second = client.post(
        f"{tenant.prefix}/tables", json={"name": "B", "columns": {}}, headers=tenant.moderator
    ).json()
    url = table_url(tenant, second, f"/trigger-runs/{run['id']}")
    assert client.get(url, headers=tenant.moderator).status_code == 404
    assert client.post(f"{url}/retry", headers=tenant.moderator).status_code == 404


@pytest.mark.parametrize("params", [{"status": "lost"}, {"skip": -1}, {"limit": 0}, {"limit": 501}])
def test_bad_run_filters_are_422(
    client: TestClient, tenant: Tenant, table: dict[str, Any], params: dict[str, Any]
) -> None:
    url = table_url(tenant, table, "/trigger-runs")
    assert client.get(url, params=params, headers=tenant.moderator).status_code == 422


@pytest.mark.parametrize(
    "params",
    [
        {"table_limit": 0},
        {"table_limit": 2001},
        {"record_limit": 0},
        {"record_limit": 10001},
        {"table_limit": "many"},
    ],
)
def test_tick_limits_out_of_range_are_422(client: TestClient, params: dict[str, Any]) -> None:
    assert client.post(TICK, params=params, headers=ADMIN).status_code == 422


def test_tick_limits_at_their_bounds_are_accepted(client: TestClient) -> None:
    bounds = ({"table_limit": 1, "record_limit": 1}, {"table_limit": 2000, "record_limit": 10000})
    for params in bounds:
        assert client.post(TICK, params=params, headers=ADMIN).status_code == 200


def test_requeue_answers_counts(
    client: TestClient, clock: Clock, tenant: Tenant, table: dict[str, Any]
) -> None:
    notify_every_minute(client, tenant, table)
    client.post(TICK, headers=ADMIN)
    clock.now += timedelta(hours=1)
    resp = client.post(REQUEUE, params={"table_id": table["id"]}, headers=ADMIN)
    assert resp.status_code == 200, resp.text
    assert all(isinstance(v, int) for v in resp.json().values())
    assert client.post(REQUEUE, params={"status": "done"}, headers=ADMIN).status_code == 422


def test_staged_changes_list_and_unknown_ids(
    client: TestClient, tenant: Tenant, table: dict[str, Any]
) -> None:
    url = table_url(tenant, table, "/staged-changes")
    page = client.get(url, headers=tenant.moderator).json()
    assert page == {"items": [], "total": 0, "skip": 0, "limit": 50}
    missing = f"{url}/00000000-0000-4000-8000-000000000000"
    assert client.post(f"{missing}/approve", headers=tenant.moderator).status_code == 404
    assert client.post(f"{missing}/reject", headers=tenant.moderator).status_code == 404


def test_messages_page(client: TestClient, tenant: Tenant) -> None:
    resp = client.get(f"{tenant.prefix}/messages", params={"limit": 5}, headers=tenant.member)
    assert resp.json() == {"items": [], "total": 0, "skip": 0, "limit": 5}


def test_a_clock_run_answers_its_dedup_key(
    client: TestClient, clock: Clock, tenant: Tenant, table: dict[str, Any]
) -> None:
    """SPEC §5.4: an interval run's key is its UTC minute ``%Y%m%dT%H%M``."""
    notify_every_minute(client, tenant, table)
    assert client.post(TICK, headers=ADMIN).json()["runs_created"] == 1
    (run,) = runs_of(client, tenant, table)["items"]
    expected = clock.now.strftime("%Y%m%dT%H%M")
    assert run["dedup_key"] == expected
    url = table_url(tenant, table, f"/trigger-runs/{run['id']}")
    assert client.get(url, headers=tenant.moderator).json()["dedup_key"] == expected
