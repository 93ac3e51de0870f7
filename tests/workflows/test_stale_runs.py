"""A running workflow run whose worker died is swept back to pending by the tick's stale-run
sweep of every kind (``sweeps.requeue_lost_runs``, counted as ``workflow_runs_requeued``; SQLite
and PostgreSQL), then resumed after its succeeded steps. Time is explicit: the sweep compares
``updated_at`` with ``now``."""

from __future__ import annotations

from datetime import timedelta

import pytest
from pydantic import BaseModel

from tocsin import StepContext, step, workflow
from tocsin.service import Tocsin
from tocsin.workflows import Workflow

from .helpers import NOW


class Count(BaseModel):
    n: int


class WorkerKilled(BaseException):
    """What a killed worker looks like from inside: nothing after it runs (no finish)."""


def _chain(calls: list[str], crash: dict[str, bool]) -> Workflow:
    @step(id="one", input=Count, output=Count)
    def one(data: Count, ctx: StepContext) -> Count:
        calls.append("one")
        return Count(n=data.n + 1)

    @step(id="two", input=Count, output=Count)
    def two(data: Count, ctx: StepContext) -> Count:
        calls.append("two")
        if crash.pop("now", False):
            raise WorkerKilled
        return Count(n=data.n * 10)

    return workflow(id="chain", input=Count, output=Count).then(one).then(two).commit()


def test_a_stale_running_run_is_requeued_and_resumes_after_its_succeeded_steps(
    tocsin: Tocsin,
) -> None:
    calls: list[str] = []
    tocsin.register_workflows([_chain(calls, crash={"now": True})])
    run = tocsin.start_workflow("chain", {"n": 1}, now=NOW, wait=False)
    with pytest.raises(WorkerKilled):
        tocsin.work(now=NOW)
    stuck = tocsin.get_workflow_run(run["id"])
    assert stuck["status"] == "running" and [s["id"] for s in stuck["steps"]] == ["one"]

    stale = timedelta(seconds=tocsin.settings.stuck_after_s)
    fresh = tocsin.tick(now=NOW + stale)  # not older than the stale window yet
    assert fresh["workflow_runs_requeued"] == 0
    assert tocsin.get_workflow_run(run["id"])["status"] == "running"
    assert tocsin.work(now=NOW + stale) == 0  # a running run is nobody else's to take

    later = NOW + stale + timedelta(seconds=1)
    assert tocsin.tick(now=later)["workflow_runs_requeued"] == 1
    requeued = tocsin.get_workflow_run(run["id"])
    assert requeued["status"] == "pending" and requeued["steps"] == stuck["steps"]
    assert tocsin.tick(now=later)["workflow_runs_requeued"] == 0  # once

    assert tocsin.work(now=later) == 1
    done = tocsin.get_workflow_run(run["id"])
    assert done["status"] == "success" and done["output"] == {"n": 20}
    assert calls == ["one", "two", "two"]  # "one" succeeded before the crash: not run again
    assert done["attempts"] == 2


def test_the_sweep_leaves_other_statuses_alone(tocsin: Tocsin) -> None:
    calls: list[str] = []
    tocsin.register_workflows([_chain(calls, crash={})])
    finished = tocsin.start_workflow("chain", {"n": 1}, now=NOW)
    pending = tocsin.start_workflow("chain", {"n": 2}, now=NOW, wait=False)
    much_later = NOW + timedelta(days=1)
    assert tocsin.tick(now=much_later)["workflow_runs_requeued"] == 0
    assert tocsin.get_workflow_run(finished["id"])["status"] == "success"
    assert tocsin.get_workflow_run(pending["id"])["status"] == "pending"
