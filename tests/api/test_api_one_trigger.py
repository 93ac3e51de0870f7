"""One trigger at a time, a scope's tables, run filters, strict query strings, the feed order,
over HTTP on both backends."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from api_support import ADMIN, Clock, Tenant, table_url
from api_support import save_triggers as put
from fastapi.testclient import TestClient

from tocsin import messages
from tocsin.service import Tocsin

HOURLY = {
    "id": "trg_hourly",
    "name": "hourly",
    "on": "schedule",
    "schedule": {"type": "interval", "every_seconds": 3600},
    "actions": [{"type": "notify", "message": "tick $trigger.id"}],
}
ON_CREATE = {
    "id": "trg_created",
    "name": "on create",
    "on": "created",
    "actions": [{"type": "notify", "message": "new $row.Title"}],
}


def one(tenant: Tenant, table: dict[str, Any], trigger_id: str) -> str:
    return table_url(tenant, table, f"/triggers/{trigger_id}")


def test_tables_lists_the_scope_s_live_tables_paginated(
    client: TestClient, tenant: Tenant, other: Tenant, table: dict[str, Any]
) -> None:
    made = [table["id"]]
    for name in ("B", "C"):
        body = {"name": name, "columns": {"T": "text"}}
        made.append(client.post(f"{tenant.prefix}/tables", json=body, headers=tenant.moderator))
        made[-1] = made[-1].json()["id"]
    client.post(f"{other.prefix}/tables", json={"name": "X"}, headers=other.moderator)
    client.post(table_url(tenant, {"id": made[2]}, "/trash"), headers=tenant.moderator)
    resp = client.get(f"{tenant.prefix}/tables?limit=1&skip=1", headers=tenant.member)
    assert resp.status_code == 200, resp.text
    page = resp.json()
    assert (page["total"], page["skip"], page["limit"]) == (2, 1, 1)
    assert [t["id"] for t in page["items"]] == [made[1]]
    full = client.get(f"{tenant.prefix}/tables", headers=tenant.member).json()
    assert [t["id"] for t in full["items"]] == made[:2]
    assert "triggers" not in full["items"][0] and full["items"][0]["name"] == "Cases"
    assert client.get(f"{tenant.prefix}/tables").status_code == 401
    assert client.get(f"{tenant.prefix}/tables", headers=other.member).status_code == 403


def test_get_one_trigger_and_404_for_an_unknown_id(
    client: TestClient, tenant: Tenant, table: dict[str, Any]
) -> None:
    saved = put(client, tenant, table, [HOURLY, ON_CREATE])
    resp = client.get(one(tenant, table, "trg_created"), headers=tenant.moderator)
    assert resp.status_code == 200 and resp.json() == saved[1]
    missing = client.get(one(tenant, table, "trg_nope"), headers=tenant.moderator)
    assert missing.status_code == 404
    assert missing.json() == {"detail": messages.TRIGGER_NOT_FOUND}
    assert client.get(one(tenant, table, "trg_created"), headers=tenant.member).status_code == 403


def test_patch_merges_one_trigger_and_keeps_its_id_actions_and_state(
    client: TestClient, tocsin: Tocsin, clock: Clock, tenant: Tenant, table: dict[str, Any]
) -> None:
    saved = put(client, tenant, table, [HOURLY, ON_CREATE])
    assert tocsin.tick(now=clock.now)["runs_created"] == 1  # the interval's first window
    tocsin.work(now=clock.now)
    patch = {"name": "renamed", "when": [{"column": "Status", "op": "neq", "value": "Done"}]}
    resp = client.patch(one(tenant, table, "trg_hourly"), json=patch, headers=tenant.moderator)
    assert resp.status_code == 200, resp.text
    assert resp.json() == {**saved[0], **patch}
    assert client.get(table_url(tenant, table, "/triggers"), headers=tenant.moderator).json() == {
        "triggers": [{**saved[0], **patch}, saved[1]]
    }
    # a name/when edit does not re-anchor (SPEC §5.2): the window it consumed stays consumed
    assert tocsin.tick(now=clock.now + timedelta(minutes=5))["runs_created"] == 0
    assert tocsin.tick(now=clock.now + timedelta(hours=1))["runs_created"] == 1


def test_patch_merges_nested_objects_and_null_removes_a_key(
    client: TestClient, tenant: Tenant, table: dict[str, Any]
) -> None:
    daily = {
        "id": "trg_daily",
        "on": "schedule",
        "schedule": {"type": "daily", "at": "01:30", "timezone": "Asia/Taipei"},
        "actions": [{"type": "notify", "message": "m"}],
    }
    put(client, tenant, table, [daily])
    patch = {"schedule": {"at": "02:00", "timezone": None}}
    resp = client.patch(one(tenant, table, "trg_daily"), json=patch, headers=tenant.moderator)
    assert resp.status_code == 200, resp.text
    assert resp.json()["schedule"] == {"type": "daily", "at": "02:00"}


def test_patch_goes_through_the_same_validation_as_put(
    client: TestClient, tenant: Tenant, table: dict[str, Any]
) -> None:
    saved = put(client, tenant, table, [HOURLY])
    url = one(tenant, table, "trg_hourly")
    kind = {"schedule": {"type": "cron", "expression": "0 9 * * *", "every_seconds": None}}
    resp = client.patch(url, json=kind, headers=tenant.moderator)
    assert resp.status_code == 400
    assert resp.json() == {"detail": messages.schedule_kind_change("trg_hourly")}
    bad = client.patch(url, json={"schedule": {"type": "yearly"}}, headers=tenant.moderator)
    assert bad.status_code == 400 and "invalid schedule type 'yearly'" in bad.json()["detail"]
    moved = client.patch(url, json={"id": "trg_other"}, headers=tenant.moderator)
    assert moved.status_code == 400
    assert moved.json() == {"detail": messages.trigger_patch_id_mismatch("trg_hourly", "trg_other")}
    missing = client.patch(one(tenant, table, "trg_x"), json={}, headers=tenant.moderator)
    assert missing.status_code == 404
    # nothing was written by the refused patches
    got = client.get(table_url(tenant, table, "/triggers"), headers=tenant.moderator).json()
    assert got == {"triggers": saved}


def test_delete_retires_one_trigger_and_re_adding_its_id_revives_it(
    client: TestClient, tocsin: Tocsin, clock: Clock, tenant: Tenant, table: dict[str, Any]
) -> None:
    saved = put(client, tenant, table, [HOURLY, ON_CREATE])
    assert tocsin.tick(now=clock.now)["runs_created"] == 1
    tocsin.work(now=clock.now)
    resp = client.delete(one(tenant, table, "trg_hourly"), headers=tenant.moderator)
    assert resp.status_code == 204 and resp.content == b""
    got = client.get(table_url(tenant, table, "/triggers"), headers=tenant.moderator).json()
    assert got == {"triggers": [saved[1]]}
    assert client.delete(
        one(tenant, table, "trg_hourly"), headers=tenant.moderator
    ).status_code == (404)
    put(client, tenant, table, [HOURLY, ON_CREATE])  # revived with its history: no new window yet
    assert tocsin.tick(now=clock.now + timedelta(minutes=1))["runs_created"] == 0


def test_runs_filter_by_trigger_record_and_creation_window(
    client: TestClient, tocsin: Tocsin, clock: Clock, tenant: Tenant, table: dict[str, Any]
) -> None:
    put(client, tenant, table, [HOURLY, ON_CREATE])
    first = tocsin.insert_record(table["id"], {"Title": "a"}, now=clock.now)["id"]
    tocsin.tick(now=clock.now)
    later = clock.now + timedelta(minutes=10)
    second = tocsin.insert_record(table["id"], {"Title": "b"}, now=later)["id"]
    url = table_url(tenant, table, "/trigger-runs")

    def ids(query: str) -> list[tuple[str, str | None]]:
        resp = client.get(f"{url}?{query}", headers=tenant.moderator)
        assert resp.status_code == 200, resp.text
        return [(r["trigger_id"], r["record_id"]) for r in resp.json()["items"]]

    assert ids("trigger_id=trg_created") == [("trg_created", second), ("trg_created", first)]
    assert ids("trigger_id=trg_hourly") == [("trg_hourly", None)]
    assert ids(f"record_id={first}") == [("trg_created", first)]
    since = (later - timedelta(seconds=1)).isoformat()
    assert ids(f"since={since.replace('+00:00', 'Z')}") == [("trg_created", second)]
    naive_until = later.replace(tzinfo=None).isoformat()  # read as UTC; the bound is exclusive
    assert sorted(ids(f"until={naive_until}"), key=str) == [
        ("trg_created", first),
        ("trg_hourly", None),
    ]
    assert ids("trigger_id=trg_nope") == []
    page = client.get(f"{url}?since=yesterday", headers=tenant.moderator)
    assert page.status_code == 422


def test_the_facade_filters_runs_the_same_way(
    tocsin: Tocsin, clock: Clock, table: dict[str, Any], client: TestClient, tenant: Tenant
) -> None:
    put(client, tenant, table, [ON_CREATE])
    rec = tocsin.insert_record(table["id"], {"Title": "a"}, now=clock.now)["id"]
    page = tocsin.list_runs(table["id"], record_id=rec, since=clock.now, now=clock.now)
    assert [r["record_id"] for r in page["items"]] == [rec]
    assert tocsin.list_runs(table["id"], until=clock.now, now=clock.now)["total"] == 0


@pytest.mark.parametrize(
    "suffix",
    ["/trigger-runs?stauts=failed", "/records?limit=5&page=2", "/triggers?x=1"],
)
def test_unknown_query_parameters_are_422_naming_them(
    client: TestClient, tenant: Tenant, table: dict[str, Any], suffix: str
) -> None:
    resp = client.get(table_url(tenant, table, suffix), headers=tenant.moderator)
    assert resp.status_code == 422, resp.text
    (error,) = resp.json()["detail"]
    assert error["type"] == "extra_forbidden" and error["loc"][0] == "query"
    assert error["msg"].startswith("unknown query parameter(s): ")


def test_unknown_query_parameters_are_422_on_list_and_root_routes(
    client: TestClient, tenant: Tenant
) -> None:
    resp = client.get(f"{tenant.prefix}/tables?skip=0&limt=5", headers=tenant.member)
    assert resp.status_code == 422
    assert resp.json()["detail"][0]["loc"] == ["query", "limt"]
    assert resp.json()["detail"][0]["msg"].endswith("this route accepts: limit, skip")
    root = client.post("/root/custom-tables/run-due-triggers?tablelimit=5", headers=ADMIN)
    assert root.status_code == 422
    assert root.json()["detail"][0]["loc"] == ["query", "tablelimit"]


def test_the_chatroom_feed_is_newest_first(
    client: TestClient, tocsin: Tocsin, clock: Clock, tenant: Tenant, table: dict[str, Any]
) -> None:
    put(client, tenant, table, [ON_CREATE])
    for minute, title in enumerate(("first", "second", "third")):
        at = clock.now + timedelta(minutes=minute)
        tocsin.insert_record(table["id"], {"Title": title}, now=at)
        tocsin.work(now=at)
    resp = client.get(f"{tenant.prefix}/messages?limit=2", headers=tenant.member)
    assert resp.status_code == 200
    assert [m["text"] for m in resp.json()["items"]] == ["new third", "new second"]


def test_authored_trigger_ids_with_dots_and_colons_work_in_paths_and_filters(
    client: TestClient, tocsin: Tocsin, clock: Clock, tenant: Tenant, table: dict[str, Any]
) -> None:
    put(client, tenant, table, [{**ON_CREATE, "id": "team.a:on-create"}])
    resp = client.get(one(tenant, table, "team.a:on-create"), headers=tenant.moderator)
    assert resp.status_code == 200 and resp.json()["id"] == "team.a:on-create"
    tocsin.insert_record(table["id"], {"Title": "x"}, now=clock.now)
    runs = client.get(
        table_url(tenant, table, "/trigger-runs?trigger_id=team.a:on-create"),
        headers=tenant.moderator,
    )
    assert runs.status_code == 200 and runs.json()["total"] == 1


@pytest.mark.parametrize(
    "query",
    ["since=9999-12-31T23:59:59-05:00", "until=0001-01-01T00:00:00%2B05:00"],
)
def test_a_run_filter_instant_utc_cannot_hold_is_400_not_500(
    client: TestClient, tenant: Tenant, table: dict[str, Any], query: str
) -> None:
    """An offset that pushes the instant past year 9999 (or before year 1) in UTC overflowed
    while converting it (500); it is a 400 with the filter's message."""
    resp = client.get(table_url(tenant, table, f"/trigger-runs?{query}"), headers=tenant.moderator)
    assert resp.status_code == 400, resp.text
    name = query.split("=")[0]
    assert resp.json() == {"detail": messages.run_window_invalid(name)}
