"""Automatic retries, failure alerts and timeouts of workflow runs, through the facade (SQLite
and PostgreSQL), time driven by ``now=``."""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from typing import Any

import pytest

from tocsin import NonRetryable, Schedule, step, workflow
from tocsin.errors import ConfigError
from tocsin.service import Tocsin

from .helpers import NOW

RETRY3 = {"max_attempts": 3, "backoff_s": 30, "jitter": False}


def _flaky_workflow(calls: Counter[str], fails: int, **options: Any) -> Any:
    @step(id="prepare")
    def prepare(data: Any) -> Any:
        calls["prepare"] += 1
        return {"n": 1}

    @step(id="send", retry=options.pop("step_retry", None))
    def send(data: Any) -> Any:
        calls["send"] += 1
        if calls["send"] <= fails:
            raise RuntimeError(f"receiver down ({calls['send']})")
        return {"sent": data["n"]}

    return workflow(id="flaky", **options).then(prepare).then(send).commit()


def _claimable(t: Tocsin, at: Any) -> int:
    """Runs a worker pass at ``at`` executes (0 while the retry waits)."""
    return t.work(now=at)


def test_a_failing_step_is_retried_with_backoff_and_resumes(tocsin: Tocsin) -> None:
    calls: Counter[str] = Counter()
    tocsin.register_workflows([_flaky_workflow(calls, 2, step_retry=RETRY3)])
    run = tocsin.start_workflow("flaky", {}, now=NOW, wait=False)
    assert _claimable(tocsin, NOW) == 1
    first = tocsin.get_workflow_run(run["id"])
    assert first["status"] == "pending" and first["attempt"] == 2
    assert first["next_attempt_at"] == NOW + timedelta(seconds=30)
    assert first["error"] == "step 'send': receiver down (1)"
    assert first["retry"] == {
        "max_attempts": 3,
        "backoff_s": 30.0,
        "factor": 2.0,
        "max_backoff_s": 3600.0,
        "jitter": False,
    }
    second_at = NOW + timedelta(seconds=30)
    assert _claimable(tocsin, second_at - timedelta(milliseconds=1)) == 0
    assert _claimable(tocsin, second_at) == 1
    second = tocsin.get_workflow_run(run["id"])
    assert second["status"] == "pending" and second["attempt"] == 3
    assert second["next_attempt_at"] == second_at + timedelta(seconds=60)
    third_at = second_at + timedelta(seconds=60)
    assert _claimable(tocsin, third_at - timedelta(milliseconds=1)) == 0
    assert _claimable(tocsin, third_at) == 1
    done = tocsin.get_workflow_run(run["id"])
    assert done["status"] == "success" and done["attempt"] == 3
    assert done["output"] == {"sent": 1} and done["error"] is None
    assert calls == Counter({"prepare": 1, "send": 3})  # the step before ran once


def test_attempts_spent_fail_the_run(tocsin: Tocsin) -> None:
    calls: Counter[str] = Counter()
    wf = _flaky_workflow(calls, 5, retry={"max_attempts": 2, "backoff_s": 10, "jitter": False})
    tocsin.register_workflows([wf])
    run = tocsin.start_workflow("flaky", {}, now=NOW)  # wait=True: the first attempt at once
    assert run["status"] == "pending" and run["next_attempt_at"] == NOW + timedelta(seconds=10)
    tocsin.work(now=NOW + timedelta(seconds=10))
    done = tocsin.get_workflow_run(run["id"])
    assert done["status"] == "failed" and done["attempt"] == 2 and done["next_attempt_at"] is None
    assert done["error"] == "step 'send': receiver down (2)"
    assert calls["send"] == 2


def test_non_retryable_fails_at_once(tocsin: Tocsin) -> None:
    @step(id="check", retry=RETRY3)
    def check(data: Any) -> Any:
        raise NonRetryable("the account is closed")

    tocsin.register_workflows([workflow(id="closed").then(check).commit()])
    run = tocsin.start_workflow("closed", {}, now=NOW)
    assert run["status"] == "failed" and run["attempt"] == 1
    assert run["next_attempt_at"] is None
    assert run["error"] == "step 'check': the account is closed"


