"""The operator's requeue of one lane attempt over HTTP (SQLite and PostgreSQL):
``POST /api/lanes/{lane_id}/attempts/{attempt_id}/requeue`` sends a pending (lost) or stale
running attempt back to pending, for a worker with the lane, through the one requeue of the
queue that a table run's retry (SPEC §9.4) takes too. Another lane's attempt, a table run's id
or an unknown id is 404; a live running or finished attempt is 409."""

from __future__ import annotations

import dataclasses
import uuid
from datetime import timedelta
from typing import Any

import pytest
from api_support import Clock, TestClient, bearer, make_tenant

from lanes.lane_support import A_END, A_START, LANE_ID, OBSERVED, Probe, inside, make_lane
from tocsin import Candidate, messages
from tocsin.errors import NotFound
from tocsin.service import Tocsin

OTHER = "other-lane"


def not_requeueable(status: str) -> str:
    return (
        f"lane attempt is {status}; only pending (or stale-running) attempts can be requeued;"
        " a failed run is retried with kind 'retry'"
    )


class _Crash(BaseException):
    """The worker's process dies inside the source (nothing catches it)."""


@pytest.fixture
def probe() -> Probe:
    return Probe()


@pytest.fixture
def tokens(tocsin: Tocsin, clock: Clock, probe: Probe) -> dict[str, dict[str, str]]:
    tocsin.lanes.register([make_lane(probe)])
    clock.now = OBSERVED
    read = tocsin.create_token(permissions=["schedules:read"])
    write = tocsin.create_token(permissions=["schedules:write"])
    return {"read": bearer(read), "write": bearer(write)}


def requeue(
    client: TestClient, headers: dict[str, str], attempt_id: str, lane: str = LANE_ID
) -> Any:
    return client.post(f"/api/lanes/{lane}/attempts/{attempt_id}/requeue", headers=headers)


def test_a_lost_or_stale_attempt_goes_back_to_pending_and_runs_again(
    client: TestClient,
    tokens: dict[str, dict[str, str]],
    tocsin: Tocsin,
    probe: Probe,
    clock: Clock,
) -> None:
    calls: list[int] = []

    def dies_once(window: object) -> list[Any]:
        calls.append(1)
        if len(calls) == 1:
            raise _Crash
        return []

    probe.answer = dies_once
    tocsin.tick(now=A_START)
    assert tocsin.tick(now=OBSERVED)["lanes_fired"] == 1
    (attempt,) = tocsin.lanes.contracts(LANE_ID)["items"]
    attempt_id = attempt["attempt_id"]
    assert attempt["state"] == "pending"
    assert requeue(client, tokens["read"], attempt_id).status_code == 403

    lost = requeue(client, tokens["write"], attempt_id)  # pending: its delivery may be lost
    assert lost.status_code == 200, lost.text
    assert lost.json()["state"] == "pending" and lost.json()["attempt_id"] == attempt_id

    with pytest.raises(_Crash):
        tocsin.work(now=OBSERVED)  # its worker dies: the attempt stays running
    clock.now = OBSERVED + timedelta(seconds=tocsin.settings.stuck_after_s - 1)
    live = requeue(client, tokens["write"], attempt_id)
    assert live.status_code == 409
    assert live.json() == {"detail": not_requeueable("running")}

    clock.now = OBSERVED + timedelta(seconds=tocsin.settings.stuck_after_s + 1)
    stale = requeue(client, tokens["write"], attempt_id)
    assert stale.status_code == 200, stale.text
    assert stale.json()["state"] == "pending"
    assert tocsin.work(now=clock.now) == 1  # a worker with the lane executes it again
    (done,) = tocsin.lanes.contracts(LANE_ID)["items"]
    assert done["state"] == "recorded" and done["attempt_id"] == attempt_id
    assert done["decision"] == {"status": "noop", "reason": "source_empty"}
    assert len(calls) == 2

    finished = requeue(client, tokens["write"], attempt_id)
    assert finished.status_code == 409
    assert finished.json() == {"detail": not_requeueable("recorded")}
    assert len(calls) == 2


