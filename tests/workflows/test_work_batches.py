"""Workflow runs through the one worker (``Tocsin.work``, SQLite and PostgreSQL): ``limit`` and
``should_stop``, a claim fence per run, success events written with the finish (for the runs
the fence let through, only when some schedule listens); with a pool, the queue its slots share,
a slot more for a queue none of whose runs was taken for a look (``TOCSIN_SLOT_LOOK_S``), the
leases its claimer renews, and a run held past its budget sent back unstarted.
"""

from __future__ import annotations

import threading
from datetime import datetime, timedelta
from typing import Any

import pytest
from pydantic import BaseModel
from sqlalchemy import select

from support.claims import claimed_runs
from support.settings import with_settings
from support.waiting import wait_for
from tocsin import StepContext, WorkflowSucceeded, step, workflow
from tocsin.runs.pool import RunPool
from tocsin.runs.worker import serve_worker
from tocsin.service import Tocsin
from tocsin.store import trigger_events as store_events
from tocsin.store import workflow_runs as store_runs
from tocsin.store.runs import renew_runs
from tocsin.store.schema import runs
from tocsin.store.workflow_runs import IS_WORKFLOW

from .helpers import NOW, ReportIn, ReportOut, every_minute, minutes


def claims(chunk: int) -> pytest.MarkDecorator:
    """The test's ``tocsin`` with ``TOCSIN_RUN_CLAIM_CHUNK`` (runs a pool's claim takes per free
    slot) made small."""
    return with_settings(run_claim_chunk=chunk)


def _pending(tocsin: Tocsin, count: int) -> None:
    tocsin.register_workflows([every_minute()])
    for i in range(count):
        tocsin.start_workflow("tick-tock", {"user_id": f"u{i}"}, now=NOW, wait=False)


def _statuses(tocsin: Tocsin) -> dict[str, int]:
    return {
        status: tocsin.workflow_runs(status=status)["total"] for status in ("pending", "success")
    }


def test_work_runs_up_to_the_limit(tocsin: Tocsin) -> None:
    _pending(tocsin, 7)
    assert tocsin.work(now=NOW, limit=5) == 5
    assert _statuses(tocsin) == {"pending": 2, "success": 5}
    assert tocsin.work(now=NOW) == 2
    assert _statuses(tocsin) == {"pending": 0, "success": 7}
    assert tocsin.work(now=NOW) == 0


class Ask(BaseModel):
    cancel: bool = False


def test_a_stop_sends_the_claimed_runs_not_started_back_to_pending(tocsin: Tocsin) -> None:
    """The first run asks the worker to stop: it finishes, and the runs claimed with it go
    back to pending unstarted (their receipts none), to run from a later claim."""
    stop = threading.Event()

    def body(data: Ask, ctx: StepContext) -> Ask:
        stop.set()
        return data

    flow = workflow(id="stops", input=Ask, output=Ask)
    tocsin.register_workflows([flow.then(step(id="s", input=Ask, output=Ask)(body)).commit()])
    for _ in range(4):
        tocsin.start_workflow("stops", {}, now=NOW, wait=False)
    assert tocsin.work(now=NOW, should_stop=stop.is_set) == 1
    assert _statuses(tocsin) == {"pending": 3, "success": 1}
    assert tocsin.work(now=NOW) == 3
    assert _statuses(tocsin) == {"pending": 0, "success": 4}
    assert _attempts(tocsin) == [1, 2, 2, 2]  # the released ones were claimed once more


def test_success_events_only_for_listened_runs_the_fence_let_finish(tocsin: Tocsin) -> None:
    def body(data: Ask, ctx: StepContext) -> Ask:
        if data.cancel:  # canceled while its step runs: the finish is fenced out
            tocsin.cancel_workflow_run(ctx.run_id, now=NOW)
        return data

    work = step(id="work", input=Ask, output=Ask)(body)
    # "my_wf" is listened to; "myXwf" would match it if "_" were a LIKE wildcard
    flows = [workflow(id=w, input=Ask, output=Ask).then(work).commit() for w in ("my_wf", "myXwf")]
    tocsin.register_workflows(flows)
    tocsin.schedules.create(
        workflow_id="my_wf", trigger=WorkflowSucceeded("my_wf"), input_data={}, now=NOW
    )
    done = tocsin.start_workflow("my_wf", {}, now=NOW, wait=False)
    canceled = tocsin.start_workflow("my_wf", {"cancel": True}, now=NOW, wait=False)
    tocsin.start_workflow("myXwf", {}, now=NOW, wait=False)
    assert tocsin.work(now=NOW + minutes(1)) == 3
    assert tocsin.get_workflow_run(done["id"])["status"] == "success"
    assert tocsin.get_workflow_run(canceled["id"])["status"] == "canceled"
    with tocsin.store.begin() as tx:
        events = store_events.claim_events(tx, limit=10)
    assert [(e.kind, e.subject, e.occurred_at) for e in events] == [
        ("workflow_succeeded", "my_wf", NOW + minutes(1))
    ]


