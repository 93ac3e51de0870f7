"""SPEC §12 workflow runs through the facade (SQLite and PostgreSQL): one path for manual and
scheduled runs, validation, parallel, suspend/resume, cancel, retry without re-running steps."""

from __future__ import annotations

import asyncio
import time
from datetime import datetime, timedelta
from typing import Any

import pytest
from pydantic import BaseModel

from runs.helpers import make_run, make_table, read_run, trigger
from tocsin import Conflict, NotFound, Schedule, StepContext, step, workflow
from tocsin.errors import ValidationError
from tocsin.service import Tocsin

from .helpers import NOW, ReportIn, ReportOut, daily, minutes, send_report


def test_manual_and_scheduled_runs_share_one_path(tocsin: Tocsin) -> None:
    tocsin.register_workflows([daily(cron="* * * * *", tz="UTC")])
    tocsin.sync_schedules(now=NOW)
    manual = tocsin.start_workflow("daily-report", {"user_id": "u1"}, now=NOW)
    tocsin.tick(now=NOW + minutes(1))
    tocsin.work(now=NOW + minutes(1))
    (scheduled,) = tocsin.workflow_runs(workflow_id="daily-report", status="success", limit=1)[
        "items"
    ]
    assert scheduled["trigger"] == "scheduled" and manual["trigger"] == "manual"
    for run in (manual, scheduled):
        assert run["status"] == "success" and run["error"] is None
        assert [s["id"] for s in run["steps"]] == ["send-report"]
        assert run["steps"][0]["status"] == "success"
        assert set(run) == set(scheduled)
    assert manual["output"] == {"ok": True, "user_id": "u1"}
    assert scheduled["output"] == {"ok": True, "user_id": "system"}
    assert manual["started_at"] == NOW  # the pass's instant; its end adds what it really took
    assert NOW <= manual["ended_at"] < NOW + timedelta(seconds=1)
    assert manual["duration_ms"] == round((manual["ended_at"] - NOW).total_seconds() * 1000)


@step(id="slow")
def slow_step(data: Any) -> Any:
    time.sleep(1.0)
    return data


@step(id="quick")
def quick_step(data: Any) -> Any:
    return data


@pytest.mark.parametrize("path", ["wait", "worker"])
def test_a_step_reports_the_time_it_really_took(tocsin: Tocsin, path: str) -> None:
    """Receipts and the run's duration are the pass's ``now`` plus the real elapsed time: a step
    that sleeps 1 s shows about 1,000 ms, whether run at once or by a worker's batch."""
    tocsin.register_workflows([workflow(id="slow-wf").then(slow_step).then(quick_step).commit()])
    run = tocsin.start_workflow("slow-wf", {"n": 1}, now=NOW, wait=path == "wait")
    if path == "worker":
        assert tocsin.work(now=NOW) == 1
    run = tocsin.get_workflow_run(run["id"])
    assert run["status"] == "success"
    slow, quick = run["steps"]
    took = datetime.fromisoformat(slow["ended_at"]) - datetime.fromisoformat(slow["started_at"])
    assert timedelta(seconds=1) <= took < timedelta(seconds=1.5)
    assert datetime.fromisoformat(slow["started_at"]) >= NOW
    assert datetime.fromisoformat(quick["started_at"]) >= datetime.fromisoformat(slow["ended_at"])
    assert 1000 <= run["duration_ms"] < 1500
    assert run["ended_at"] >= datetime.fromisoformat(quick["ended_at"])


def test_start_without_wait_enqueues_for_work(tocsin: Tocsin) -> None:
    tocsin.register_workflows([daily()])
    run = tocsin.start_workflow("daily-report", {"user_id": "u1"}, now=NOW, wait=False)
    assert (run["status"], run["steps"], run["started_at"]) == ("pending", [], None)
    assert tocsin.work(now=NOW + minutes(1)) == 1
    done = tocsin.get_workflow_run(run["id"])
    assert done["status"] == "success" and done["started_at"] == NOW + minutes(1)


def test_unknown_workflow_and_run_are_not_found(tocsin: Tocsin) -> None:
    with pytest.raises(NotFound, match="unknown workflow 'nope'"):
        tocsin.start_workflow("nope", {}, now=NOW)
    with pytest.raises(NotFound, match="workflow run not found"):
        tocsin.get_workflow_run("missing")
    with pytest.raises(ValidationError, match="invalid workflow run status"):
        tocsin.workflow_runs(status="done")


