"""SPEC §14, §15 over HTTP: /api/lanes, /api/lanes/{id}/contracts, /api/lanes/{id}/trigger."""

from __future__ import annotations

import dataclasses
import json
from datetime import timedelta

import pytest
from api_support import Clock, TestClient, bearer

from lanes.lane_support import (
    A_END,
    A_START,
    B_END,
    LANE_ID,
    OBSERVED,
    SEED_CONTRACT,
    Probe,
    inside,
    make_lane,
)
from tocsin import Candidate
from tocsin.service import Tocsin

WINDOW = {"start_inclusive": A_START.isoformat(), "end_exclusive": A_END.isoformat()}


@pytest.fixture
def probe() -> Probe:
    return Probe()


@pytest.fixture
def tokens(tocsin: Tocsin, clock: Clock, probe: Probe) -> dict[str, dict[str, str]]:
    tocsin.lanes.register([make_lane(probe)])
    clock.now = B_END
    read = tocsin.create_token(permissions=["schedules:read"])
    write = tocsin.create_token(permissions=["schedules:write"])
    return {"read": bearer(read), "write": bearer(write)}


def test_permissions(client: TestClient, tokens: dict[str, dict[str, str]]) -> None:
    assert client.get("/api/lanes").status_code == 401
    url = f"/api/lanes/{LANE_ID}/trigger"
    denied = client.post(url, json={"window": WINDOW}, headers=tokens["read"])
    assert denied.status_code == 403
    assert denied.json() == {"detail": "this token lacks the 'schedules:write' permission"}
    assert client.get("/api/lanes", headers=tokens["read"]).status_code == 200


def test_trigger_list_and_filter_contracts(
    client: TestClient, tokens: dict[str, dict[str, str]], probe: Probe
) -> None:
    probe.answer = lambda w: [
        Candidate("v1", inside(w.start, 10), {"lang": "zh"}),
        Candidate("v2", inside(w.start, 20), {"lang": "en"}),
    ]
    url = f"/api/lanes/{LANE_ID}/trigger"
    body = {"kind": "scheduled", "window": WINDOW, "scheduled_for": A_END.isoformat()}
    first = client.post(url, json=body, headers=tokens["write"])
    assert first.status_code == 200, first.text
    doc = first.json()["contract"]
    assert doc["decision"] == {"status": "ready", "reason": "selected"}
    assert doc["trigger"]["observed_at"] == "2026-09-08T22:00:00+08:00"
    assert first.json()["handler"] == {"status": "succeeded", "error": None}
    again = client.post(url, json=body, headers=tokens["write"]).json()
    assert again["decision"] == {"status": "ignored", "reason": "duplicate_trigger"}
    assert probe.counts() == (1, 1)
    listed = client.get("/api/lanes", headers=tokens["read"]).json()["items"]
    assert [(x["id"], x["attempts"], x["registered"]) for x in listed] == [(LANE_ID, 2, True)]
    contracts = f"/api/lanes/{LANE_ID}/contracts"
    page = client.get(contracts, headers=tokens["read"]).json()
    assert page["total"] == 2 and page["limit"] == 50
    ready = client.get(f"{contracts}?decision=ready", headers=tokens["read"]).json()
    assert [i["contract"]["selection"]["accepted_refs"] for i in ready["items"]] == [["v1"]]
    paged = client.get(f"{contracts}?skip=1&limit=1", headers=tokens["read"]).json()
    assert paged["total"] == 2 and len(paged["items"]) == 1


def test_bad_input_is_4xx_and_writes_nothing(
    client: TestClient, tokens: dict[str, dict[str, str]], tocsin: Tocsin, probe: Probe
) -> None:
    url = f"/api/lanes/{LANE_ID}/trigger"
    naive = {"start_inclusive": "2026-09-07T22:00:00", "end_exclusive": "2026-09-08T07:30:00"}
    backwards = {
        "start_inclusive": WINDOW["end_exclusive"],
        "end_exclusive": WINDOW["start_inclusive"],
    }
    cases = [
        ({"window": naive}, 422),
        ({"window": WINDOW, "extra": 1}, 422),
        ({"window": WINDOW, "kind": "cron"}, 422),
        ({"window": backwards}, 400),
        ({}, 400),
        ({"kind": "retry"}, 400),
        ({"kind": "retry", "run_id": "run_" + "0" * 32}, 404),
    ]
    for body, status in cases:
        resp = client.post(url, json=body, headers=tokens["write"])
        assert resp.status_code == status, (body, resp.text)
        assert "detail" in resp.json()
    missing = client.post(
        "/api/lanes/nope/trigger", json={"window": WINDOW}, headers=tokens["write"]
    )
    assert missing.status_code == 404
    assert client.get("/api/lanes/nope/contracts", headers=tokens["read"]).status_code == 404
    bad = client.get(f"/api/lanes/{LANE_ID}/contracts?decision=done", headers=tokens["read"])
    assert bad.status_code == 422
    assert tocsin.lanes.contracts(LANE_ID)["total"] == 0 and probe.counts() == (0, 0)


