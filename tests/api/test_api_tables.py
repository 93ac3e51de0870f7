"""Tables and records over HTTP (SPEC §2, §15; DESIGN §4b): status codes, shapes, details."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from api_support import COLUMNS, Clock, Tenant, table_url
from fastapi.testclient import TestClient

from tocsin import messages


def test_create_table_answers_201_with_its_columns(
    client: TestClient, tenant: Tenant, table: dict[str, Any]
) -> None:
    assert table["name"] == "Cases"
    assert table["columns"] == COLUMNS
    assert table["scope"] == "chatroom" and table["scope_id"] == tenant.scope_id
    assert table["trashed"] is False
    got = client.get(table_url(tenant, table), headers=tenant.member)
    assert got.status_code == 200
    assert got.json()["id"] == table["id"]


@pytest.mark.parametrize(
    "body",
    [
        {"name": "T", "columns": {"A": "text"}, "extra": 1},
        {"name": "T", "columns": {"A": "colour"}},
        {"name": "", "columns": {}},
        {"columns": {}},
        {"name": 5, "columns": []},
        {"name": "T", "columns": {}, "requires_approval": "yes"},
        {"name": "T", "columns": {}, "requires_approval": 1},
    ],
    ids=[
        "unknown-field",
        "unknown-type",
        "empty-name",
        "no-name",
        "wrong-types",
        "string-flag",
        "integer-flag",
    ],
)
def test_bad_table_bodies_are_422(client: TestClient, tenant: Tenant, body: Any) -> None:
    resp = client.post(f"{tenant.prefix}/tables", json=body, headers=tenant.moderator)
    assert resp.status_code == 422
    assert "detail" in resp.json()


def test_malformed_json_is_422(client: TestClient, tenant: Tenant) -> None:
    resp = client.post(
        f"{tenant.prefix}/tables",
        content=b"{not json",
        headers={**tenant.moderator, "Content-Type": "application/json"},
    )
    assert resp.status_code == 422


@pytest.mark.parametrize("scope", ["team", "CHATROOM"])
def test_unknown_scope_kinds_are_422(client: TestClient, tenant: Tenant, scope: str) -> None:
    url = f"/private/module/custom_tables/{scope}/{tenant.scope_id}/tables"
    resp = client.post(url, json={"name": "T", "columns": {}}, headers=tenant.moderator)
    assert resp.status_code == 422


def test_a_scope_id_that_is_not_a_uuid_is_422(client: TestClient, tenant: Tenant) -> None:
    url = "/private/module/custom_tables/chatroom/not-a-uuid/tables/x"
    assert client.get(url, headers=tenant.member).status_code == 422


def test_an_unknown_table_is_404(client: TestClient, tenant: Tenant) -> None:
    resp = client.get(f"{tenant.prefix}/tables/no-such-table", headers=tenant.member)
    assert resp.status_code == 404
    assert resp.json() == {"detail": messages.TABLE_NOT_FOUND}


def test_trash_then_restore(client: TestClient, tenant: Tenant, table: dict[str, Any]) -> None:
    trashed = client.post(table_url(tenant, table, "/trash"), headers=tenant.moderator)
    assert trashed.status_code == 200, trashed.text
    assert trashed.json()["trashed"] is True
    for suffix in ("", "/records", "/triggers", "/triggers/schedule-preview", "/trigger-runs"):
        resp = client.get(table_url(tenant, table, suffix), headers=tenant.moderator)
        assert resp.status_code == 404, suffix
        assert resp.json() == {"detail": messages.TABLE_NOT_FOUND}
    restored = client.post(table_url(tenant, table, "/restore"), headers=tenant.moderator)
    assert restored.status_code == 200
    assert restored.json()["trashed"] is False
    assert client.get(table_url(tenant, table), headers=tenant.member).status_code == 200


def create_record(
    client: TestClient, tenant: Tenant, table: dict[str, Any], data: dict[str, Any]
) -> Any:
    return client.post(
        table_url(tenant, table, "/records"), json={"data": data}, headers=tenant.moderator
    )


def test_records_create_patch_trash_restore(
    client: TestClient, tenant: Tenant, table: dict[str, Any]
) -> None:
    created = create_record(client, tenant, table, {"Title": "Lease", "Status": "Open"})
    assert created.status_code == 201, created.text
    record = created.json()
    assert record["data"]["Title"] == "Lease" and record["table_id"] == table["id"]
    url = table_url(tenant, table, f"/records/{record['id']}")
    patched = client.patch(url, json={"data": {"Status": "Done"}}, headers=tenant.moderator)
    assert patched.status_code == 200, patched.text
    assert patched.json()["data"]["Status"] == "Done"
    assert patched.json()["data"]["Title"] == "Lease"  # partial update keeps the rest
    trashed = client.post(f"{url}/trash", headers=tenant.moderator)
    assert trashed.status_code == 200 and trashed.json()["trashed"] is True
    listed = client.get(table_url(tenant, table, "/records"), headers=tenant.member).json()
    assert listed["total"] == 0
    restored = client.post(f"{url}/restore", headers=tenant.moderator)
    assert restored.status_code == 200 and restored.json()["trashed"] is False


def test_records_list_pages(
    client: TestClient, clock: Clock, tenant: Tenant, table: dict[str, Any]
) -> None:
    for n in range(5):
        clock.now += timedelta(seconds=1)  # records list in (created_at, id) order
        assert create_record(client, tenant, table, {"Points": n}).status_code == 201
    url = table_url(tenant, table, "/records")
    page = client.get(url, params={"skip": 1, "limit": 2}, headers=tenant.member).json()
    assert page["total"] == 5 and page["skip"] == 1 and page["limit"] == 2
    assert [r["data"]["Points"] for r in page["items"]] == [1, 2]
    for params in ({"skip": -1}, {"limit": 0}, {"limit": 501}, {"limit": "x"}):
        assert client.get(url, params=params, headers=tenant.member).status_code == 422


def test_a_value_of_the_wrong_type_is_400_naming_the_column(
    client: TestClient, tenant: Tenant, table: dict[str, Any]
) -> None:
    resp = create_record(client, tenant, table, {"Points": "many"})
    assert resp.status_code == 400
    assert "Points" in resp.json()["detail"]


@pytest.mark.parametrize(
    "body", [{"data": {}, "extra": 1}, {"data": []}, {}], ids=["extra", "list", "missing"]
)
def test_bad_record_bodies_are_422(
    client: TestClient, tenant: Tenant, table: dict[str, Any], body: Any
) -> None:
    url = table_url(tenant, table, "/records")
    assert client.post(url, json=body, headers=tenant.moderator).status_code == 422


def test_an_unknown_record_is_404(
    client: TestClient, tenant: Tenant, table: dict[str, Any]
) -> None:
    url = table_url(tenant, table, "/records/00000000-0000-4000-8000-000000000000")
    resp = client.patch(url, json={"data": {"Title": "x"}}, headers=tenant.moderator)
    assert resp.status_code == 404
    assert resp.json() == {"detail": messages.RECORD_NOT_FOUND}
    assert client.post(f"{url}/trash", headers=tenant.moderator).status_code == 404


def test_nul_characters_are_refused_before_the_database(
    client: TestClient, tenant: Tenant, table: dict[str, Any]
) -> None:
    """PostgreSQL text cannot hold NUL: ids and bodies carrying one are 422, never 500."""
    for method, suffix in (
        ("GET", "/trigger-runs/a%00b"),
        ("POST", "/records/a%00b/trash"),
        ("POST", "/staged-changes/a%00b/approve"),
    ):
        resp = client.request(method, table_url(tenant, table, suffix), headers=tenant.moderator)
        assert resp.status_code == 422, suffix
    assert client.get(f"{tenant.prefix}/tables/a%00b", headers=tenant.member).status_code == 422
    for url, body in (
        (f"{tenant.prefix}/tables", {"name": "a\u0000b", "columns": {}}),
        (f"{tenant.prefix}/tables", {"name": "T", "columns": {"x\u0000": "text"}}),
        (table_url(tenant, table, "/records"), {"data": {"Title": "a\u0000b"}}),
    ):
        resp = client.post(url, json=body, headers=tenant.moderator)
        assert resp.status_code == 422, body
        assert messages.BODY_NUL in resp.json()["detail"][0]["msg"]
    triggers = {"triggers": [{"id": "trg\u0000", "on": "created", "actions": []}]}
    resp = client.put(
        table_url(tenant, table, "/triggers"), json=triggers, headers=tenant.moderator
    )
    assert resp.status_code == 422


@pytest.mark.parametrize(
    ("raw", "detail"),
    [
        (b'{"data": {"Points": NaN}}', messages.BODY_NON_FINITE),
        (b'{"data": {"Points": 1e999}}', messages.BODY_NON_FINITE),
        (b'{"data": {"Title": ' + b"[" * 100 + b"]" * 100 + b"}}", messages.body_too_deep(64)),
    ],
    ids=["nan", "infinity", "too-deep"],
)
def test_bodies_no_column_can_hold_are_422(
    client: TestClient, tenant: Tenant, table: dict[str, Any], raw: bytes, detail: str
) -> None:
    headers = {**tenant.moderator, "Content-Type": "application/json"}
    resp = client.post(table_url(tenant, table, "/records"), content=raw, headers=headers)
    assert resp.status_code == 422
    assert detail in resp.json()["detail"][0]["msg"]


@pytest.mark.parametrize(
    ("method", "suffix", "raw"),
    [
        ("POST", "/records", b'{"data": {"Title": "\\ud800"}}'),
        ("POST", "/records", b'{"data": {"\\udc00x": "a"}}'),
        ("POST", "/records", b'{"data": {"Title": "ok", "Points": 1, "x": ["\\ud83d"]}}'),
        ("PUT", "/triggers", b'{"triggers": [{"name": "\\ud800", "on": "created"}]}'),
        ("POST", "", b'{"name": "\\ud800", "columns": {}}'),
    ],
    ids=["record-value", "record-key", "nested", "trigger-name", "table-name"],
)
def test_lone_surrogates_are_422_not_500(
    client: TestClient,
    tenant: Tenant,
    table: dict[str, Any],
    method: str,
    suffix: str,
    raw: bytes,
) -> None:
    """JSON's \\ud800 escape decodes to a lone surrogate no database or UTF-8 answer can hold:
    refused at the edge with a readable 422 (the echoed input is escaped), and nothing stored."""
    url = f"{tenant.prefix}/tables" if suffix == "" else table_url(tenant, table, suffix)
    headers = {**tenant.moderator, "Content-Type": "application/json"}
    resp = client.request(method, url, content=raw, headers=headers)
    assert resp.status_code == 422, resp.text
    assert messages.BODY_SURROGATE in resp.json()["detail"][0]["msg"]
    records = client.get(table_url(tenant, table, "/records"), headers=tenant.member)
    assert records.status_code == 200 and records.json()["total"] == 0
