"""A pass of ``tocsin worker`` (``serve_worker``: one ``work`` call on its pool) starts up to
``batch`` runs and claims nothing more once ``pass_s`` has passed, its first claim still made:
a backlog of fast runs goes in few big passes, while a pass of slow runs ends by its time, and
the next pass looks at approved changes again. One claim takes table runs and workflow runs
both: a backlog of one kind never starves the other (SQLite and PostgreSQL)."""

from __future__ import annotations

import threading
from datetime import datetime
from typing import Any

import pytest
from pydantic import BaseModel

from support.settings import with_settings
from tocsin import StepContext, step, workflow
from tocsin.runs.pool import RunPool
from tocsin.runs.worker import serve_worker
from tocsin.service import Tocsin

from .helpers import NOW, make_run, make_table, read_run, trigger

WAIT_S = 30.0


def test_a_pool_without_a_pass_never_ends_one() -> None:
    pool = RunPool(1)
    assert not pool.pass_over()
    pool.start_pass(lambda: False)
    assert not pool.pass_over()
    pool.start_pass(lambda: True)
    assert pool.pass_over()


class Empty(BaseModel):
    pass


@step(id="noop", input=Empty, output=Empty)
def noop(data: Empty, ctx: StepContext) -> Empty:
    return data


@with_settings(run_claim_chunk=2)  # 2 slots x 2 per claim
def test_workflow_runs_of_a_pass_over_its_time_are_claimed_once(tocsin: Tocsin) -> None:
    tocsin.register_workflows([workflow(id="noop", input=Empty, output=Empty).then(noop).commit()])
    for _ in range(9):
        tocsin.start_workflow("noop", {}, now=NOW, wait=False)
    pool = RunPool(2)
    pool.start_pass(lambda: True)  # over before the first claim: that claim still goes
    assert tocsin.work(now=NOW, pool=pool) == 4
    assert pool.wait_idle(WAIT_S)
    assert tocsin.workflow_runs(status="pending")["total"] == 5
    pool.start_pass(lambda: False)  # a pass with time left claims until nothing is pending
    assert tocsin.work(now=NOW, pool=pool) == 5
    assert pool.wait_idle(WAIT_S)
    assert tocsin.workflow_runs(status="success")["total"] == 9


@with_settings(run_claim_chunk=2)  # 2 slots x 2 per claim
def test_a_pool_pass_bounded_by_limit_takes_its_last_claim_whole(tocsin: Tocsin) -> None:
    """With a pool, ``limit`` bounds what a pass claims by whole claims: the claim that reaches
    it takes what the free slots may hold (here 4 for a limit of 3), not the few runs left below
    it (``tocsin worker``'s passes of ``batch`` runs each ended with such a claim: a statement
    and a transaction for a rest)."""
    tocsin.register_workflows([workflow(id="noop", input=Empty, output=Empty).then(noop).commit()])
    for _ in range(9):
        tocsin.start_workflow("noop", {}, now=NOW, wait=False)
    pool = RunPool(2)
    pool.start_pass(lambda: False)
    assert tocsin.work(now=NOW, limit=3, pool=pool) == 4
    assert pool.wait_idle(WAIT_S)
    assert tocsin.workflow_runs(status="success")["total"] == 4
    assert tocsin.workflow_runs(status="pending")["total"] == 5


def test_a_pool_claims_its_share_of_a_claim_batch_per_slot_by_default(tocsin: Tocsin) -> None:
    """Without ``TOCSIN_RUN_CLAIM_CHUNK`` a pool's claim takes ``GROUP_BATCH`` (1,000) shared by
    its slots per slot a tenant may take: 5 in a pool of 200 whose tenants may take one slot
    each (a fixed 64 would take all 14 runs), 8 in a pool of 125."""
    tocsin.register_workflows([workflow(id="noop", input=Empty, output=Empty).then(noop).commit()])
    for _ in range(14):
        tocsin.start_workflow("noop", {}, now=NOW, wait=False)

    def one_claim(size: int) -> int:
        pool = RunPool(size, per_scope=1)
        pool.start_pass(lambda: True)  # over before the first claim: that claim still goes
        claimed = tocsin.work(now=NOW, pool=pool)
        assert pool.wait_idle(WAIT_S)
        return claimed

    assert one_claim(200) == 5
    assert one_claim(125) == 8
    assert tocsin.workflow_runs(status="pending")["total"] == 1


def test_one_claim_takes_table_runs_and_workflow_runs_both(tocsin: Tocsin) -> None:
    """With backlogs of both kinds, each claim takes some of each: the one claim visits the
    table's tenant scope and the workflow's (``app/wf:noop``) in turn, each up to its share of
    the claim (6 over two scopes: 3 each); neither kind waits for the other's backlog to drain."""
    tocsin.register_workflows([workflow(id="noop", input=Empty, output=Empty).then(noop).commit()])
    trg = trigger({"type": "notify", "message": "x"})
    table = make_table(tocsin, trg)
    runs = [make_run(tocsin, table, trg) for _ in range(8)]
    for _ in range(8):
        tocsin.start_workflow("noop", {}, now=NOW, wait=False)
    assert tocsin.work(now=NOW, limit=6) == 6
    done = [read_run(tocsin, r["id"])["status"] for r in runs].count("done")
    assert (done, tocsin.workflow_runs(status="success")["total"]) == (3, 3)
    assert tocsin.work(now=NOW) == 10
    assert all(read_run(tocsin, r["id"])["status"] == "done" for r in runs)
    assert tocsin.workflow_runs(status="success")["total"] == 8


@with_settings(run_claim_chunk=2)  # 2 slots x 2 per claim
def test_table_runs_of_a_pass_over_its_time_are_claimed_once(tocsin: Tocsin) -> None:
    trg = trigger({"type": "notify", "message": "x"})
    table = make_table(tocsin, trg)
    runs = [make_run(tocsin, table, trg) for _ in range(9)]
    pool = RunPool(2)
    pool.start_pass(lambda: True)
    assert tocsin.work(now=NOW, pool=pool) == 4  # one claim: 2 per free slot
    assert pool.wait_idle(WAIT_S)
    statuses = [read_run(tocsin, r["id"])["status"] for r in runs]
    assert statuses.count("done") == 4 and statuses.count("pending") == 5
    pool.start_pass(lambda: False)
    assert tocsin.work(now=NOW, pool=pool) == 5
    assert pool.wait_idle(WAIT_S)
    assert all(read_run(tocsin, r["id"])["status"] == "done" for r in runs)


class Passes:
    """A ``WorkSource`` recording, at each pass, whether its pool's pass was already over."""

    def __init__(self, stop: threading.Event, passes: int) -> None:
        self.stop, self.passes = stop, passes
        self.over: list[bool] = []

    def work(self, now: datetime | None = None, limit: int | None = None, **kw: Any) -> int:
        self.over.append(kw["pool"].pass_over())
        if len(self.over) >= self.passes:
            self.stop.set()
        return 1  # started something: the loop does not idle


@pytest.mark.parametrize(("pass_s", "over"), [(60.0, False), (0.0, True)])
def test_the_worker_loop_begins_a_pass_of_pass_s_before_each_work(
    pass_s: float, over: bool
) -> None:
    stop = threading.Event()
    source = Passes(stop, passes=3)
    assert serve_worker(source, stop_event=stop, poll_interval=0.01, pass_s=pass_s)
    assert source.over == [over] * 3
