"""Triggers config and schedule preview over HTTP (SPEC §3–§5, §7)."""

from __future__ import annotations

from typing import Any

import pytest
from api_support import Tenant, table_url
from api_support import put_triggers as put
from fastapi.testclient import TestClient

from tocsin import messages

INTERVAL = {
    "name": "hourly",
    "on": "schedule",
    "schedule": {"type": "interval", "every_seconds": 3600},
    "actions": [{"type": "notify", "message": "tick"}],
}


def test_a_new_table_has_no_triggers(
    client: TestClient, tenant: Tenant, table: dict[str, Any]
) -> None:
    resp = client.get(table_url(tenant, table, "/triggers"), headers=tenant.moderator)
    assert resp.status_code == 200
    assert resp.json() == {"triggers": []}


def test_put_replaces_the_list_and_assigns_ids(
    client: TestClient, tenant: Tenant, table: dict[str, Any]
) -> None:
    resp = put(client, tenant, table, [INTERVAL])
    assert resp.status_code == 200, resp.text
    (saved,) = resp.json()["triggers"]
    assert saved["id"].startswith("trg_") and saved["actions"][0]["id"]
    got = client.get(table_url(tenant, table, "/triggers"), headers=tenant.moderator).json()
    assert got == resp.json()
    assert put(client, tenant, table, []).json() == {"triggers": []}


def test_an_invalid_schedule_type_is_400_with_the_spec_text(
    client: TestClient, tenant: Tenant, table: dict[str, Any]
) -> None:
    bad = {**INTERVAL, "schedule": {"type": "monthly"}}
    resp = put(client, tenant, table, [bad])
    assert resp.status_code == 400
    assert resp.json() == {"detail": messages.invalid_schedule_type("monthly")}


def test_a_boolean_offset_is_400_with_the_spec_text(
    client: TestClient, tenant: Tenant, table: dict[str, Any]
) -> None:
    trigger = {
        **INTERVAL,
        "schedule": {"type": "date_column_reached", "column": "Due", "offset_minutes": True},
    }
    resp = put(client, tenant, table, [trigger])
    assert resp.status_code == 400
    assert resp.json() == {"detail": messages.OFFSET_MINUTES_INVALID}


@pytest.mark.parametrize(
    "body",
    [{"triggers": {}}, {"triggers": [1]}, {}, {"triggers": [], "x": 1}],
    ids=["object", "not-objects", "missing", "extra"],
)
def test_bad_trigger_bodies_are_422(
    client: TestClient, tenant: Tenant, table: dict[str, Any], body: Any
) -> None:
    url = table_url(tenant, table, "/triggers")
    assert client.put(url, json=body, headers=tenant.moderator).status_code == 422


def test_the_preview_reports_without_creating_runs(
    client: TestClient, tenant: Tenant, table: dict[str, Any]
) -> None:
    assert put(client, tenant, table, [INTERVAL]).status_code == 200
    url = table_url(tenant, table, "/triggers/schedule-preview")
    resp = client.get(url, headers=tenant.moderator)
    assert resp.status_code == 200, resp.text
    doc = resp.json()
    assert doc["table_id"] == table["id"]
    assert doc["evaluated_at"] == "2026-08-27T05:02:13"
    (arm,) = doc["triggers"]
    assert arm["kind"] == "interval" and arm["config_status"] == "valid"
    assert arm["due_now"] is True
    runs = client.get(table_url(tenant, table, "/trigger-runs"), headers=tenant.moderator)
    assert runs.json()["total"] == 0