def test_step_policy_overrides_workflow_which_overrides_schedule(tocsin: Tocsin) -> None:
    calls: Counter[str] = Counter()
    sched = Schedule(cron="0 9 * * *", timezone="UTC", retry={"max_attempts": 5, "backoff_s": 99})
    wf = _flaky_workflow(
        calls, 9, schedule=sched, retry={"max_attempts": 2, "backoff_s": 7, "jitter": False}
    )
    assert wf.retry_for("send", "wf_flaky") == {"max_attempts": 2, "backoff_s": 7, "jitter": False}
    assert wf.retry_for("prepare", "wf_flaky")["backoff_s"] == 7  # type: ignore[index]
    bare = _flaky_workflow(calls, 9, schedule=sched)
    assert bare.retry_for("send", "wf_flaky") == {"max_attempts": 5, "backoff_s": 99}
    assert bare.retry_for("send", None) is None
    stepped = _flaky_workflow(calls, 9, step_retry=RETRY3, retry={"max_attempts": 2})
    assert stepped.retry_for("send", None) == RETRY3
    tocsin.register_workflows([wf])
    shown = tocsin.get_workflow("flaky")
    assert shown["retry"] == {"max_attempts": 2, "backoff_s": 7, "jitter": False}
    assert shown["schedule_policies"]["wf_flaky"]["retry"] == {"max_attempts": 5, "backoff_s": 99}
    assert [s["retry"] for s in shown["steps"]] == [None, None]


def test_a_schedules_on_failure_runs_once_with_the_error(tocsin: Tocsin) -> None:
    seen: list[dict[str, Any]] = []
    tocsin.register_command("page", lambda inputs: seen.append(inputs) or "paged")
    alert = {
        "type": "invoke_command",
        "command": "page",
        "inputs": {"text": "$workflow.id/$schedule.id run $run.id failed: $run.error"},
    }
    calls: Counter[str] = Counter()
    sched = Schedule(cron="0 9 * * *", timezone="UTC", on_failure=[alert])
    wf = _flaky_workflow(
        calls, 9, schedule=sched, retry={"max_attempts": 2, "backoff_s": 30, "jitter": False}
    )
    tocsin.register_workflows([wf])
    fire_at = NOW.replace(hour=9, minute=0, second=0, microsecond=0) + timedelta(days=1)
    tocsin.sync_schedules(now=NOW)
    tocsin.tick(now=fire_at)
    tocsin.work(now=fire_at)
    (run,) = tocsin.workflow_runs(workflow_id="flaky")["items"]
    assert run["status"] == "pending" and seen == []  # a retried attempt alerts nobody
    assert run["alert"] is None
    tocsin.work(now=fire_at + timedelta(seconds=30))
    tocsin.work(now=fire_at + timedelta(hours=1))
    done = tocsin.get_workflow_run(run["id"])
    assert done["status"] == "failed"
    assert seen == [
        {"text": f"flaky/wf_flaky run {run['id']} failed: step 'send': receiver down (2)"}
    ]
    assert done["alert"]["status"] == "sent"
    assert [r["ok"] for r in done["alert"]["results"]] == [True]
    tocsin.retry_workflow_run(run["id"], now=fire_at + timedelta(hours=2))  # fails again
    assert len(seen) == 1  # sent once per run


def test_a_failing_alert_is_recorded_never_looped(tocsin: Tocsin) -> None:
    def broken(run: dict[str, Any]) -> None:
        raise RuntimeError(f"pager down for {run['id']}")

    @step(id="boom")
    def boom(data: Any) -> Any:
        raise RuntimeError("boom")

    tocsin.register_workflows([workflow(id="loud", on_failure=broken).then(boom).commit()])
    run = tocsin.start_workflow("loud", {}, now=NOW)
    assert run["status"] == "failed"
    assert run["alert"]["status"] == "failed"
    (result,) = run["alert"]["results"]
    assert result["detail"] == f"on_failure callable raised: pager down for {run['id']}"


