"""``work`` without a pool: batches claimed, run and finished (SQLite and PostgreSQL):
``limit`` and ``should_stop`` looked at before each claim, a claim fence per run, and success
events written with the finish, for the runs the fence let through, only when some schedule
listens.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import datetime, timedelta
from typing import Any

import pytest
from pydantic import BaseModel
from sqlalchemy import select

from support.settings import with_settings
from tocsin import StepContext, WorkflowSucceeded, step, workflow
from tocsin.runs.pool import RunPool
from tocsin.runs.worker import serve_worker
from tocsin.service import Tocsin
from tocsin.store import trigger_events as store_events
from tocsin.store import workflow_claims as store_claims
from tocsin.store.schema import runs
from tocsin.store.workflow_runs import IS_WORKFLOW
from tocsin.workflows import runner

from .helpers import NOW, ReportIn, ReportOut, claimed_runs, every_minute, minutes


def claims(batch: int | None = None, chunk: int | None = None) -> pytest.MarkDecorator:
    """The test's ``tocsin`` with ``TOCSIN_WORKFLOW_CLAIM_BATCH`` / ``_CHUNK`` made small."""
    sizes = {"workflow_claim_batch": batch, "workflow_claim_chunk": chunk}
    return with_settings(**{name: n for name, n in sizes.items() if n is not None})


def _pending(tocsin: Tocsin, count: int) -> None:
    tocsin.register_workflows([every_minute()])
    for i in range(count):
        tocsin.start_workflow("tick-tock", {"user_id": f"u{i}"}, now=NOW, wait=False)


def _statuses(tocsin: Tocsin) -> dict[str, int]:
    return {
        status: tocsin.workflow_runs(status=status)["total"] for status in ("pending", "success")
    }


@claims(batch=2)
def test_work_runs_batch_after_batch_up_to_the_limit(tocsin: Tocsin) -> None:
    _pending(tocsin, 7)
    assert tocsin.work(now=NOW, limit=5) == 5  # batches of 2, 2 and 1
    assert _statuses(tocsin) == {"pending": 2, "success": 5}
    assert tocsin.work(now=NOW) == 2
    assert _statuses(tocsin) == {"pending": 0, "success": 7}
    assert tocsin.work(now=NOW) == 0


@claims(batch=2)
def test_a_stop_request_is_seen_before_the_next_claim(tocsin: Tocsin) -> None:
    _pending(tocsin, 6)
    # asked by the table runs' pass, then before the first workflow claim; set from then on
    answers: Iterator[bool] = iter([False, False])
    assert tocsin.work(now=NOW, should_stop=lambda: next(answers, True)) == 2
    assert _statuses(tocsin) == {"pending": 4, "success": 2}


class Ask(BaseModel):
    cancel: bool = False


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

    from tocsin.workflows.execute import run_stages

    wf = every_minute()
    run = {"id": "r", "workflow_id": wf.id, "input": {"user_id": "u"}, "steps": []}
    shanghai = NOW.astimezone(timezone(timedelta(hours=8)))  # the same instant
    for at in (NOW, shanghai, NOW):
        stamp = run_stages(wf, run, now=at, save=lambda steps: True).steps[0]["started_at"]
        started = datetime.fromisoformat(stamp)
        assert started.utcoffset() == at.utcoffset()
        assert at <= started < at + timedelta(seconds=1)