def test_input_validation_failure_fails_the_run_with_the_model_message(tocsin: Tocsin) -> None:
    tocsin.register_workflows([daily()])
    run = tocsin.start_workflow("daily-report", {"user": 1}, now=NOW)
    assert run["status"] == "failed"
    assert run["error"].startswith("workflow input invalid: 1 validation error for ReportIn")
    assert "user_id" in run["error"] and run["steps"] == []


class Count(BaseModel):
    n: int


def _chain(calls: list[str], fail_once: dict[str, bool] | None = None) -> Any:
    @step(id="one", input=Count, output=Count)
    def one(data: Count, ctx: StepContext) -> Count:
        calls.append("one")
        return Count(n=data.n + 1)

    @step(id="two", input=Count, output=Count)
    def two(data: Count, ctx: StepContext) -> Count:
        calls.append("two")
        if fail_once is not None and not fail_once.get("done"):
            fail_once["done"] = True
            raise RuntimeError("flaky downstream")
        return Count(n=data.n * 10)

    return workflow(id="chain", input=Count, output=Count).then(one).then(two).commit()


def test_then_feeds_output_to_the_next_step(tocsin: Tocsin) -> None:
    calls: list[str] = []
    tocsin.register_workflows([_chain(calls)])
    run = tocsin.start_workflow("chain", {"n": 1}, now=NOW)
    assert run["output"] == {"n": 20} and calls == ["one", "two"]


def test_retry_never_reexecutes_a_succeeded_step(tocsin: Tocsin) -> None:
    calls: list[str] = []
    tocsin.register_workflows([_chain(calls, fail_once={})])
    run = tocsin.start_workflow("chain", {"n": 1}, now=NOW)
    assert run["status"] == "failed" and run["error"] == "step 'two': flaky downstream"
    assert [s["status"] for s in run["steps"]] == ["success", "failed"]
    with pytest.raises(Conflict, match="only suspended runs can be resumed"):
        tocsin.resume_workflow_run(run["id"], {}, now=NOW)
    again = tocsin.retry_workflow_run(run["id"], now=NOW + minutes(1))
    assert again["status"] == "success" and again["output"] == {"n": 20}
    assert calls == ["one", "two", "two"]  # "one" ran once
    assert again["attempts"] == 2
    with pytest.raises(Conflict, match="run is success; only failed or canceled"):
        tocsin.retry_workflow_run(run["id"], now=NOW)


def test_parallel_runs_on_the_same_input_and_hands_a_mapping_on(tocsin: Tocsin) -> None:
    @step(id="a", input=Count)
    def a(data: Count, ctx: StepContext) -> dict[str, int]:
        return {"got": data.n}

    @step(id="b", input=Count)
    async def b(data: Count, ctx: StepContext) -> dict[str, int]:
        await asyncio.sleep(0)
        return {"got": data.n * 2}

    @step(id="sum")
    def total(data: dict[str, Any]) -> int:
        return int(data["a"]["got"] + data["b"]["got"])

    wf = workflow(id="fan", input=Count).parallel([a, b]).then(total).commit()
    tocsin.register_workflows([wf])
    run = tocsin.start_workflow("fan", {"n": 2}, now=NOW)
    assert run["status"] == "success" and run["output"] == 6
    assert [s["id"] for s in run["steps"]] == ["a", "b", "sum"]


def test_output_model_failure_fails_the_step(tocsin: Tocsin) -> None:
    @step(id="bad", output=ReportOut)
    def bad(data: Any, ctx: StepContext) -> dict[str, Any]:
        return {"ok": "not-a-bool"}

    tocsin.register_workflows([workflow(id="bad").then(bad).commit()])
    run = tocsin.start_workflow("bad", None, now=NOW)
    assert run["status"] == "failed" and "validation error for ReportOut" in run["error"]


def _approval() -> Any:
    @step(id="ask")
    def ask(data: Any, ctx: StepContext) -> dict[str, Any]:
        if ctx.resume_data is None:
            ctx.suspend({"question": "approve?"})
        return {"approved": ctx.resume_data["yes"]}

    @step(id="after")
    def after(data: dict[str, Any], ctx: StepContext) -> str:
        return "shipped" if data["approved"] else "dropped"

    return workflow(id="approval").then(ask).then(after).commit()


