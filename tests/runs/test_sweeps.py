"""SPEC §6, §8, §9.7: recovery sweeps and the operator's bulk requeue."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from pydantic import BaseModel

from tocsin import StepContext, step, workflow
from tocsin.engine.sweeps import requeue_lost_runs
from tocsin.errors import ValidationError
from tocsin.service import Tocsin
from tocsin.store.runs import claim_run, save_receipt
from tocsin.store.tx import Tx

from .helpers import LATER, NOW, STALE, make_run, make_table, read_run, trigger

STUCK = 300


def lost_runs(tx: Tx, now: datetime) -> int:
    """The table-trigger runs the sweep moved (it has no lane attempt to move here)."""
    counts = requeue_lost_runs(tx, now=now, stuck_after_s=STUCK)
    assert counts["lane_attempts_requeued"] == 0
    return counts["trigger_runs_requeued"]


def test_sweep_requeues_dead_workers_runs_and_a_worker_resumes_them(tocsin: Tocsin) -> None:
    trg = trigger({"type": "notify", "message": "a"}, {"type": "notify", "message": "b"})
    table = make_table(tocsin, trg)
    run = make_run(tocsin, table, trg)
    with tocsin.store.begin() as tx:  # a worker claimed it, did act_1, then died
        claim_run(tx, run_id=run["id"], now=NOW)
        receipt = {"action_id": "act_1", "type": "notify", "ok": True, "detail": "x"}
        save_receipt(tx, run_id=run["id"], attempts=1, receipts=[receipt], now=NOW)
    with tocsin.store.begin() as tx:
        assert lost_runs(tx, NOW + timedelta(seconds=STUCK)) == 0
    with tocsin.store.begin() as tx:
        assert lost_runs(tx, STALE) == 1
    assert read_run(tocsin, run["id"])["status"] == "pending"
    assert tocsin.work(now=STALE) == 1
    done = read_run(tocsin, run["id"])
    assert done["status"] == "done" and done["attempts"] == 2
    assert [m["text"] for m in tocsin.messages(table["scope_id"])["items"]] == ["b"]


def test_sweep_counts_pending_runs_never_picked_up(tocsin: Tocsin) -> None:
    trg = trigger({"type": "notify", "message": "a"})
    table = make_table(tocsin, trg)
    run = make_run(tocsin, table, trg)
    with tocsin.store.begin() as tx:
        assert lost_runs(tx, LATER) == 0
        assert lost_runs(tx, STALE) == 1
        assert lost_runs(tx, STALE) == 0  # re-stamped
    assert read_run(tocsin, run["id"])["enqueued_at"] == STALE
    assert tocsin.work(now=STALE) == 1


def test_a_requeued_worker_that_wakes_up_writes_nothing(tocsin: Tocsin) -> None:
    trg = trigger({"type": "notify", "message": "a"})
    table = make_table(tocsin, trg)
    run = make_run(tocsin, table, trg)
    with tocsin.store.begin() as tx:
        claim_run(tx, run_id=run["id"], now=NOW)
        requeue_lost_runs(tx, now=STALE, stuck_after_s=STUCK)
    tocsin.work(now=STALE)  # attempt 2 completes the run
    with tocsin.store.begin() as tx:  # the old worker (attempt 1) tries to store a receipt
        assert not save_receipt(tx, run_id=run["id"], attempts=1, receipts=[], now=STALE)
    assert len(read_run(tocsin, run["id"])["action_results"]) == 1


def test_operator_requeue_counts_and_filters(tocsin: Tocsin) -> None:
    trg = trigger({"type": "notify", "message": "a"})
    table, other = make_table(tocsin, trg), make_table(tocsin, trg)
    stale_running = make_run(tocsin, table, trg)
    make_run(tocsin, table, trg)  # lost pending
    make_run(tocsin, other, trg)
    with tocsin.store.begin() as tx:
        claim_run(tx, run_id=stale_running["id"], now=NOW)
    assert tocsin.requeue(now=STALE, table_id=table["id"]) == {
        "pending": 1,
        "running": 1,
        "staged_changes": 0,
        "requeued": 2,
    }
    assert read_run(tocsin, stale_running["id"])["status"] == "pending"
    later = STALE + timedelta(seconds=10)
    assert tocsin.requeue(now=later, status="pending", older_than_s=5)["pending"] == 3
    assert tocsin.requeue(now=later, status="running")["requeued"] == 0


class _N(BaseModel):
    n: int


@step(id="same", input=_N, output=_N)
def _same(data: _N, ctx: StepContext) -> _N:
    return data


def test_operator_requeue_moves_table_runs_only(tocsin: Tocsin) -> None:
    """The operator's requeue (SPEC §9.7) is of table trigger runs: a stale running workflow
    run stays running (the tick's sweep hands it back, ``workflow_runs_requeued``)."""
    tocsin.register_workflows([workflow(id="same", input=_N, output=_N).then(_same).commit()])
    trg = trigger({"type": "notify", "message": "a"})
    table = make_table(tocsin, trg)
    run = make_run(tocsin, table, trg)
    flow = tocsin.start_workflow("same", {"n": 1}, now=NOW, wait=False)
    with tocsin.store.begin() as tx:
        for run_id in (run["id"], flow["id"]):
            assert claim_run(tx, run_id=run_id, now=NOW) is not None
    assert tocsin.requeue(now=STALE, table_id=table["id"], status="running")["running"] == 1
    assert tocsin.requeue(now=STALE, status="running")["running"] == 0
    assert tocsin.get_workflow_run(flow["id"])["status"] == "running"
    assert tocsin.tick(now=STALE)["workflow_runs_requeued"] == 1


def test_operator_requeue_rejects_bad_filters(tocsin: Tocsin) -> None:
    with pytest.raises(ValidationError):
        tocsin.requeue(now=NOW, status="done")
    with pytest.raises(ValidationError):
        tocsin.requeue(now=NOW, older_than_s=-1)