@claims(batch=2)
def test_a_failed_claim_never_undoes_the_finish_it_shares_a_transaction_with(
    tocsin: Tocsin, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The next batch is claimed in the last batch's finish transaction; a claim that fails
    there (a failed statement aborts a PostgreSQL transaction) rolls back alone: the finished
    runs stay finished, the error reaches the caller, and the next call goes on."""

    _pending(tocsin, 3)
    claim = store_claims.claim_next_rows
    calls = [0]

    def failing_second(tx, **kwargs):  # type: ignore[no-untyped-def]
        calls[0] += 1
        if calls[0] == 2:
            tx.conn.exec_driver_sql("SELECT no_such_column FROM runs")
        return claim(tx, **kwargs)

    monkeypatch.setattr(store_claims, "claim_next_rows", failing_second)
    with pytest.raises(Exception, match="no_such_column"):
        tocsin.work(now=NOW)
    assert _statuses(tocsin) == {"pending": 1, "success": 2}
    assert tocsin.work(now=NOW) == 1
    assert _statuses(tocsin) == {"pending": 0, "success": 3}


# --- with a pool (``tocsin worker``, ``serve``): shares of a claim dealt over the free slots ---


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


@claims(batch=4, chunk=2)  # under 3 slots x chunk: chunk per slot
def test_a_pool_claims_a_share_per_free_slot_in_one_statement(
    tocsin: Tocsin, monkeypatch: pytest.MonkeyPatch
) -> None:

    _pending(tocsin, 9)
    claims: list[tuple[int, int]] = []
    claim = store_claims.claim_next_rows

    def counted(tx, **kwargs):  # type: ignore[no-untyped-def]
        got = claim(tx, **kwargs)
        claims.append((kwargs["limit"], len(got)))
        return got

    monkeypatch.setattr(store_claims, "claim_next_rows", counted)
    assert _drain_into(tocsin, RunPool(3), now=NOW) == 9
    assert claims[0] == (6, 6)  # 3 free slots x 2: one statement, into the slots' queue
    assert _statuses(tocsin) == {"pending": 0, "success": 9}
    assert _attempts(tocsin) == [1] * 9  # each run claimed once


@claims(batch=6, chunk=2)
def test_a_small_pool_claims_a_batch_worth_per_claim(
    tocsin: Tocsin, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A pool whose free slots would claim less than ``BATCH`` in all takes more per slot: a
    pool of one claimed ``CHUNK`` at a time, each claim after the last share's finish."""

    _pending(tocsin, 9)
    claims: list[int] = []
    claim = store_claims.claim_next_rows

    def counted(tx, **kwargs):  # type: ignore[no-untyped-def]
        got = claim(tx, **kwargs)
        claims.append(len(got))
        return got

    monkeypatch.setattr(store_claims, "claim_next_rows", counted)
    assert _drain_into(tocsin, RunPool(1), now=NOW) == 9
    assert claims[:2] == [6, 3]  # a batch's worth for the one slot, then the rest
    assert _statuses(tocsin) == {"pending": 0, "success": 9}
    assert _attempts(tocsin) == [1] * 9


@with_settings(workflow_claim_chunk=8, workflow_slot_look_s=5.0)
def test_fast_runs_of_a_claim_take_one_slot_and_one_finish(
    tocsin: Tocsin, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A claim's runs go to one slot first; the claimer adds one only when the slots on the
    queue lag (here never: the look is made 5 s long, and these runs are done well within it).
    Every free slot on every claim cost a finish each and, on CPU-bound runs, only contention."""
    _pending(tocsin, 20)
    slots: list[int] = []
    run_batch = runner.execute_batch

    def counted(*args: Any, **kwargs: Any) -> Any:
        slots.append(len(args[2]))  # the runs waiting in the queue when the slot started
        return run_batch(*args, **kwargs)

    monkeypatch.setattr(runner, "execute_batch", counted)
    assert _drain_into(tocsin, RunPool(4), now=NOW) == 20  # one claim: 4 free slots x 8
    assert slots == [20]
    assert _statuses(tocsin) == {"pending": 0, "success": 20}


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
    other slot takes every other run of the claim and finishes them (dealt out in fixed shares,
    runs 3 and 5 would wait behind the slow run 1)."""
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


@claims(chunk=2)
def test_a_pool_renews_the_runs_it_holds_so_a_slow_step_never_looks_stale(
    tocsin: Tocsin, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A step outlasting ``TOCSIN_STUCK_AFTER_S`` (300 s) of the worker's clock: the claiming
    thread stamps the runs the pool holds (the slow one, and the one that ran before it and waits
    for their finish), so the stale sweep of a tick at that moment requeues neither, and no step
    runs twice."""
    elapsed, executed, seen = [0.0], [], {}
    clock = lambda: NOW + timedelta(seconds=elapsed[0])  # noqa: E731
    renewed = threading.Event()
    renew = runner.Leases.renew

    def spied(self: runner.Leases, store: Any, at: Any, every_s: float) -> None:
        renew(self, store, at, every_s)  # committed when it returns
        if at - NOW >= timedelta(seconds=400):
            renewed.set()

    monkeypatch.setattr(runner.Leases, "renew", spied)
    finished = threading.Event()
    run_batch = runner.execute_batch

    def watched(*args: Any, **kwargs: Any) -> Any:
        try:
            return run_batch(*args, **kwargs)
        finally:  # a slot's finish committed
            if _statuses(tocsin)["success"] == 2:
                finished.set()

    monkeypatch.setattr(runner, "execute_batch", watched)

    def body(data: Slow, ctx: StepContext) -> Slow:
        executed.append(ctx.run_id)
        if data.slow and ctx.attempt == 1:  # (a run requeued and run again is quick)
            elapsed[0] += 400.0
            assert renewed.wait(30), "the claiming thread never renewed the held runs"
            seen["requeued"] = tocsin.tick(now=clock())["workflow_runs_requeued"]
        return data

    flow = workflow(id="long", input=Slow, output=Slow)
    tocsin.register_workflows([flow.then(step(id="s", input=Slow, output=Slow)(body)).commit()])
    tocsin.start_workflow("long", {}, now=NOW, wait=False)  # runs first, then waits for its finish
    tocsin.start_workflow("long", {"slow": True}, now=NOW, wait=False)
    # ``tocsin worker``'s own loop, one slot, passes of 2: its first pass claims both runs and
    # returns; while the slow step holds the slot, the next pass's claimer waits for a slot in
    # the table runs' drain, and renews from there (RunPool.on_busy)
    stop = threading.Event()
    loop = threading.Thread(
        target=serve_worker,
        args=(tocsin,),
        kwargs={
            "stop_event": stop,
            "poll_interval": 0.01,
            "clock": clock,
            "concurrency": 1,
            "batch": 2,
        },
    )
    loop.start()
    try:
        assert finished.wait(30), "the runs never finished"
    finally:
        stop.set()
        loop.join(30)
    assert seen == {"requeued": 0}
    assert _statuses(tocsin) == {"pending": 0, "success": 2}
    assert _attempts(tocsin) == [1, 1]
    assert len(executed) == 2  # each step once


def test_a_renewal_never_touches_a_run_whose_claim_was_lost(tocsin: Tocsin) -> None:
    from tocsin.store import workflow_runs as store_runs

    _pending(tocsin, 1)
    later = NOW + timedelta(seconds=60)
    with tocsin.store.begin() as tx:
        (run,) = claimed_runs(tx, now=NOW, limit=1, workflow_ids=["tick-tock"])
        store_runs.renew_runs(tx, runs=[(run["id"], 2)], now=later)  # another claim's fence
    assert tocsin.get_workflow_run(run["id"])["status"] == "running"
    with tocsin.store.read() as tx:
        assert store_runs.get_run(tx, run_id=run["id"])["updated_at"] == NOW
    with tocsin.store.begin() as tx:
        store_runs.renew_runs(tx, runs=[(run["id"], 1)], now=later)
    with tocsin.store.read() as tx:
        assert store_runs.get_run(tx, run_id=run["id"])["updated_at"] == later


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


@claims(batch=3, chunk=3)
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


def test_runs_no_thread_took_are_not_leased(
    tocsin: Tocsin, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A pool that cannot start a thread: the claimed runs are not renewed (the stale sweep
    hands them back to pending) and the error reaches the worker's loop."""
    _pending(tocsin, 2)
    pool = RunPool(2)

    def no_thread(job: Any, **_: Any) -> None:
        raise RuntimeError("can't start new thread")

    monkeypatch.setattr(pool, "submit", no_thread)
    with pytest.raises(RuntimeError):
        tocsin.work(now=NOW, pool=pool)
    # a later pass renews what the process still holds: nothing
    assert tocsin.work(now=NOW + timedelta(seconds=100), pool=RunPool(2)) == 0
    assert tocsin.tick(now=NOW + timedelta(seconds=301))["workflow_runs_requeued"] == 2


def test_a_claims_queue_holds_plain_driver_rows_decoded_as_each_run_is_taken(
    tocsin: Tocsin,
) -> None:
    """Claimed runs wait in a queue as the driver's rows (plain values, JSON as its text, no
    dict per run for the collector to walk); a slot taking one gets it decoded, oldest first."""
    _pending(tocsin, 3)
    with tocsin.store.begin() as tx:
        rows = store_claims.claim_next_rows(tx, now=NOW, limit=3, workflow_ids=["tick-tock"])
    plain = (str, int, datetime, type(None))
    assert [type(row) for row in rows] == [tuple] * 3
    assert all(type(cell) in plain for row in rows for cell in row)
    assert {store_claims.fence(row)[1] for row in rows} == {1}
    queue = runner.Claim(rows)
    taken = [runner._next(queue) for _ in range(3)]
    assert runner._next(queue) is None and queue.emptied.is_set()
    assert [run["input"] for run in taken if run] == [{"user_id": f"u{i}"} for i in range(3)]
    assert all(run and run["steps"] == [] and run["created_at"].tzinfo for run in taken)
