"""Lane attempts are runs of the one queue (SQLite and PostgreSQL): one ``work`` pass claims
table runs and lane attempts with one claim, the scopes in turn (the app's own scope among the
tenants'); a lane attempt left ``running`` by a worker that died is swept back to pending by the
tick and executed again; one sweep hands back the stale running runs of every kind."""

from __future__ import annotations

import uuid
from datetime import timedelta
from typing import Any

import pytest
from pydantic import BaseModel
from sqlalchemy import select

from tocsin import StepContext, Tocsin, step, workflow
from tocsin.store.runs import claim_run
from tocsin.store.schema import RUN_KINDS, runs

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


class _Echo(BaseModel):
    n: int


@step(id="echo", input=_Echo, output=_Echo)
def _echo(data: _Echo, ctx: StepContext) -> _Echo:
    return data


def _pending(t: Tocsin) -> dict[str, list[str]]:
    """The pending runs' ids, per kind, oldest first."""
    with t.store.read() as tx:
        rows = tx.conn.execute(
            select(runs.c.kind, runs.c.id)
            .where(runs.c.status == "pending")
            .order_by(runs.c.created_at, runs.c.id)
        ).all()
    found: dict[str, list[str]] = {}
    for kind, run_id in rows:
        found.setdefault(kind, []).append(run_id)
    return found


def test_one_sweep_hands_back_the_stale_running_runs_of_every_kind(t: Tocsin) -> None:
    """One tick's stale-run sweep (one statement) moves a table trigger's run, a lane attempt
    and a workflow run whose workers died back to pending, each counted under its own key, and
    leaves the running runs of each kind claimed within the stale window alone."""
    t.register_workflows([workflow(id="echo", input=_Echo, output=_Echo).then(_echo).commit()])
    _tenant(t, 2)
    t.tick(now=A_START)
    next_day = OBSERVED + timedelta(days=1)
    assert [t.tick(now=at)["lanes_fired"] for at in (OBSERVED, next_day)] == [1, 1]
    for n in range(2):
        t.start_workflow("echo", {"n": n}, now=next_day, wait=False)
    pending = _pending(t)
    assert {kind: len(ids) for kind, ids in pending.items()} == dict.fromkeys(RUN_KINDS, 2)
    stale_after = timedelta(seconds=t.settings.stuck_after_s)
    died, live = next_day, next_day + stale_after / 2  # when each run's worker claimed it
    with t.store.begin() as tx:
        for dead, alive in pending.values():
            assert claim_run(tx, run_id=dead, now=died) is not None
            assert claim_run(tx, run_id=alive, now=live) is not None
    swept = t.tick(now=died + stale_after + timedelta(seconds=1))
    assert (
        swept["trigger_runs_requeued"],
        swept["lane_attempts_requeued"],
        swept["workflow_runs_requeued"],
    ) == (1, 1, 1)
    assert _pending(t) == {kind: ids[:1] for kind, ids in pending.items()}
    again = t.tick(now=died + stale_after + timedelta(seconds=2))  # once
    assert again["trigger_runs_requeued"] == again["workflow_runs_requeued"] == 0
    assert again["lane_attempts_requeued"] == 0


@pytest.fixture
def probe() -> Probe:
    return Probe()


@pytest.fixture
def t(tocsin: Tocsin, probe: Probe) -> Tocsin:
    tocsin.lanes.register([make_lane(probe)])
    return tocsin
