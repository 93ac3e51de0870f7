"""The app's workflow runs are one scope of a worker's pool (``TOCSIN_MAX_RUNNING_PER_SCOPE``):
they take at most ``per_scope`` of its slots, and the pass moves on to the table runs, which
start on the slot left free while the workflow runs still hold theirs."""

from __future__ import annotations

import threading
import uuid

from pydantic import BaseModel

from support.waiting import wait_for
from tocsin import StepContext, step, workflow
from tocsin.runs.pool import APP_SCOPE, RunPool
from tocsin.service import Tocsin

from .helpers import NOW

RELEASE = threading.Event()


class Slow(BaseModel):
    n: int


@step(id="hold", input=Slow, output=Slow)
def hold(data: Slow, ctx: StepContext) -> Slow:
    assert RELEASE.wait(30)
    return data


def test_workflow_runs_take_their_share_of_the_pool_and_leave_a_slot_to_a_table_run(
    tocsin: Tocsin,
) -> None:
    RELEASE.clear()
    tocsin.register_workflows([workflow(id="slow", input=Slow, output=Slow).then(hold).commit()])
    for n in range(6):
        tocsin.start_workflow("slow", {"n": n}, now=NOW, wait=False)
    table = tocsin.create_table("chatroom", str(uuid.uuid4()), "B", {"N": "text"}, now=NOW)
    tocsin.set_triggers(
        table["id"], [{"on": "created", "actions": [{"type": "notify", "message": "b"}]}], now=NOW
    )
    pool = RunPool(3, per_scope=2)
    try:
        started = tocsin.work(pool=pool, now=NOW)  # returns: the app's 2 slots hold its runs
        assert started >= 2 and pool.active == 2
        assert pool.free() == 1 and pool.free(APP_SCOPE) == 0
        tocsin.insert_records(table["id"], [{"N": "x"}], now=NOW)
        assert tocsin.work(pool=pool, now=NOW) == 1  # B's run takes the free slot
        wait_for("the table run to be done", lambda: _statuses(tocsin, table["id"]) == ["done"])
    finally:
        RELEASE.set()
        assert pool.wait_idle(30)
    while tocsin.work(pool=pool, now=NOW):
        assert pool.wait_idle(30)
    assert tocsin.workflow_runs(status="success")["total"] == 6


def _statuses(tocsin: Tocsin, table_id: str) -> list[str]:
    return [run["status"] for run in tocsin.list_runs(table_id)["items"]]
