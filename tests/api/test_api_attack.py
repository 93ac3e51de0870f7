"""What an attacker or a careless client sends to the recent surfaces: every refusal is a 4xx
``{"detail": …}`` with the text of ``tocsin.messages``, never a 500, and nothing is written.

- A cron expression longer than a schedule row holds (200 characters; a list of 100,000 values
  used to be stored on SQLite, a 500 on PostgreSQL, and cost every parse its length).
- ``POST /api/workflows/{id}/start`` with an input the workflow's model refuses: a 400, no
  run (it used to write a run bound to fail).
- A lane window backwards: its text names the instants in RFC 3339, not Python reprs; a
  manual trigger without a window says that it needs one.
- A record action naming another tenant's table: the run fails as for a missing table, and
  the other tenant's table is untouched.
- A 100,000-character zone or workflow id: refused without being echoed back whole.
"""

from __future__ import annotations

from typing import Any

from api_support import Clock, Tenant, TestClient, bearer, table_url

from lanes.lane_support import A_END, A_START, LANE_ID, Probe, make_lane
from tocsin import messages
from tocsin.core.time.cron.parse import MAX_EXPRESSION_CHARS
from tocsin.service import Tocsin
from workflows.helpers import every_minute

LONG_CRON = ",".join(["1"] * 101) + " * * * *"  # 208 characters, every value valid
TOO_LONG = messages.cron_invalid(
    f"the expression is {len(LONG_CRON)} characters long; at most {MAX_EXPRESSION_CHARS} are "
    "taken (use ranges and steps, such as 0-30/5, instead of long lists)"
)


def _tokens(tocsin: Tocsin) -> tuple[dict[str, str], dict[str, str]]:
    read = bearer(tocsin.create_token(permissions=["schedules:read"]))
    write = bearer(tocsin.create_token(permissions=["schedules:write"]))
    return read, write


def test_a_cron_longer_than_a_schedule_row_holds_is_400_and_writes_nothing(
    client: TestClient, tocsin: Tocsin, tenant: Tenant, table: dict[str, Any]
) -> None:
    assert len(LONG_CRON) > MAX_EXPRESSION_CHARS
    tocsin.register_workflows([every_minute()])
    read, write = _tokens(tocsin)
    bodies: list[dict[str, Any]] = [
        {"workflowId": "tick-tock", "cron": LONG_CRON, "timezone": "UTC"},
        {"workflowId": "tick-tock", "trigger": {"cron": LONG_CRON, "timezone": "UTC"}},
        {"workflowId": "tick-tock", "cron": ",".join(["1"] * 100_000) + " * * * *"},
    ]
    for body in bodies:
        resp = client.post("/api/schedules", json=body, headers=write)
        assert resp.status_code == 400, resp.text
        assert resp.json()["detail"].startswith(messages.cron_invalid("the expression is "))
    first = client.post("/api/schedules", json=bodies[0], headers=write)
    assert first.json() == {"detail": TOO_LONG}
    listed = client.get("/api/schedules?workflowId=tick-tock", headers=read).json()
    assert [s["id"] for s in listed["items"]] == []  # none created (sync has not run)
    cron_trigger = {
        "name": "c",
        "on": "schedule",
        "schedule": {"type": "cron", "expression": LONG_CRON},
        "actions": [{"type": "notify", "message": "hi"}],
    }
    url = table_url(tenant, table, "/triggers")
    put = client.put(url, json={"triggers": [cron_trigger]}, headers=tenant.moderator)
    assert put.status_code == 400 and put.json() == {"detail": TOO_LONG}
    assert client.get(url, headers=tenant.moderator).json() == {"triggers": []}
    # whitespace collapses first: a long run of spaces is not a long expression
    spaced = {
        **cron_trigger,
        "schedule": {"type": "cron", "expression": "0" + " " * 500 + "9 * * *"},
    }
    ok = client.put(url, json={"triggers": [spaced]}, headers=tenant.moderator)
    assert ok.status_code == 200, ok.text
    assert ok.json()["triggers"][0]["schedule"]["expression"] == "0 9 * * *"


