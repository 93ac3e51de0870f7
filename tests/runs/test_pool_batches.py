"""A worker's pool (``tocsin worker``, ``serve``) executes table runs with the one batching
strategy of ``runs.batch`` (SQLite and PostgreSQL): a claim takes a chunk per free slot into a
tenant's queue; notify-only runs of it finish in groups, one transaction each, not one thread and
three writes per run; a run that must go alone hands the rest of the queue to another free slot
(``test_concurrency``: slow runs still take a slot each); on a stop, the queue's runs not started
go back to pending."""

from __future__ import annotations

import threading
from typing import Any

from sqlalchemy import event

from tocsin.runs.pool import RunPool
from tocsin.service import Tocsin

from .helpers import LATER, make_run, make_table, read_run, trigger

WAIT_S = 30.0
RUNS = 40


def test_a_pool_finishes_a_backlog_of_notify_runs_in_groups(tocsin: Tocsin) -> None:
    trg = trigger({"type": "notify", "message": "run $run.id"})
    table = make_table(tocsin, trg)
    runs = [make_run(tocsin, table, trg) for _ in range(RUNS)]
    writes: list[str] = []

    def count(_conn: Any, _cur: Any, statement: str, *_rest: Any) -> None:
        if " ".join(statement.split()).upper().startswith(("UPDATE RUNS", "WITH")):
            writes.append(statement)

    event.listen(tocsin.store.engine, "before_cursor_execute", count)
    try:
        pool = RunPool(4)
        assert tocsin.work(now=LATER, pool=pool) == RUNS  # one claim: 64 per free slot
        assert pool.wait_idle(WAIT_S)
    finally:
        event.remove(tocsin.store.engine, "before_cursor_execute", count)
    for run in runs:
        back = read_run(tocsin, run["id"])
        assert back["status"] == "done", back
        [receipt] = back["action_results"]
        assert receipt["ok"] is True and receipt["detail"]
    assert tocsin.messages(table["scope_id"], limit=100)["total"] == RUNS
    # the claims (the last one finds nothing), the group's messages and its finish: a handful
    # of writes for the 40 runs (one at a time: a message and a finish per run)
    assert len(writes) <= 5, [w[:60] for w in writes]


def test_a_stop_sends_the_runs_a_queue_did_not_start_back_to_pending(tocsin: Tocsin) -> None:
    entered, release, stop = threading.Event(), threading.Event(), threading.Event()

    def hold(inputs: dict[str, Any]) -> str:
        entered.set()
        release.wait(WAIT_S)
        return "held"

    tocsin.register_command("hold", hold)
    trg = trigger({"type": "invoke_command", "command": "hold"})
    table = make_table(tocsin, trg)
    runs = [make_run(tocsin, table, trg) for _ in range(3)]
    pool = RunPool(1)  # one slot: the queue's other runs wait behind the first
    pool.start_pass(lambda: True)  # a pass over its time: one claim, then the call returns
    assert tocsin.work(now=LATER, pool=pool, should_stop=stop.is_set) == 3
    assert entered.wait(WAIT_S)
    stop.set()
    release.set()
    assert pool.wait_idle(WAIT_S)
    statuses = [read_run(tocsin, r["id"])["status"] for r in runs]
    assert sorted(statuses) == ["done", "pending", "pending"]  # the one started finished
    assert tocsin.work(now=LATER) == 2
    assert all(read_run(tocsin, r["id"])["status"] == "done" for r in runs)
