"""The SPEC's exact ``detail`` texts over HTTP where the other API tests leave them to the facade
tests: retry's 409s and its failed-run path (§9.4), the ``stuck`` filter (§8), the staged-change
404 (§9.6), and the §4–§5 config texts a PUT of triggers answers with."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from api_support import ADMIN, Clock, Tenant, table_url
from fastapi.testclient import TestClient

from tocsin import messages
from tocsin.service import Tocsin
from tocsin.store.runs import claim_run

TICK = "/root/custom-tables/run-due-triggers"
# loopback is allowed by the test settings; nothing listens on port 1, so the webhook fails
FAILING = {
    "name": "failing webhook",
    "on": "schedule",
    "schedule": {"type": "interval", "every_seconds": 60},
    "actions": [{"type": "webhook", "url": "http://127.0.0.1:1/hook"}],
}


def put_triggers(client: TestClient, tenant: Tenant, table: dict[str, Any], triggers: Any) -> Any:
    url = table_url(tenant, table, "/triggers")
    return client.put(url, json={"triggers": triggers}, headers=tenant.moderator)


def runs(client: TestClient, tenant: Tenant, table: dict[str, Any], **params: Any) -> Any:
    url = table_url(tenant, table, "/trigger-runs")
    resp = client.get(url, params=params, headers=tenant.moderator)
    assert resp.status_code == 200, resp.text
    return resp.json()


def failed_run(
    client: TestClient, tocsin: Tocsin, clock: Clock, tenant: Tenant, table: dict[str, Any]
) -> dict[str, Any]:
    assert put_triggers(client, tenant, table, [FAILING]).status_code == 200
    assert client.post(TICK, headers=ADMIN).json()["runs_created"] == 1
    assert tocsin.work(now=clock.now) == 1
    (run,) = runs(client, tenant, table)["items"]
    assert run["status"] == "failed" and run["error"]
    return dict(run)


def retry(client: TestClient, tenant: Tenant, table: dict[str, Any], run_id: str) -> Any:
    url = table_url(tenant, table, f"/trigger-runs/{run_id}/retry")
    return client.post(url, headers=tenant.moderator)


def test_a_failed_run_is_stuck_and_its_retry_resets_it_to_pending(
    client: TestClient, tocsin: Tocsin, clock: Clock, tenant: Tenant, table: dict[str, Any]
) -> None:
    run = failed_run(client, tocsin, clock, tenant, table)
    assert [r["id"] for r in runs(client, tenant, table, status="stuck")["items"]] == [run["id"]]
    assert runs(client, tenant, table, status="failed")["total"] == 1
    resp = retry(client, tenant, table, run["id"])
    assert resp.status_code == 200, resp.text
    assert resp.json()["status"] == "pending" and resp.json()["error"] is None
    assert runs(client, tenant, table, status="stuck")["total"] == 0


def test_retry_while_another_run_of_the_clock_trigger_is_active_is_409(
    client: TestClient, tocsin: Tocsin, clock: Clock, tenant: Tenant, table: dict[str, Any]
) -> None:
    first = failed_run(client, tocsin, clock, tenant, table)
    clock.now += timedelta(seconds=61)
    assert client.post(TICK, headers=ADMIN).json()["runs_created"] == 1  # the next window
    resp = retry(client, tenant, table, first["id"])
    assert resp.status_code == 409
    assert resp.json() == {"detail": messages.RETRY_ANOTHER_ACTIVE}


def test_retry_of_a_live_running_run_is_409_and_of_a_stale_one_is_accepted(
    client: TestClient, tocsin: Tocsin, clock: Clock, tenant: Tenant, table: dict[str, Any]
) -> None:
    assert put_triggers(client, tenant, table, [FAILING]).status_code == 200
    client.post(TICK, headers=ADMIN)
    (run,) = runs(client, tenant, table)["items"]
    with tocsin.store.begin() as tx:
        claim_run(tx, run_id=run["id"], now=clock.now)
    resp = retry(client, tenant, table, run["id"])
    assert resp.status_code == 409
    assert resp.json() == {"detail": messages.retry_refused("running")}
    assert runs(client, tenant, table, status="stuck")["total"] == 0
    clock.now += timedelta(seconds=tocsin.settings.stuck_after_s + 1)
    assert runs(client, tenant, table, status="stuck")["total"] == 1
    assert retry(client, tenant, table, run["id"]).json()["status"] == "pending"


def test_an_unknown_staged_change_is_404_with_its_text(
    client: TestClient, tenant: Tenant, table: dict[str, Any]
) -> None:
    url = table_url(tenant, table, "/staged-changes/00000000-0000-4000-8000-000000000000")
    for action in ("approve", "reject"):
        resp = client.post(f"{url}/{action}", headers=tenant.moderator)
        assert resp.status_code == 404
        assert resp.json() == {"detail": messages.STAGED_CHANGE_NOT_FOUND}


def schedule_trigger(schedule: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        "name": "s",
        "on": "schedule",
        "schedule": schedule,
        "actions": [{"type": "notify", "message": "x"}],
        **extra,
    }


CRON = {"type": "cron", "expression": "0 9 * * *"}


@pytest.mark.parametrize(
    ("trigger", "detail"),
    [
        (
            schedule_trigger({"type": "daily", "at": "01:30", "timezone": 8}),
            messages.DAILY_TIMEZONE_NOT_STRING,
        ),
        (
            schedule_trigger({"type": "daily", "at": "01:30", "timezone": "Mars/Olympus"}),
            messages.daily_timezone_unknown("Mars/Olympus"),
        ),
        (
            schedule_trigger({"type": "cron", "expression": "0 0 30 2 *"}),
            None,  # a cron text: checked by prefix below
        ),
        (
            schedule_trigger(CRON, when=[{"column": "Status", "op": "eq", "value": "x"}]),
            messages.CRON_WHEN_NOT_ALLOWED,
        ),
        (
            {**schedule_trigger(CRON), "actions": [{"type": "notify", "message": "$row.Title"}]},
            messages.CRON_ROW_TOKENS,
        ),
    ],
    ids=["tz-not-string", "tz-unknown", "cron-never-fires", "cron-when", "cron-row-token"],
)
def test_schedule_config_errors_are_400_with_the_spec_texts(
    client: TestClient,
    tenant: Tenant,
    table: dict[str, Any],
    trigger: dict[str, Any],
    detail: str | None,
) -> None:
    resp = put_triggers(client, tenant, table, [trigger])
    assert resp.status_code == 400, resp.text
    if detail is None:
        assert resp.json()["detail"].startswith(messages.cron_invalid(""))
    else:
        assert resp.json() == {"detail": detail}


def test_changing_a_schedule_kind_in_place_is_400_with_the_spec_text(
    client: TestClient, tenant: Tenant, table: dict[str, Any]
) -> None:
    saved = put_triggers(client, tenant, table, [FAILING])
    trigger_id = saved.json()["triggers"][0]["id"]
    daily = {**FAILING, "id": trigger_id, "schedule": {"type": "daily", "at": "01:30"}}
    resp = put_triggers(client, tenant, table, [daily])
    assert resp.status_code == 400
    assert resp.json() == {"detail": messages.schedule_kind_change(trigger_id)}


def test_metrics_count_the_runs_ticks_created_and_the_stuck_ones(
    client: TestClient, tocsin: Tocsin, clock: Clock, tenant: Tenant, table: dict[str, Any]
) -> None:
    failed_run(client, tocsin, clock, tenant, table)  # one tick, one run, failed
    text = client.get("/metrics").text
    assert "tocsin_tick_duration_seconds_count 1.0" in text
    assert "tocsin_runs_created_total 1.0" in text
    assert 'tocsin_runs{status="failed"} 1.0' in text
    assert "tocsin_runs_stuck 1.0" in text


def test_a_blank_table_name_is_400_with_its_text(client: TestClient, tenant: Tenant) -> None:
    resp = client.post(
        f"{tenant.prefix}/tables", json={"name": "   ", "columns": {}}, headers=tenant.moderator
    )
    assert resp.status_code == 400
    assert resp.json() == {"detail": messages.TABLE_NAME_INVALID}
