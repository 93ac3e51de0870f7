"""Size and count limits over HTTP: clear 400s at save and write, and capped renders."""

from __future__ import annotations

import uuid
from typing import Any

from api_support import NOW, Tenant, TestClient, table_url

from tocsin import messages
from tocsin.service import Tocsin
from tocsin.store.records import set_table_triggers

LATER = NOW.replace(second=59)


def put_triggers(
    client: TestClient, tenant: Tenant, table: dict[str, Any], *actions: dict[str, Any]
) -> Any:
    body = {"triggers": [{"id": "trg_1", "on": "created", "actions": list(actions)}]}
    return client.put(table_url(tenant, table, "/triggers"), json=body, headers=tenant.moderator)


def runs(client: TestClient, tenant: Tenant, table: dict[str, Any]) -> list[dict[str, Any]]:
    resp = client.get(table_url(tenant, table, "/trigger-runs"), headers=tenant.moderator)
    assert resp.status_code == 200, resp.text
    items: list[dict[str, Any]] = resp.json()["items"]
    return items


def feed(client: TestClient, tenant: Tenant) -> list[dict[str, Any]]:
    url = f"/private/module/custom_tables/chatroom/{tenant.scope_id}/messages"
    resp = client.get(url, headers=tenant.member)
    assert resp.status_code == 200, resp.text
    items: list[dict[str, Any]] = resp.json()["items"]
    return items


def test_put_triggers_refuses_a_notify_into_another_tenants_chatroom(
    client: TestClient, tenant: Tenant, other: Tenant, table: dict[str, Any]
) -> None:
    action = {"type": "notify", "chatroom_id": other.scope_id, "message": "spam"}
    resp = put_triggers(client, tenant, table, action)
    assert resp.status_code == 400
    assert resp.json() == {"detail": messages.notify_other_chatroom(other.scope_id)}
    got = client.get(table_url(tenant, table, "/triggers"), headers=tenant.moderator)
    assert got.json() == {"triggers": []}
    own = {"type": "notify", "chatroom_id": tenant.scope_id, "message": "ok"}
    assert put_triggers(client, tenant, table, own).status_code == 200


def test_a_stored_cross_tenant_notify_fails_its_run(
    client: TestClient, tocsin: Tocsin, tenant: Tenant, other: Tenant, table: dict[str, Any]
) -> None:
    stored = {"id": "act_1", "type": "notify", "chatroom_id": other.scope_id, "message": "x"}
    with tocsin.store.begin() as tx:
        trigger = {"id": "trg_1", "on": "created", "actions": [stored]}
        set_table_triggers(tx, table_id=table["id"], triggers=[trigger], now=NOW)
    url = table_url(tenant, table, "/records")
    assert client.post(url, json={"data": {"Title": "x"}}, headers=tenant.moderator).is_success
    assert tocsin.work(now=LATER) == 1
    (run,) = runs(client, tenant, table)
    assert (run["status"], run["error"]) == (
        "failed",
        messages.notify_other_chatroom(other.scope_id),
    )
    assert feed(client, other) == [] and feed(client, tenant) == []


def test_a_template_past_the_rendered_cap_fails_its_run_and_posts_nothing(
    client: TestClient, tocsin: Tocsin, tenant: Tenant, table: dict[str, Any]
) -> None:
    """A 200 KB cell (within the record limit) repeated 200 times would be a 40 MB message."""
    resp = put_triggers(client, tenant, table, {"type": "notify", "message": "$row.Title " * 200})
    assert resp.status_code == 200, resp.text
    url = table_url(tenant, table, "/records")
    resp = client.post(url, json={"data": {"Title": "x" * 200_000}}, headers=tenant.moderator)
    assert resp.status_code == 201, resp.text
    assert tocsin.work(now=LATER) == 1
    (run,) = runs(client, tenant, table)
    assert (run["status"], run["error"]) == ("failed", messages.rendered_too_large(64 * 1024))
    assert feed(client, tenant) == []


def test_a_record_past_the_size_limit_is_a_400_and_writes_nothing(
    client: TestClient, tenant: Tenant, table: dict[str, Any]
) -> None:
    assert put_triggers(client, tenant, table, {"type": "notify", "message": "$row.id"}).is_success
    url = table_url(tenant, table, "/records")
    data = {"Title": "x" * 300_000}
    resp = client.post(url, json={"data": data}, headers=tenant.moderator)
    assert resp.status_code == 400
    assert resp.json() == {"detail": messages.record_too_large(300_012, 256 * 1024)}
    assert client.get(url, headers=tenant.member).json()["total"] == 0
    assert runs(client, tenant, table) == []


