"""Lane attempts are runs of the one queue (SQLite and PostgreSQL): one ``work`` pass claims
table runs and lane attempts with one claim, the scopes in turn (the app's own scope among the
tenants'); a lane attempt left ``running`` by a worker that died is swept back to pending by the
tick and executed again."""

from __future__ import annotations

import uuid
from datetime import timedelta
from typing import Any

import pytest

from tocsin import Tocsin

from .lane_support import A_START, LANE_ID, OBSERVED, Probe, make_lane

NOTIFY = {
    "id": "t1",
    "name": "posts",
    "on": "created",
    "actions": [{"id": "a1", "type": "notify", "message": "new case"}],
}


def _tenant(t: Tocsin, runs: int) -> dict[str, Any]:
    """A tenant's table whose ``created`` trigger posts a message: ``runs`` pending runs."""
    table = t.create_table("chatroom", str(uuid.uuid4()), "Cases", {"Title": "text"}, now=A_START)
    t.set_triggers(table["id"], [NOTIFY], now=A_START)
    t.insert_records(table["id"], [{"Title": str(n)} for n in range(runs)], now=A_START)
    return table


def _statuses(t: Tocsin, table: dict[str, Any]) -> list[str]:
    return sorted(run["status"] for run in t.list_runs(table["id"], now=OBSERVED)["items"])


def test_one_claim_takes_table_runs_and_a_lane_attempt_the_scopes_in_turn(t: Tocsin) -> None:
    busy, quiet = _tenant(t, 3), _tenant(t, 1)
    t.tick(now=A_START)
    assert t.tick(now=OBSERVED)["lanes_fired"] == 1  # a pending attempt, in the app's scope
    assert t.work(now=OBSERVED, limit=3) == 3  # one claim of three: one run of each scope
    (attempt,) = t.lanes.contracts(LANE_ID)["items"]
    assert attempt["state"] == "recorded"
    assert attempt["decision"] == {"status": "noop", "reason": "source_empty"}
    assert _statuses(t, quiet) == ["done"]
    assert _statuses(t, busy) == ["done", "pending", "pending"]
    assert t.work(now=OBSERVED) == 2
    assert _statuses(t, busy) == ["done"] * 3
    assert t.run_counts(now=OBSERVED)["done"] == 4  # the table runs' counts: no lane attempt


class _Crash(BaseException):
    """The worker's process dies inside the source (nothing catches it)."""


def test_a_lane_attempt_whose_worker_died_is_swept_back_and_run_again(
    t: Tocsin, probe: Probe
) -> None:
    calls: list[int] = []

    def dies_once(window: object) -> list[Any]:
        calls.append(1)
        if len(calls) == 1:
            raise _Crash
        return []

    probe.answer = dies_once
    t.tick(now=A_START)
    assert t.tick(now=OBSERVED)["lanes_fired"] == 1
    with pytest.raises(_Crash):
        t.work(now=OBSERVED)
    (attempt,) = t.lanes.contracts(LANE_ID)["items"]
    assert attempt["state"] == "running"
    soon = OBSERVED + timedelta(seconds=t.settings.stuck_after_s - 1)
    assert t.tick(now=soon)["lane_attempts_requeued"] == 0  # its lease is not over yet
    stale = OBSERVED + timedelta(seconds=t.settings.stuck_after_s + 1)
    assert t.tick(now=stale)["lane_attempts_requeued"] == 1
    assert t.lanes.contracts(LANE_ID)["items"][0]["state"] == "pending"
    assert t.work(now=stale) == 1
    (done,) = t.lanes.contracts(LANE_ID)["items"]
    assert done["state"] == "recorded" and done["attempt_id"] == attempt["attempt_id"]
    assert done["decision"] == {"status": "noop", "reason": "source_empty"}
    assert len(calls) == 2
    assert t.tick(now=stale + timedelta(hours=1))["lane_attempts_requeued"] == 0


def test_a_worker_without_the_lane_runs_the_table_runs_and_leaves_the_attempt(
    t: Tocsin, store_url: str
) -> None:
    table = _tenant(t, 1)
    t.tick(now=A_START)
    assert t.tick(now=OBSERVED)["lanes_fired"] == 1
    bare = Tocsin.open(store_url, settings=t.settings)
    try:
        assert bare.work(now=OBSERVED) == 1  # the table run only
    finally:
        bare.close()
    assert _statuses(t, table) == ["done"]
    assert t.lanes.contracts(LANE_ID)["items"][0]["state"] == "pending"
    assert t.lanes.work(OBSERVED) == 1


@pytest.fixture
def probe() -> Probe:
    return Probe()


@pytest.fixture
def t(tocsin: Tocsin, probe: Probe) -> Tocsin:
    tocsin.lanes.register([make_lane(probe)])
    return tocsin