def test_nothing_listens_nothing_is_written(tocsin: Tocsin) -> None:
    tocsin.register_workflows([every_minute()])
    tocsin.sync_schedules(now=NOW)
    tocsin.tick(now=NOW + minutes(1))
    tocsin.start_workflow("tick-tock", ReportIn(user_id="m").model_dump(), now=NOW, wait=False)
    assert tocsin.work(now=NOW + minutes(1)) == 2
    assert _statuses(tocsin) == {"pending": 0, "success": 2}
    with tocsin.store.read() as tx:
        assert store_events.count_events(tx) == 0
    assert ReportOut  # the helpers' models, as the other tests use them


def test_receipts_keep_the_offset_of_the_instant_they_were_given() -> None:
    from datetime import timezone

    from tocsin.core.model import Run, RunStatus
    from tocsin.workflows.execute import run_stages

    wf = every_minute()
    run = Run(  # claimed: a workflow run of the one queue (its workflow is ``trigger_id``)
        id="r",
        table_id="",
        trigger_id=wf.id,
        record_id=None,
        source="manual",
        clock=False,
        status=RunStatus.RUNNING,
        attempts=1,
        error=None,
        action_results=[],
        payload=None,
        definition=None,
        identity=None,
        scheduled_for=None,
        enqueued_at=None,
        created_at=NOW,
        updated_at=NOW,
        started_at=NOW,
        finished_at=None,
        next_attempt_at=None,
        kind="workflow",
        input={"user_id": "u"},
    )
    shanghai = NOW.astimezone(timezone(timedelta(hours=8)))  # the same instant
    for at in (NOW, shanghai, NOW):
        stamp = run_stages(wf, run, now=at, save=lambda steps: True).steps[0]["started_at"]
        started = datetime.fromisoformat(stamp)
        assert started.utcoffset() == at.utcoffset()
        assert at <= started < at + timedelta(seconds=1)


# --- with a pool (``tocsin worker``, ``serve``): a claim's queue shared by the slots ---


def _drain_into(tocsin: Tocsin, pool: RunPool, **kwargs: Any) -> int:
    handed = 0
    while n := tocsin.work(pool=pool, **kwargs):
        handed += n
    assert pool.wait_idle(30)
    return handed


def _attempts(tocsin: Tocsin) -> list[int]:
    with tocsin.store.read() as tx:
        rows = tx.conn.execute(select(runs.c.attempts).where(IS_WORKFLOW)).scalars().all()
    return sorted(rows)


@with_settings(run_claim_chunk=8, slot_look_s=5.0)
def test_fast_runs_of_a_claim_take_one_slot(tocsin: Tocsin) -> None:
    """A claim's runs go to one slot; the claimer adds one only when no run of the queue was
    taken for a look (here never: the look is made 5 s long, and these runs end well within
    it), so fast runs take one slot and one finish (more slots would cost a finish each and
    contend for the interpreter)."""
    threads: set[str] = set()

    def body(data: Ask, ctx: StepContext) -> Ask:
        threads.add(threading.current_thread().name)
        return data

    flow = workflow(id="quick", input=Ask, output=Ask)
    tocsin.register_workflows([flow.then(step(id="s", input=Ask, output=Ask)(body)).commit()])
    for _ in range(20):
        tocsin.start_workflow("quick", {}, now=NOW, wait=False)
    assert _drain_into(tocsin, RunPool(4), now=NOW) == 20  # one claim: 4 free slots x 8
    assert len(threads) == 1
    assert _statuses(tocsin) == {"pending": 0, "success": 20}


@claims(chunk=2)
def test_a_pool_claims_a_share_per_free_slot_and_runs_each_once(tocsin: Tocsin) -> None:
    _pending(tocsin, 9)
    pool = RunPool(3)
    pool.start_pass(lambda: True)  # over at once: one claim, 3 free slots x 2
    assert tocsin.work(now=NOW, pool=pool) == 6
    assert pool.wait_idle(30)
    assert _statuses(tocsin) == {"pending": 3, "success": 6}
    assert _drain_into(tocsin, RunPool(3), now=NOW) == 3
    assert _statuses(tocsin) == {"pending": 0, "success": 9}
    assert _attempts(tocsin) == [1] * 9  # each run claimed once