def test_suspend_and_resume(tocsin: Tocsin) -> None:
    tocsin.register_workflows([_approval()])
    run = tocsin.start_workflow("approval", {}, now=NOW)
    assert run["status"] == "suspended" and run["suspend_payload"] == {"question": "approve?"}
    assert run["steps"][0]["status"] == "suspended" and run["ended_at"] is None
    assert tocsin.work(now=NOW) == 0  # a suspended run waits for resume
    done = tocsin.resume_workflow_run(run["id"], {"yes": True}, now=NOW + minutes(5))
    assert done["status"] == "success" and done["output"] == "shipped"
    assert [s["status"] for s in done["steps"]] == ["success", "success"]


def test_cancel(tocsin: Tocsin) -> None:
    tocsin.register_workflows([_approval(), daily()])
    suspended = tocsin.start_workflow("approval", {}, now=NOW)
    canceled = tocsin.cancel_workflow_run(suspended["id"], now=NOW + minutes(1))
    assert canceled["status"] == "canceled" and canceled["ended_at"] == NOW + minutes(1)
    pending = tocsin.start_workflow("daily-report", {"user_id": "u"}, now=NOW, wait=False)
    tocsin.cancel_workflow_run(pending["id"], now=NOW)
    assert tocsin.work(now=NOW) == 0
    assert tocsin.get_workflow_run(pending["id"])["steps"] == []
    with pytest.raises(
        Conflict, match="workflow run is canceled; only pending, running or suspended"
    ):
        tocsin.cancel_workflow_run(pending["id"], now=NOW)
    with pytest.raises(NotFound):
        tocsin.cancel_workflow_run("nope", now=NOW)


def test_start_workflow_action_starts_a_real_run(tocsin: Tocsin) -> None:
    tocsin.register_workflows([daily()])
    trg = trigger(
        {"type": "start_workflow", "workflow_id": "daily-report", "input": {"user_id": "$run.id"}}
    )
    run = make_run(tocsin, make_table(tocsin, trg), trg)
    tocsin.work(now=NOW)
    done = read_run(tocsin, run["id"])
    assert done["status"] == "done"
    (wf_run,) = tocsin.workflow_runs(workflow_id="daily-report")["items"]
    assert (
        done["action_results"][0]["detail"] == f"started workflow daily-report: run {wf_run['id']}"
    )
    assert wf_run["status"] == "success" and wf_run["output"] == {"ok": True, "user_id": run["id"]}


def test_start_workflow_action_with_an_unknown_workflow_fails(tocsin: Tocsin) -> None:
    trg = trigger({"type": "start_workflow", "workflow_id": "nope", "input": {}})
    run = make_run(tocsin, make_table(tocsin, trg), trg)
    tocsin.work(now=NOW)
    done = read_run(tocsin, run["id"])
    assert done["status"] == "failed"
    assert done["error"] == "unknown workflow 'nope': no workflow with this id is registered"
    assert tocsin.workflow_runs()["total"] == 0


def test_a_process_claims_only_runs_it_can_execute(tocsin: Tocsin) -> None:
    tocsin.register_workflows([daily()])
    run = tocsin.start_workflow("daily-report", {"user_id": "u"}, now=NOW, wait=False)
    tocsin.workflows.clear()
    assert tocsin.work(now=NOW) == 0
    assert tocsin.get_workflow_run(run["id"])["status"] == "pending"


def test_schedule_with_a_list_fires_each_entry(tocsin: Tocsin) -> None:
    wf = (
        workflow(
            id="status",
            input=ReportIn,
            output=ReportOut,
            schedule=[
                Schedule(id="m", cron="0 9 * * *", timezone="UTC", input_data={"user_id": "m"}),
                Schedule(id="e", cron="0 18 * * *", timezone="UTC", input_data={"user_id": "e"}),
            ],
        )
        .then(send_report)
        .commit()
    )
    tocsin.register_workflows([wf])
    tocsin.sync_schedules(now=NOW)
    tocsin.tick(now=NOW.replace(hour=18))
    tocsin.work(now=NOW.replace(hour=18))
    (run,) = tocsin.workflow_runs()["items"]
    assert run["schedule_id"] == "wf_status__e" and run["output"]["user_id"] == "e"