@pytest.mark.parametrize(
    "body",
    [
        {"window": {**WINDOW, "end_exclusive": "9999-12-31T23:59:59Z"}},
        {
            "window": {
                "start_inclusive": "0001-01-01T00:00:00+05:00",
                **{"end_exclusive": A_END.isoformat()},
            }
        },
        {"kind": "scheduled", "scheduled_for": "9999-12-31T23:59:59Z"},
        {"kind": "scheduled", "scheduled_for": "0001-01-01T00:00:00Z", "window": WINDOW},
        {"window": WINDOW, "scheduled_for": "9999-12-31T23:59:59Z"},
        {"kind": "scheduled", "scheduled_for": "0001-01-01T23:59:59Z"},
    ],
)
def test_instants_at_the_ends_of_the_calendar_are_400_not_500(
    client: TestClient,
    tokens: dict[str, dict[str, str]],
    tocsin: Tocsin,
    probe: Probe,
    body: dict[str, object],
) -> None:
    """An instant the lane's zone cannot express (year 1 or 9999 shifted by its offset) is a
    400 with the lane message, before anything is recorded (it was an OverflowError: 500)."""
    resp = client.post(f"/api/lanes/{LANE_ID}/trigger", json=body, headers=tokens["write"])
    assert resp.status_code == 400, resp.text
    assert "0001-01-02" in resp.json()["detail"]
    assert tocsin.lanes.contracts(LANE_ID)["total"] == 0 and probe.counts() == (0, 0)


def test_a_run_id_no_database_can_store_is_422_not_500(
    client: TestClient, tokens: dict[str, dict[str, str]], tocsin: Tocsin
) -> None:
    """A NUL character in ``run_id`` reached a PostgreSQL query (500); it is refused up front."""
    body = {"kind": "retry", "run_id": "run_\u0000"}
    resp = client.post(f"/api/lanes/{LANE_ID}/trigger", json=body, headers=tokens["write"])
    assert resp.status_code == 422, resp.text
    assert "NUL" in str(resp.json()["detail"])
    assert tocsin.lanes.contracts(LANE_ID)["total"] == 0


def test_the_seeds_example_contract_over_http(
    client: TestClient, tokens: dict[str, dict[str, str]], clock: Clock
) -> None:
    clock.now = OBSERVED
    body = {"kind": "scheduled", "window": WINDOW, "scheduled_for": A_END.isoformat()}
    answer = client.post(f"/api/lanes/{LANE_ID}/trigger", json=body, headers=tokens["write"])
    assert answer.status_code == 200, answer.text
    assert answer.json()["contract"] == json.loads(SEED_CONTRACT)
    assert list(answer.json()["contract"]) == list(json.loads(SEED_CONTRACT))


def test_a_manual_trigger_repeated_over_http_is_a_duplicate(
    client: TestClient, tokens: dict[str, dict[str, str]], probe: Probe, clock: Clock
) -> None:
    url = f"/api/lanes/{LANE_ID}/trigger"
    first = client.post(url, json={"window": WINDOW}, headers=tokens["write"]).json()
    assert first["contract"]["trigger"]["scheduled_for"] == "2026-09-08T07:30:00+08:00"
    clock.now += timedelta(minutes=1)  # repeated a minute later: still the same run
    again = client.post(url, json={"window": WINDOW}, headers=tokens["write"]).json()
    assert again["decision"] == {"status": "ignored", "reason": "duplicate_trigger"}
    assert again["run_id"] == first["run_id"]
    assert probe.counts() == (1, 0)


