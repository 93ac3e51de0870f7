"""The approval gate over HTTP (SPEC §9.6) and SCP exclusivity (SPEC §2).

A table created with ``requires_approval`` turns a trigger's write into a staged change; a
moderator lists it, approves or rejects it, and a worker applies the approved one.
"""

from __future__ import annotations

from typing import Any

from api_support import Clock, Tenant, TestClient, table_url

from tocsin import messages
from tocsin.service import Tocsin

MARK_REVIEWED = {
    "name": "mark reviewed",
    "on": "updated",
    "when": [{"column": "Status", "op": "eq", "value": "Open"}],
    "actions": [{"type": "update_record", "record": "$row", "values": {"Note": "reviewed"}}],
}


def gated_table(client: TestClient, tenant: Tenant) -> dict[str, Any]:
    body = {
        "name": "Gated",
        "columns": {"Status": "text", "Note": "text"},
        "requires_approval": True,
    }
    resp = client.post(f"{tenant.prefix}/tables", json=body, headers=tenant.moderator)
    assert resp.status_code == 201, resp.text
    table: dict[str, Any] = resp.json()
    assert table["requires_approval"] is True
    put = client.put(
        table_url(tenant, table, "/triggers"),
        json={"triggers": [MARK_REVIEWED]},
        headers=tenant.moderator,
    )
    assert put.status_code == 200, put.text
    return table


def stage_one(
    client: TestClient, tocsin: Tocsin, clock: Clock, tenant: Tenant, table: dict[str, Any]
) -> tuple[str, dict[str, Any]]:
    url = table_url(tenant, table, "/records")
    record = client.post(url, json={"data": {"Status": "New"}}, headers=tenant.moderator).json()
    patch = {"data": {"Status": "Open"}}
    client.patch(f"{url}/{record['id']}", json=patch, headers=tenant.moderator)
    assert tocsin.work(now=clock.now) == 1
    page = client.get(table_url(tenant, table, "/staged-changes"), headers=tenant.moderator)
    assert page.status_code == 200
    (change,) = page.json()["items"]
    return record["id"], change


def test_an_approved_change_is_applied_by_the_worker(
    client: TestClient, tocsin: Tocsin, clock: Clock, tenant: Tenant
) -> None:
    table = gated_table(client, tenant)
    record_id, change = stage_one(client, tocsin, clock, tenant, table)
    url = table_url(tenant, table, f"/staged-changes/{change['id']}")
    approved = client.post(f"{url}/approve", headers=tenant.moderator)
    assert approved.status_code == 200, approved.text
    assert approved.json()["status"] == "approved"
    refused = client.post(f"{url}/reject", headers=tenant.moderator)
    assert refused.status_code == 409
    assert refused.json() == {"detail": messages.staged_change_decided("approved")}
    tocsin.work(now=clock.now)
    records = client.get(table_url(tenant, table, "/records"), headers=tenant.member).json()
    (record,) = [r for r in records["items"] if r["id"] == record_id]
    assert record["data"]["Note"] == "reviewed"


def test_a_rejected_change_writes_nothing(
    client: TestClient, tocsin: Tocsin, clock: Clock, tenant: Tenant
) -> None:
    table = gated_table(client, tenant)
    record_id, change = stage_one(client, tocsin, clock, tenant, table)
    url = table_url(tenant, table, f"/staged-changes/{change['id']}")
    rejected = client.post(f"{url}/reject", headers=tenant.moderator)
    assert rejected.status_code == 200 and rejected.json()["status"] == "rejected"
    tocsin.work(now=clock.now)
    records = client.get(table_url(tenant, table, "/records"), headers=tenant.member).json()
    (record,) = [r for r in records["items"] if r["id"] == record_id]
    assert "Note" not in record["data"] or record["data"]["Note"] in (None, "")


def test_a_table_with_scp_rules_takes_no_triggers(client: TestClient, tenant: Tenant) -> None:
    body = {"name": "Secure", "columns": {"Status": "text"}, "scp_rules": [{"rule": "floor"}]}
    table = client.post(f"{tenant.prefix}/tables", json=body, headers=tenant.moderator).json()
    resp = client.put(
        table_url(tenant, table, "/triggers"),
        json={"triggers": [MARK_REVIEWED]},
        headers=tenant.moderator,
    )
    assert resp.status_code == 400
    assert resp.json() == {"detail": messages.SCP_WITH_TRIGGERS}