@claims(chunk=8)
def test_slow_runs_of_a_claim_get_a_slot_each_up_to_the_pool(tocsin: Tocsin) -> None:
    """Runs that stay in their step: each look at the queue that sees none taken adds a slot,
    until the pool is full; the fifth run waits for a slot to come free."""
    entered, release = threading.Semaphore(0), threading.Event()

    def body(data: Ask, ctx: StepContext) -> Ask:
        entered.release()
        assert release.wait(30), "the test never released the steps"
        return data

    flow = workflow(id="held", input=Ask, output=Ask)
    tocsin.register_workflows([flow.then(step(id="s", input=Ask, output=Ask)(body)).commit()])
    for _ in range(5):
        tocsin.start_workflow("held", {}, now=NOW, wait=False)
    pool = RunPool(4)
    handed: list[int] = []
    claimer = threading.Thread(target=lambda: handed.append(tocsin.work(now=NOW, pool=pool)))
    claimer.start()
    try:
        for _ in range(4):
            assert entered.acquire(timeout=10), "the claimer did not add a slot behind a slow run"
        assert not entered.acquire(timeout=0.2)  # the pool is full: the fifth run waits
    finally:
        release.set()
    claimer.join(30)
    assert pool.wait_idle(30)
    assert handed == [5]
    assert _statuses(tocsin) == {"pending": 0, "success": 5}


class Slow(BaseModel):
    slow: bool = False


@claims(chunk=3)
def test_a_slow_run_holds_none_of_its_claims_other_runs(tocsin: Tocsin) -> None:
    """One claim's runs go into a queue its slots share: while one slot is in a slow step, the
    other slot takes every other run of the claim and finishes them."""
    release = threading.Event()

    def body(data: Slow, ctx: StepContext) -> Slow:
        if data.slow:
            assert release.wait(30), "the test never released the slow step"
        return data

    flow = workflow(id="mixed", input=Slow, output=Slow)
    tocsin.register_workflows([flow.then(step(id="s", input=Slow, output=Slow)(body)).commit()])
    slow = tocsin.start_workflow("mixed", {"slow": True}, now=NOW, wait=False)["id"]
    for _ in range(5):
        tocsin.start_workflow("mixed", {}, now=NOW, wait=False)
    pool = RunPool(2)
    try:
        assert tocsin.work(now=NOW, pool=pool) == 6  # one claim of 2 slots x 3
        assert pool.wait_for_slot(30)  # the other slot is done: it took all five fast runs
        counts = {s: tocsin.workflow_runs(status=s)["total"] for s in ("running", "success")}
        assert counts == {"running": 1, "success": 5}
        assert tocsin.get_workflow_run(slow)["status"] == "running"
    finally:
        release.set()
    assert pool.wait_idle(30)
    assert _statuses(tocsin) == {"pending": 0, "success": 6}
    assert _attempts(tocsin) == [1] * 6


def _stamp(tocsin: Tocsin, run_id: str) -> datetime:
    with tocsin.store.read() as tx:
        run = store_runs.get_run(tx, run_id=run_id)
    assert run is not None
    return run.updated_at


@claims(chunk=2)
def test_a_pool_renews_the_runs_it_holds_so_a_slow_step_never_looks_stale(tocsin: Tocsin) -> None:
    """A step outlasting ``TOCSIN_STUCK_AFTER_S`` (300 s) of the worker's clock: the claiming
    thread stamps the runs the pool holds (the slow one, and the one that ran before it and waits
    for their finish), so the stale sweep of a tick at that moment requeues neither, and no step
    runs twice."""
    elapsed, executed, seen = [0.0], [], {}
    clock = lambda: NOW + timedelta(seconds=elapsed[0])  # noqa: E731

    def body(data: Slow, ctx: StepContext) -> Slow:
        executed.append(ctx.run_id)
        if data.slow and ctx.attempt == 1:  # (a run requeued and run again is quick)
            elapsed[0] += 400.0
            later = NOW + timedelta(seconds=400)
            wait_for("the claimer's renewal", lambda: _stamp(tocsin, ctx.run_id) >= later)
            seen["requeued"] = tocsin.tick(now=clock())["workflow_runs_requeued"]
        return data

    flow = workflow(id="long", input=Slow, output=Slow)
    tocsin.register_workflows([flow.then(step(id="s", input=Slow, output=Slow)(body)).commit()])
    tocsin.start_workflow("long", {}, now=NOW, wait=False)  # runs first, then waits for its finish
    tocsin.start_workflow("long", {"slow": True}, now=NOW, wait=False)
    # ``tocsin worker``'s own loop, one slot: its first pass claims both runs into one queue;
    # while the slow step holds the slot, the next passes' claimer renews the held runs
    stop = threading.Event()
    loop = threading.Thread(
        target=serve_worker,
        args=(tocsin,),
        kwargs={"stop_event": stop, "poll_interval": 0.01, "clock": clock, "concurrency": 1},
    )
    loop.start()
    try:
        wait_for("both runs' finish", lambda: _statuses(tocsin)["success"] == 2)
    finally:
        stop.set()
        loop.join(30)
    assert seen == {"requeued": 0}
    assert _statuses(tocsin) == {"pending": 0, "success": 2}
    assert _attempts(tocsin) == [1, 1]
    assert len(executed) == 2  # each step once


