"""SPEC §9.2, §10, §12: a ``start_workflow`` action's child run is inserted in the transaction
that stores the action's receipt, so a parent run retried after a crash, or one whose receipt
write was fenced out, never starts a second child.

The crash test SIGKILLs a real worker process right after the transaction holding the child's
insert committed (``child_crash_worker``); after recovery (the moderator retry, then the tick's
sweep) exactly one child run exists for the parent, whose next action (a webhook to a real
receiver) is delivered once.
"""

from __future__ import annotations

from typing import Any

from support.forkserver import FORKSERVER
from tocsin.service import Tocsin

from . import child_crash_worker
from .child_crash_worker import CHILD, child_workflow
from .helpers import NOW, STALE, make_run, make_table, read_run, trigger
from .receiver import Receiver

DEADLINE_S = 15.0
START = {"type": "start_workflow", "workflow_id": CHILD, "input": {"parent": "$run.id"}}


def children(t: Tocsin, parent_id: str) -> list[dict[str, Any]]:
    items = t.workflow_runs(workflow_id=CHILD, limit=500)["items"]
    return [r for r in items if r["input"] == {"parent": parent_id}]


def kill_after_child_insert(url: str) -> None:
    committed = FORKSERVER.Event()
    worker = FORKSERVER.Process(
        target=child_crash_worker.main, args=(url, NOW.isoformat(), committed), daemon=True
    )
    worker.start()
    try:
        assert committed.wait(DEADLINE_S), f"no child insert (exit {worker.exitcode})"
        worker.kill()  # SIGKILL, right after the commit holding the child's insert
        worker.join(DEADLINE_S)
        assert worker.exitcode == -9
    finally:
        if worker.exitcode is None:
            worker.kill()
            worker.join(DEADLINE_S)
        worker.close()


def test_sigkill_after_a_child_start_leaves_exactly_one_child(
    tocsin: Tocsin, store_url: str
) -> None:
    tocsin.register_workflows([child_workflow()])
    with Receiver() as rx:
        trg = trigger(START, {"type": "webhook", "url": rx.url})
        table = make_table(tocsin, trg)
        for round_no in range(2):
            run = make_run(tocsin, table, trg)
            kill_after_child_insert(store_url)
            killed = read_run(tocsin, run["id"])
            assert killed["status"] == "running"  # the crash left it running
            assert len(children(tocsin, run["id"])) == 1  # the child's insert was committed
            if round_no == 0:
                tocsin.retry_run(run["table_id"], run["id"], now=STALE)
            else:
                assert tocsin.tick(now=STALE)["trigger_runs_requeued"] == 1
            tocsin.work(now=STALE)
            done = read_run(tocsin, run["id"])
            assert done["status"] == "done", done
            (child,) = children(tocsin, run["id"])  # exactly one: the retry did not start another
            assert child["status"] == "success"
            assert (
                done["action_results"][0]["detail"] == f"started workflow child: run {child['id']}"
            )
            assert rx.deliveries[f"tocsin-{run['id']}-act_2"] == 1


def test_a_parent_that_lost_its_claim_leaves_no_child(tocsin: Tocsin) -> None:
    """The run is requeued (its worker looked dead) between its claim and its start_workflow
    action: the action's receipt write is fenced out, and the child's insert is rolled back
    with it; the worker that claims the run next starts the one child."""
    tocsin.register_workflows([child_workflow()])
    trg = trigger(START)
    run = make_run(tocsin, make_table(tocsin, trg), trg)
    requeued: list[int] = []

    def clock() -> Any:  # read before each claim and action: the requeue lands after the claim
        if not requeued and read_run(tocsin, run["id"])["status"] == "running":
            requeued.append(tocsin.requeue(now=STALE, status="running")["running"])
        return NOW

    assert tocsin.work(clock=clock, limit=1) == 1
    assert requeued == [1]
    lost = read_run(tocsin, run["id"])
    assert lost["status"] == "pending" and lost["action_results"] == []
    assert children(tocsin, run["id"]) == []  # rolled back with the receipt
    tocsin.work(now=STALE)
    assert read_run(tocsin, run["id"])["status"] == "done"
    (child,) = children(tocsin, run["id"])
    assert child["status"] == "success"
