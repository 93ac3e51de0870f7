"""Why-not over HTTP: skips, next fires and run-now of a trigger; schedule skips, next fires and
backfill; GET /root/due (admin)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from api_support import ADMIN, Clock, Tenant, TestClient, bearer, table_url

from tocsin import messages
from tocsin.service import Tocsin
from workflows.helpers import every_minute

HOURLY = {
    "name": "hourly",
    "on": "schedule",
    "schedule": {"type": "interval", "every_seconds": 3600},
    "actions": [{"type": "notify", "message": "hi"}],
}


def _trigger(client: TestClient, tenant: Tenant, table: dict[str, Any]) -> str:
    resp = client.put(
        table_url(tenant, table, "/triggers"), json={"triggers": [HOURLY]}, headers=tenant.moderator
    )
    assert resp.status_code == 200, resp.text
    return str(resp.json()["triggers"][0]["id"])


def test_trigger_skips_next_fires_and_run_now(
    client: TestClient, tenant: Tenant, table: dict[str, Any], tocsin: Tocsin, clock: Clock
) -> None:
    tid = _trigger(client, tenant, table)
    base = table_url(tenant, table, f"/triggers/{tid}")
    tocsin.tick(now=clock.now)
    nxt = client.get(f"{base}/next-fires?n=2", headers=tenant.moderator)
    assert nxt.status_code == 200, nxt.text
    assert len(nxt.json()["items"]) == 2
    manual = client.post(f"{base}/run", headers=tenant.moderator)
    assert manual.status_code == 201, manual.text
    assert manual.json()["source"] == "manual"
    skips = client.get(f"{base}/skips", headers=tenant.moderator)
    assert skips.status_code == 200 and skips.json()["items"] == []
    assert client.get(f"{base}/skips", headers=tenant.member).status_code == 403
    missing = table_url(tenant, table, "/triggers/trg_nope/skips")
    resp = client.get(missing, headers=tenant.moderator)
    assert resp.status_code == 404 and resp.json() == {"detail": "trigger not found"}
    assert client.get(f"{base}/next-fires?n=0", headers=tenant.moderator).status_code == 422


def test_root_due_is_admin_only_and_read_only(
    client: TestClient, tenant: Tenant, table: dict[str, Any], tocsin: Tocsin, clock: Clock
) -> None:
    tid = _trigger(client, tenant, table)
    assert client.get("/root/due").status_code in (401, 403)
    at = (clock.now + timedelta(hours=1)).isoformat().replace("+00:00", "Z")
    resp = client.get(f"/root/due?at={at}", headers=ADMIN)
    assert resp.status_code == 200, resp.text
    body = resp.json()
    assert [(e["trigger_id"], e["runs"]) for e in body["fires"]] == [(tid, 1)]
    assert tocsin.list_runs(table["id"], now=clock.now)["total"] == 0
    naive = client.get("/root/due?at=2026-12-01T09:00:00", headers=ADMIN)
    assert naive.status_code == 400 and "aware" in naive.json()["detail"]


def test_schedule_skips_next_fires_and_backfill(
    client: TestClient, tocsin: Tocsin, clock: Clock
) -> None:
    tocsin.register_workflows([every_minute(overlap="allow")])
    tocsin.sync_schedules(now=clock.now)
    read = bearer(tocsin.create_token(permissions=["schedules:read"]))
    write = bearer(tocsin.create_token(permissions=["schedules:write"]))
    tocsin.tick(now=clock.now + timedelta(hours=1))
    skips = client.get("/api/schedules/wf_tick-tock/skips", headers=read).json()
    assert [(s["reason"], s["count"]) for s in skips["items"]] == [("coalesced", 59)]
    nxt = client.get("/api/schedules/wf_tick-tock/next-fires?n=3", headers=read).json()
    assert len(nxt["items"]) == 3 and nxt["items"][0]["zone"] == "UTC"
    start = (clock.now - timedelta(minutes=10)).isoformat()
    end = clock.now.isoformat()
    url = "/api/schedules/wf_tick-tock/backfill"
    assert client.post(url, json={"start": start, "end": end}, headers=read).status_code == 403
    first = client.post(url, json={"start": start, "end": end}, headers=write)
    assert first.status_code == 200 and first.json()["created"] == 10
    again = client.post(url, json={"start": start, "end": end}, headers=write)
    assert again.json() == {"instants": 10, "created": 0, "existing": 10}
    bad = client.post(url, json={"start": end, "end": start}, headers=write)
    assert bad.status_code == 400


def test_backfill_and_due_at_the_edges_of_time_are_not_500(
    client: TestClient, tocsin: Tocsin, clock: Clock
) -> None:
    """An instant whose UTC value falls outside the datetime range (year 1 ahead of UTC, year
    9999 behind it) is read as the first / last instant, in every zone: never a 500."""
    tocsin.register_workflows([every_minute(overlap="allow")])
    tocsin.sync_schedules(now=clock.now)
    write = bearer(tocsin.create_token(permissions=["schedules:write"]))
    made = client.post(
        "/api/schedules",
        json={"workflowId": "tick-tock", "cron": "* * * * *", "timezone": "America/New_York"},
        headers=write,
    )
    assert made.status_code in (200, 201), made.text
    for sid in ("wf_tick-tock", made.json()["id"]):
        url = f"/api/schedules/{sid}/backfill"
        for start, end in [
            ("0001-01-01T00:00+01:00", "0001-01-01T00:30Z"),
            ("0001-01-01T00:00Z", "0001-01-01T00:30Z"),
            ("9999-12-31T23:00Z", "9999-12-31T23:59-01:00"),
        ]:
            resp = client.post(url, json={"start": start, "end": end}, headers=write)
            assert resp.status_code == 200, (sid, start, resp.text)
            assert resp.json() == {"instants": 0, "created": 0, "existing": 0}
    early = client.get("/root/due?at=0001-01-01T00:00%2B01:00", headers=ADMIN)
    assert early.status_code == 200, early.text
    assert early.json()["at"].startswith("0001-01-01T00:00")
    late = client.get("/root/due?at=9999-12-31T23:59-01:00", headers=ADMIN)
    assert late.status_code == 200, late.text
    assert late.json()["at"].startswith("9999-12-31T23:59")


def test_a_body_sent_to_a_route_that_takes_none_is_422_not_ignored(
    client: TestClient, tenant: Tenant, table: dict[str, Any]
) -> None:
    """``POST …/run`` takes no body: ``{"record_id": …}`` used to answer 201 and run the trigger
    as if the field had been used. No body, ``{}`` or ``null`` are still fine."""
    tid = _trigger(client, tenant, table)
    base = table_url(tenant, table, f"/triggers/{tid}")
    refused = client.post(f"{base}/run", json={"record_id": "r1"}, headers=tenant.moderator)
    assert refused.status_code == 422, refused.text
    (error,) = refused.json()["detail"]
    assert error["loc"] == ["body"] and error["type"] == "extra_forbidden"
    assert error["msg"] == messages.NO_BODY_EXPECTED
    assert client.get(f"{base}/skips", headers=tenant.moderator).status_code == 200
    runs = client.get(table_url(tenant, table, "/trigger-runs"), headers=tenant.moderator)
    assert runs.json()["total"] == 0  # nothing ran
    for body in ({}, None):
        ok = client.post(f"{base}/run", json=body, headers=tenant.moderator)
        assert ok.status_code == 201, ok.text
    paused = client.post(f"{base}/pause", content=b"[1, 2]", headers=tenant.moderator)
    assert paused.status_code == 422