def test_a_renewal_never_touches_a_run_whose_claim_was_lost(tocsin: Tocsin) -> None:
    _pending(tocsin, 1)
    later = NOW + timedelta(seconds=60)
    with tocsin.store.begin() as tx:
        (run,) = claimed_runs(tx, now=NOW, limit=1, workflow_ids=["tick-tock"])
        renew_runs(tx, runs_=[(run["id"], 2)], now=later)  # another claim's fence
    assert tocsin.get_workflow_run(run["id"])["status"] == "running"
    assert _stamp(tocsin, run["id"]) == NOW
    with tocsin.store.begin() as tx:
        renew_runs(tx, runs_=[(run["id"], 1)], now=later)
    assert _stamp(tocsin, run["id"]) == later


@claims(chunk=4)
def test_a_stop_sends_a_shares_unstarted_runs_back_to_pending(tocsin: Tocsin) -> None:
    stop = threading.Event()

    def body(data: Ask, ctx: StepContext) -> Ask:
        stop.set()  # the first run to start asks the worker to stop
        return data

    flow = workflow(id="stops", input=Ask, output=Ask)
    tocsin.register_workflows([flow.then(step(id="s", input=Ask, output=Ask)(body)).commit()])
    for _ in range(4):
        tocsin.start_workflow("stops", {}, now=NOW, wait=False)
    _drain_into(tocsin, RunPool(1), now=NOW, should_stop=stop.is_set)
    counts = {s: tocsin.workflow_runs(status=s)["total"] for s in ("pending", "running")}
    assert counts == {"pending": 3, "running": 0}
    assert tocsin.work(now=NOW) == 3  # the released runs run later, from pending
    assert _statuses(tocsin) == {"pending": 0, "success": 4}


@claims(chunk=3)
@pytest.mark.parametrize("pooled", [False, True])
def test_a_run_held_past_its_budget_goes_back_to_pending_unstarted(
    tocsin: Tocsin, pooled: bool
) -> None:
    """Behind a slow run of its batch, a claimed run would outlive the stale sweep's threshold
    and be claimed again while it waits: past a quarter of ``TOCSIN_STUCK_AFTER_S`` (300 s)
    since its claim it goes back to pending, never started, and runs from a later claim."""
    elapsed = [0.0]

    def slow(data: Ask, ctx: StepContext) -> Ask:
        elapsed[0] += 100.0  # each run takes 100 s of the worker's clock
        return data

    flow = workflow(id="slow", input=Ask, output=Ask)
    tocsin.register_workflows([flow.then(step(id="s", input=Ask, output=Ask)(slow)).commit()])
    runs = [tocsin.start_workflow("slow", {}, now=NOW, wait=False)["id"] for _ in range(3)]
    clock = lambda: NOW + timedelta(seconds=elapsed[0])  # noqa: E731
    if pooled:
        _drain_into(tocsin, RunPool(1), clock=clock)
    else:
        assert tocsin.work(clock=clock) == 3  # started, released ones not counted
    assert _statuses(tocsin) == {"pending": 0, "success": 3}
    assert _attempts(tocsin) == [1, 2, 3]  # run 2 and 3 were sent back, each claim after 100 s
    assert elapsed[0] == 300.0  # the step ran three times in all: no run's step ran twice
    assert all(len(tocsin.get_workflow_run(r)["steps"]) == 1 for r in runs)


def test_runs_no_thread_took_go_back_to_pending(
    tocsin: Tocsin, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A pool that cannot start a thread: the claimed runs go back to pending at once (not
    leased: nothing renews them) and the error reaches the worker's loop."""
    _pending(tocsin, 2)
    pool = RunPool(2)

    def no_thread(job: Any, **_: Any) -> None:
        raise RuntimeError("can't start new thread")

    monkeypatch.setattr(pool, "submit", no_thread)
    with pytest.raises(RuntimeError, match="can't start new thread"):
        tocsin.work(now=NOW, pool=pool)
    assert len(pool.leases) == 0
    assert _statuses(tocsin) == {"pending": 2, "success": 0}
    assert _drain_into(tocsin, RunPool(2), now=NOW) == 2
    assert _statuses(tocsin) == {"pending": 0, "success": 2}