def test_starting_a_workflow_with_an_input_its_model_refuses_is_400_and_runs_nothing(
    client: TestClient, tocsin: Tocsin
) -> None:
    tocsin.register_workflows([every_minute()])
    read, write = _tokens(tocsin)
    url = "/api/workflows/tick-tock/start"
    for bad, problems in [
        ("x", ["input: Input should be a valid dictionary or instance of ReportIn"]),
        ({"user_id": 5}, ["user_id: Input should be a valid string"]),
        ({}, ["user_id: Field required"]),
    ]:
        resp = client.post(url, json={"input": bad}, headers=write)
        assert resp.status_code == 400, resp.text
        detail = messages.workflow_start_input_invalid("tick-tock", problems)
        assert resp.json() == {"detail": detail}
    runs = client.get("/api/workflows/tick-tock/runs", headers=read).json()
    assert runs["total"] == 0
    unknown = client.post("/api/workflows/nope/start", json={"input": "x"}, headers=write)
    assert unknown.status_code == 404
    assert unknown.json() == {"detail": messages.workflow_unknown("nope")}
    good = client.post(url, json={"input": {"user_id": "u1"}}, headers=write)
    assert good.status_code == 200 and good.json()["status"] == "pending"


def test_a_backwards_lane_window_is_named_in_rfc_3339(
    client: TestClient, tocsin: Tocsin, clock: Clock
) -> None:
    tocsin.lanes.register([make_lane(Probe())])
    clock.now = A_END
    read, write = _tokens(tocsin)
    window = {"start_inclusive": A_END.isoformat(), "end_exclusive": A_START.isoformat()}
    resp = client.post(f"/api/lanes/{LANE_ID}/trigger", json={"window": window}, headers=write)
    assert resp.status_code == 400, resp.text
    assert resp.json() == {
        "detail": "a lane window needs two aware instants with start < end (half-open "
        "[start, end)); got start=2026-09-08T07:30:00+08:00, end=2026-09-07T22:00:00+08:00"
    }
    missing = client.post(f"/api/lanes/{LANE_ID}/trigger", json={}, headers=write)
    assert missing.status_code == 400
    assert missing.json() == {"detail": messages.LANE_WINDOW_MISSING}  # not "got start=None"
    contracts = client.get(f"/api/lanes/{LANE_ID}/contracts", headers=read)
    assert contracts.json()["total"] == 0


def test_a_record_action_naming_another_tenants_table_writes_nothing_there(
    client: TestClient,
    tocsin: Tocsin,
    clock: Clock,
    tenant: Tenant,
    other: Tenant,
    table: dict[str, Any],
) -> None:
    """A save naming another scope's table in ``create_record`` / ``update_record`` /
    ``delete_record`` is taken (the target is checked when the action runs), but the run fails
    with the text a missing table gets: the other tenant's table is never written, and its
    existence is not told apart from a table that does not exist."""
    theirs = client.post(
        f"{other.prefix}/tables",
        json={"name": "Theirs", "columns": {"Title": "text"}},
        headers=other.moderator,
    ).json()
    mine = client.post(
        f"{other.prefix}/tables/{theirs['id']}/records",
        json={"data": {"Title": "mine"}},
        headers=other.moderator,
    ).json()
    missing = "01a08151-8b00-7000-8000-000000000000"
    url = table_url(tenant, table, "/triggers")
    for target in (theirs["id"], missing):
        for action in (
            {"type": "create_record", "table_id": target, "values": {"Title": "pwn"}},
            {
                "type": "update_record",
                "table_id": target,
                "record": mine["id"],
                "values": {"Title": "pwn"},
            },
            {"type": "delete_record", "table_id": target, "record": mine["id"]},
        ):
            trigger = {"name": "reach", "on": "created", "actions": [action]}
            saved = client.put(url, json={"triggers": [trigger]}, headers=tenant.moderator)
            assert saved.status_code == 200, saved.text
            client.post(
                table_url(tenant, table, "/records"),
                json={"data": {"Title": "a"}},
                headers=tenant.moderator,
            )
            tocsin.work(now=clock.now)
            runs = client.get(
                table_url(tenant, table, "/trigger-runs?limit=1"), headers=tenant.moderator
            ).json()["items"]
            assert runs[0]["status"] == "failed"
            assert runs[0]["error"] == f"target table '{target}' does not exist or is trashed"
    records = client.get(
        f"{other.prefix}/tables/{theirs['id']}/records", headers=other.moderator
    ).json()["items"]
    assert [(r["id"], r["data"], r["trashed"]) for r in records] == [
        (mine["id"], {"Title": "mine"}, False)
    ]