def test_pause_resume_and_fires_over_http(
    client: TestClient,
    tokens: dict[str, dict[str, str]],
    tocsin: Tocsin,
    probe: Probe,
    clock: Clock,
) -> None:
    """A lane paused over three instants: ``paused ×3`` in its fires, nothing run for them."""
    clock.now = A_END - timedelta(hours=12)  # the lane's next instant is A_END (07:30)
    tocsin.tick(now=clock.now)
    url = f"/api/lanes/{LANE_ID}"
    denied = client.post(f"{url}/pause", headers=tokens["read"])
    assert denied.status_code == 403
    assert denied.json() == {"detail": "this token lacks the 'schedules:write' permission"}
    missing = client.post("/api/lanes/nope/pause", headers=tokens["write"])
    assert missing.status_code == 404
    assert missing.json() == {"detail": "unknown lane 'nope': no lane with this id is registered"}
    assert client.get("/api/lanes/nope/fires", headers=tokens["read"]).status_code == 404
    paused = client.post(f"{url}/pause", headers=tokens["write"])
    assert paused.status_code == 200, paused.text
    assert paused.json()["paused"] is True
    assert client.get(url, headers=tokens["read"]).json()["paused"] is True
    for day in range(3):
        assert tocsin.tick(now=A_END + timedelta(days=day))["lanes_fired"] == 0
    clock.now = A_END + timedelta(days=2, hours=1)
    resumed = client.post(f"{url}/resume", headers=tokens["write"]).json()
    assert resumed["paused"] is False
    assert resumed["next_fire_at"] == "2026-09-10T23:30:00Z"
    assert tocsin.tick(now=clock.now)["lanes_fired"] == 0
    assert tocsin.tick(now=A_END + timedelta(days=3))["lanes_fired"] == 1
    tocsin.work(now=A_END + timedelta(days=3))
    page = client.get(f"{url}/fires", headers=tokens["read"]).json()
    assert (page["total"], page["skip"], page["limit"], page["skips_left_off"]) == (1, 0, 50, 0)
    fire, skip = page["items"]
    assert skip == {
        "kind": "skip",
        "reason": "paused",
        "first_instant": "2026-09-07T23:30:00",
        "last_instant": "2026-09-09T23:30:00",
        "count": 3,
        "count_is_lower_bound": False,
    }
    assert fire["kind"] == "fire" and fire["run_status"] == "noop"
    assert fire["scheduled_for"] == fire["fired_at"] == "2026-09-10T23:30:00Z"
    assert fire["run_id"].startswith("run_") and fire["attempt"] == 1
    assert fire["window"]["start_inclusive"] == "2026-09-09T23:30:00Z"
    assert probe.source_calls == 1


def test_next_fires_over_http(
    client: TestClient, tokens: dict[str, dict[str, str]], tocsin: Tocsin, clock: Clock
) -> None:
    """The lane's next instants (UTC and its zone); none while paused; 409 without a schedule."""
    clock.now = A_END - timedelta(hours=12)
    url = f"/api/lanes/{LANE_ID}/next-fires"
    got = client.get(f"{url}?n=2", headers=tokens["read"])
    assert got.status_code == 200, got.text
    assert got.json() == {
        "lane_id": LANE_ID,
        "paused": False,
        "items": [
            {
                "at": "2026-09-07T23:30:00",
                "local": "2026-09-08T07:30:00+08:00",
                "zone": "Asia/Taipei",
                "status": "scheduled",
            },
            {
                "at": "2026-09-08T23:30:00",
                "local": "2026-09-09T07:30:00+08:00",
                "zone": "Asia/Taipei",
                "status": "scheduled",
            },
        ],
    }
    assert client.get(f"{url}?n=0", headers=tokens["read"]).status_code == 422
    assert client.get("/api/lanes/nope/next-fires", headers=tokens["read"]).status_code == 404
    client.post(f"/api/lanes/{LANE_ID}/pause", headers=tokens["write"])
    assert client.get(url, headers=tokens["read"]).json()["items"] == []
    bare = make_lane(Probe(), lane_id="manual-only")
    tocsin.lanes.register([dataclasses.replace(bare, schedule=None)])
    unscheduled = client.get("/api/lanes/manual-only/next-fires", headers=tokens["read"])
    assert unscheduled.status_code == 409, unscheduled.text