def test_the_callable_receives_the_failed_run(tocsin: Tocsin) -> None:
    got: list[dict[str, Any]] = []

    @step(id="boom")
    def boom(data: Any) -> Any:
        raise RuntimeError("boom")

    tocsin.register_workflows([workflow(id="cb", on_failure=got.append).then(boom).commit()])
    run = tocsin.start_workflow("cb", {}, now=NOW)
    assert [(r["id"], r["status"], r["error"]) for r in got] == [
        (run["id"], "failed", "step 'boom': boom")
    ]


def test_a_step_past_its_timeout_fails_with_the_timeout_text(tocsin: Tocsin) -> None:
    """The one real-time test: a sync step sleeping 3 s under ``timeout_s=1``."""

    @step(id="sleepy", timeout_s=1)
    def sleepy(data: Any) -> Any:
        time.sleep(3)
        return {"late": True}

    tocsin.register_workflows([workflow(id="slow").then(sleepy).commit()])
    run = tocsin.start_workflow("slow", {}, now=NOW)
    assert run["status"] == "failed" and run["output"] is None
    assert run["error"] == "step 'sleepy' timed out after 1 s (its timeout_s)"
    assert run["steps"][0]["output"] is None


def test_an_async_step_is_cancelled_at_the_run_timeout(tocsin: Tocsin) -> None:
    cancelled: list[bool] = []

    @step(id="waits")
    async def waits(data: Any) -> Any:
        try:
            await asyncio.sleep(5)
        except asyncio.CancelledError:
            cancelled.append(True)
            raise
        return {}

    tocsin.register_workflows([workflow(id="bounded", timeout_s=0.5).then(waits).commit()])
    run = tocsin.start_workflow("bounded", {}, now=NOW)
    assert run["status"] == "failed" and cancelled == [True]
    assert run["error"] == (
        "step 'waits' timed out: workflow 'bounded' runs for at most 0.5 s (its timeout_s)"
    )


def test_policies_are_checked_when_defined() -> None:
    with pytest.raises(ConfigError, match="step 's'"):
        step(id="s", retry={"max_attempts": 0})
    with pytest.raises(ConfigError, match="timeout_s"):
        step(id="s", timeout_s=0)
    with pytest.raises(ConfigError, match="on_failure"):
        workflow(id="w", on_failure="page me")
    with pytest.raises(ConfigError, match="workflow 'w'"):
        workflow(id="w", on_failure=[{"type": "nope"}])
    with pytest.raises(ConfigError, match="schedule"):
        Schedule(cron="0 9 * * *", timezone="UTC", retry={"backoff_s": 3})


def test_an_async_step_runs_and_times_out_when_the_caller_runs_an_event_loop(
    tocsin: Tocsin,
) -> None:
    """Called from async code (or under a library driving a loop on this thread, as Playwright's
    sync API does), an ``async`` step runs on a loop of its own and is still cancelled."""
    cancelled: list[bool] = []

    @step(id="waits")
    async def waits(data: Any) -> Any:
        try:
            await asyncio.sleep(5)
        except asyncio.CancelledError:
            cancelled.append(True)
            raise
        return {}

    @step(id="quick")
    async def quick(data: Any) -> Any:
        await asyncio.sleep(0)
        return {"ok": True}

    tocsin.register_workflows(
        [
            workflow(id="bounded", timeout_s=0.5).then(waits).commit(),
            workflow(id="quick").then(quick).commit(),
        ]
    )

    async def from_async_code() -> tuple[dict[str, Any], dict[str, Any]]:
        return (
            tocsin.start_workflow("bounded", {}, now=NOW),
            tocsin.start_workflow("quick", {}, now=NOW),
        )

    # on a thread of its own: the test's thread may hold a loop already (Playwright's sync API)
    with ThreadPoolExecutor(max_workers=1) as pool:
        bounded, ran = pool.submit(asyncio.run, from_async_code()).result()
    assert bounded["status"] == "failed" and cancelled == [True]
    assert ran["status"] == "success" and ran["output"] == {"ok": True}