def test_another_lanes_attempt_a_table_run_or_an_unknown_id_is_404(
    client: TestClient, tokens: dict[str, dict[str, str]], tocsin: Tocsin, clock: Clock
) -> None:
    tocsin.lanes.register([make_lane(Probe(), lane_id=OTHER)])
    tocsin.tick(now=A_START)
    assert tocsin.tick(now=OBSERVED)["lanes_fired"] == 2  # one pending attempt per lane
    (ours,) = tocsin.lanes.contracts(LANE_ID)["items"]
    (theirs,) = tocsin.lanes.contracts(OTHER)["items"]
    other = requeue(client, tokens["write"], theirs["attempt_id"])
    assert other.status_code == 404
    assert other.json() == {"detail": f"lane attempt '{theirs['attempt_id']}' not found"}
    assert requeue(client, tokens["write"], theirs["attempt_id"], OTHER).status_code == 200

    table = tocsin.create_table("chatroom", str(uuid.uuid4()), "T", {"N": "text"}, now=OBSERVED)
    notify = {"id": "n", "type": "notify", "message": "x"}
    tocsin.set_triggers(table["id"], [{"on": "created", "actions": [notify]}], now=OBSERVED)
    tocsin.insert_records(table["id"], [{"N": "1"}], now=OBSERVED)
    (run,) = tocsin.list_runs(table["id"], now=OBSERVED)["items"]
    table_run = requeue(client, tokens["write"], run["id"])
    assert table_run.status_code == 404
    assert table_run.json() == {"detail": f"lane attempt '{run['id']}' not found"}
    with pytest.raises(NotFound):  # and a table run's retry does not reach a lane attempt
        tocsin.retry_run(table["id"], ours["attempt_id"], now=OBSERVED)

    unknown = requeue(client, tokens["write"], "attempt_" + "0" * 32)
    assert unknown.status_code == 404
    assert unknown.json() == {"detail": f"lane attempt 'attempt_{'0' * 32}' not found"}
    no_lane = requeue(client, tokens["write"], ours["attempt_id"], "no-such-lane")
    assert no_lane.status_code == 404
    detail = "unknown lane 'no-such-lane': no lane with this id is registered"
    assert no_lane.json() == {"detail": detail}


def test_a_failed_attempt_is_not_requeued_its_run_is_retried(
    client: TestClient, tokens: dict[str, dict[str, str]], tocsin: Tocsin
) -> None:
    probe = Probe()
    probe.answer = lambda w: [Candidate("v1", inside(w.start, 5), {"lang": "zh"})]
    lane = make_lane(probe, lane_id=OTHER)
    broken = dataclasses.replace(lane, select=lambda c: 1 / 0)  # the attempt fails
    tocsin.lanes.register([broken])
    failed = tocsin.lanes.trigger(OTHER, window=(A_START, A_END), now=OBSERVED)
    assert failed["state"] == "failed"
    refused = requeue(client, tokens["write"], failed["attempt_id"], OTHER)
    assert refused.status_code == 409
    assert refused.json() == {"detail": not_requeueable("failed")}
    retried = tocsin.lanes.trigger(OTHER, kind="retry", run_id=failed["run_id"], now=A_END)
    assert retried["attempt"] == 2 and retried["attempt_id"] != failed["attempt_id"]


def test_a_tenants_run_routes_answer_404_for_a_lane_attempts_id(
    client: TestClient, tokens: dict[str, dict[str, str]], tocsin: Tocsin
) -> None:
    """A lane attempt is a row of the one queue with its kind's status words (``recorded``): a
    tenant's ``GET``/``retry`` of a trigger run by that id is 404, never a 500."""
    tocsin.tick(now=A_START)
    assert tocsin.tick(now=OBSERVED)["lanes_fired"] == 1
    tocsin.work(now=OBSERVED)
    (ours,) = tocsin.lanes.contracts(LANE_ID)["items"]
    assert ours["state"] == "recorded"
    tenant = make_tenant(tocsin)
    table = tocsin.create_table("chatroom", tenant.scope_id, "T", {"N": "text"}, now=OBSERVED)
    url = f"{tenant.prefix}/tables/{table['id']}/trigger-runs/{ours['attempt_id']}"
    for answer in (
        client.get(url, headers=tenant.moderator),
        client.post(f"{url}/retry", headers=tenant.moderator),
    ):
        assert answer.status_code == 404 and answer.json() == {"detail": messages.RUN_NOT_FOUND}
    with pytest.raises(NotFound):
        tocsin.get_run(table["id"], ours["attempt_id"])
    assert tocsin.lanes.attempt(ours["attempt_id"])["state"] == "recorded"  # untouched