def test_3000_columns_are_a_400_at_table_creation(client: TestClient, tenant: Tenant) -> None:
    columns = {f"c{i}": "text" for i in range(3000)}
    resp = client.post(
        f"{tenant.prefix}/tables",
        json={"name": "Wide", "columns": columns},
        headers=tenant.moderator,
    )
    assert resp.status_code == 400
    assert resp.json() == {"detail": messages.too_many_columns(3000, 200)}
    long_name = {"n" * 65: "text"}
    resp = client.post(
        f"{tenant.prefix}/tables",
        json={"name": "Long", "columns": long_name},
        headers=tenant.moderator,
    )
    assert resp.json() == {"detail": messages.column_name_too_long("n" * 65, 64)}


def test_too_many_triggers_or_actions_are_400s(
    client: TestClient, tenant: Tenant, table: dict[str, Any]
) -> None:
    notify = {"type": "notify", "message": "m"}
    resp = put_triggers(client, tenant, table, *[notify] * 21)
    assert resp.status_code == 400
    assert resp.json() == {"detail": messages.too_many_actions("'trg_1'", 21, 20)}
    body = {"triggers": [{"on": "created", "actions": [notify]} for _ in range(101)]}
    url = table_url(tenant, table, "/triggers")
    resp = client.put(url, json=body, headers=tenant.moderator)
    assert resp.status_code == 400
    assert resp.json() == {"detail": messages.too_many_triggers(101, 100)}


def test_a_workspace_token_cannot_reach_a_chatroom_feed_either(
    client: TestClient, tocsin: Tocsin
) -> None:
    scope_id = str(uuid.uuid4())
    token = tocsin.create_token(scope="workspace", scope_id=scope_id, role="moderator", now=NOW)
    headers = {"Authorization": f"Bearer {token}"}
    prefix = f"/private/module/custom_tables/workspace/{scope_id}"
    table = client.post(f"{prefix}/tables", json={"name": "W", "columns": {}}, headers=headers)
    assert table.status_code == 201, table.text
    body = {"triggers": [{"on": "created", "actions": [{"type": "notify", "message": "m"}]}]}
    resp = client.put(f"{prefix}/tables/{table.json()['id']}/triggers", json=body, headers=headers)
    assert resp.status_code == 400
    assert resp.json() == {"detail": messages.notify_outside_chatroom("workspace")}


def put_alerts(
    client: TestClient, tenant: Tenant, table: dict[str, Any], *alerts: dict[str, Any]
) -> Any:
    trigger = {
        "id": "trg_1",
        "on": "created",
        "actions": [{"type": "notify", "message": "m"}],
        "on_failure": list(alerts),
    }
    url = table_url(tenant, table, "/triggers")
    return client.put(url, json={"triggers": [trigger]}, headers=tenant.moderator)


def test_on_failure_actions_obey_the_same_save_checks_as_actions(
    client: TestClient, tenant: Tenant, other: Tenant, table: dict[str, Any]
) -> None:
    """``on_failure`` holds actions too: a notify into another tenant's chatroom is a 400 at
    save (not only a failed alert at run time), and their count is capped like ``actions``."""
    spam = {"type": "notify", "chatroom_id": other.scope_id, "message": "spam"}
    resp = put_alerts(client, tenant, table, spam)
    assert resp.status_code == 400
    assert resp.json() == {"detail": messages.notify_other_chatroom(other.scope_id)}
    notify = {"type": "notify", "message": "m"}
    resp = put_alerts(client, tenant, table, *[notify] * 21)
    assert resp.status_code == 400
    assert resp.json() == {"detail": messages.too_many_actions("'trg_1'", 21, 20)}
    got = client.get(table_url(tenant, table, "/triggers"), headers=tenant.moderator)
    assert got.json() == {"triggers": []}
    own = {"type": "notify", "chatroom_id": tenant.scope_id, "message": "ok"}
    assert put_alerts(client, tenant, table, own, *[notify] * 19).status_code == 200