def test_a_huge_zone_or_workflow_id_is_refused_without_being_echoed_whole(
    client: TestClient, tocsin: Tocsin, tenant: Tenant, table: dict[str, Any]
) -> None:
    """A 100,000-character "zone" used to come back whole in the 400's text; a
    5,000-character workflow id too. A schedule's zone and workflow id are at most 64
    characters (its row's width): 422 before anything is looked up."""
    tocsin.register_workflows([every_minute()])
    read, write = _tokens(tocsin)
    huge = "x" * 100_000
    for body in (
        {"workflowId": "tick-tock", "cron": "0 9 * * *", "timezone": huge},
        {"workflowId": "w" * 5000, "cron": "0 9 * * *", "timezone": "UTC"},
    ):
        resp = client.post("/api/schedules", json=body, headers=write)
        assert resp.status_code == 422, resp.text
        (error,) = resp.json()["detail"]
        assert error["type"] == "string_too_long"
    tree = {"workflowId": "tick-tock", "trigger": {"cron": "0 9 * * *", "timezone": huge}}
    resp = client.post("/api/schedules", json=tree, headers=write)
    assert resp.status_code == 400
    assert resp.json() == {"detail": messages.schedule_timezone_unknown(huge)}
    assert len(resp.json()["detail"]) < 200 and "x" * 64 + "…'" in resp.json()["detail"]
    listed = client.get("/api/schedules?workflowId=tick-tock", headers=read).json()
    assert listed["total"] == 0
    daily = {
        "name": "d",
        "on": "schedule",
        "schedule": {"type": "daily", "at": "01:30", "timezone": huge},
        "actions": [{"type": "notify", "message": "hi"}],
    }
    url = table_url(tenant, table, "/triggers")
    put = client.put(url, json={"triggers": [daily]}, headers=tenant.moderator)
    assert put.status_code == 400
    assert put.json() == {"detail": messages.daily_timezone_unknown(huge)}
    assert len(put.json()["detail"]) < 200
    # a real zone name is quoted whole: SPEC §4.3's text is unchanged
    assert messages.daily_timezone_unknown("Mars/Olympus") == (
        "daily schedule timezone 'Mars/Olympus' is not a known IANA zone. "
        "use an IANA name like 'Asia/Taipei' or 'America/New_York'"
    )


def test_an_instant_sent_as_a_number_is_422_and_backfills_nothing(
    client: TestClient, tocsin: Tocsin, clock: Clock
) -> None:
    """``{"start": -1, "end": 10}`` used to backfill 1969-12-31T23:59:59Z (pydantic reads a
    number as Unix seconds); a lane window or ``scheduled_for`` likewise."""
    tocsin.register_workflows([every_minute(overlap="allow")])
    tocsin.sync_schedules(now=clock.now)
    tocsin.lanes.register([make_lane(Probe())])
    read, write = _tokens(tocsin)
    url = "/api/schedules/wf_tick-tock/backfill"
    resp = client.post(url, json={"start": -1, "end": 10}, headers=write)
    assert resp.status_code == 422, resp.text
    assert {e["msg"] for e in resp.json()["detail"]} == {
        f"Value error, {messages.INSTANT_NOT_TEXT}"
    }
    fires = client.get("/api/schedules/wf_tick-tock/fires", headers=read).json()
    assert fires["total"] == 0
    for body in (
        {"window": {"start_inclusive": 0, "end_exclusive": A_END.isoformat()}},
        {"kind": "scheduled", "scheduled_for": 1_788_000_000},
    ):
        lane = client.post(f"/api/lanes/{LANE_ID}/trigger", json=body, headers=write)
        assert lane.status_code == 422, lane.text
    assert client.get(f"/api/lanes/{LANE_ID}/contracts", headers=read).json()["total"] == 0
    ok = client.post(
        url,
        json={"start": "2026-08-27T05:00:00Z", "end": "2026-08-27T05:02:00Z"},
        headers=write,
    )
    assert ok.status_code == 200 and ok.json()["created"] == 2
