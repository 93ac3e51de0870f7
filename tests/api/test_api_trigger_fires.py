"""``GET P/tables/{id}/triggers/{trigger_id}/fires``: a table trigger's fire history (its
scheduled runs, skips interleaved), a moderator's read of its own table only."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from api_support import Clock, Tenant, TestClient, table_url
from api_support import save_triggers as put

from tocsin import messages
from tocsin.service import Tocsin

HOURLY = {
    "name": "hourly",
    "on": "schedule",
    "schedule": {"type": "interval", "every_seconds": 3600},
    "actions": [{"type": "notify", "message": "hi"}],
}


def test_the_history_of_a_clock_trigger(
    client: TestClient, tenant: Tenant, table: dict[str, Any], tocsin: Tocsin, clock: Clock
) -> None:
    [trigger] = put(client, tenant, table, [HOURLY])
    url = table_url(tenant, table, f"/triggers/{trigger['id']}/fires")
    start = clock.now
    tocsin.tick(now=start)
    tocsin.work(now=start)
    tocsin.tick(now=start + timedelta(hours=3, minutes=1))
    resp = client.get(url, headers=tenant.moderator)
    assert resp.status_code == 200, resp.text
    body = resp.json()
    assert (body["total"], body["skip"], body["limit"], body["skips_left_off"]) == (2, 0, 50, 0)
    newest, skipped, oldest = body["items"]
    assert newest["kind"] == "fire" and newest["run_status"] == "pending"
    assert newest["scheduled_for"].startswith((start + timedelta(hours=3)).isoformat()[:19])
    assert newest["fired_at"].startswith((start + timedelta(hours=3, minutes=1)).isoformat()[:19])
    assert skipped == {
        "kind": "skip",
        "reason": "coalesced",
        "first_instant": (start + timedelta(hours=1)).isoformat()[:19],
        "last_instant": (start + timedelta(hours=2)).isoformat()[:19],
        "count": 2,
        "count_is_lower_bound": False,
    }
    assert oldest["kind"] == "fire" and oldest["run_status"] == "done"
    runs = client.get(table_url(tenant, table, "/trigger-runs"), headers=tenant.moderator).json()
    assert {f["run_id"] for f in (newest, oldest)} == {r["id"] for r in runs["items"]}
    paged = client.get(f"{url}?skip=1&limit=1", headers=tenant.moderator).json()
    assert [i["kind"] for i in paged["items"]] == ["skip", "fire"]
    assert client.get(f"{url}?limit=0", headers=tenant.moderator).status_code == 422


def test_only_a_moderator_of_the_table_reads_it(
    client: TestClient, tenant: Tenant, other: Tenant, table: dict[str, Any]
) -> None:
    [trigger] = put(client, tenant, table, [HOURLY])
    suffix = f"/triggers/{trigger['id']}/fires"
    url = table_url(tenant, table, suffix)
    assert client.get(url, headers=tenant.member).status_code == 403
    assert client.get(url).status_code == 401
    # another tenant: its own prefix with this table's id, or this table's trigger id on its own
    # table, answers 404 (the table is not in its scope; the trigger is not on its table)
    theirs = client.get(table_url(other, table, suffix), headers=other.moderator)
    assert theirs.status_code == 404 and theirs.json() == {"detail": messages.TABLE_NOT_FOUND}
    own = client.post(
        f"{other.prefix}/tables",
        json={"name": "Theirs", "columns": {"Title": "text"}},
        headers=other.moderator,
    )
    assert own.status_code == 201, own.text
    resp = client.get(table_url(other, own.json(), suffix), headers=other.moderator)
    assert resp.status_code == 404 and resp.json() == {"detail": messages.TRIGGER_NOT_FOUND}
    missing = table_url(tenant, table, "/triggers/trg_000000000099/fires")
    resp = client.get(missing, headers=tenant.moderator)
    assert resp.status_code == 404 and resp.json() == {"detail": messages.TRIGGER_NOT_FOUND}
