"""The app of the upgrade fixture: workflows, a lane and the scenario's fixed ids and instants.

Imported by ``scripts/make_upgrade_fixture.py`` running on the code of commit 058d927 (which
populates the fixture databases) and by ``test_upgrade_from_058d927.py`` running on today's
code (which migrates them): so it uses only what both export from ``tocsin`` itself, and no
relative import (the script loads this file by its path).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from pydantic import BaseModel

from tocsin import (
    AllOf,
    Candidate,
    Cron,
    Lane,
    Schedule,
    SourceUnavailable,
    StepContext,
    WorkflowSucceeded,
    step,
    workflow,
)

T0 = datetime(2026, 9, 1, 0, 0, tzinfo=UTC)  # a Tuesday
CHAT = "4f1c2b9e-7d3a-4c1e-9b8a-2f6d5e4c3b2a"
CHAT_SCOPE = ("chatroom", CHAT)
LANE_ID = "upg-lane"
IMPERATIVE_SCHEDULE = "sch_upgrade_tree"
EITHER_SCHEDULE = "sch_upgrade_either"


def at(hours: float, minutes: float = 0) -> datetime:
    """``T0`` plus this much."""
    return T0 + timedelta(hours=hours, minutes=minutes)


FINAL = at(9, 5)  # the population's last tick: what the fixture's state is read at
STUCK_AFTER_S = 3600  # a run left running at 08:45 is not stale at FINAL, is at 10:05
END = at(12, 30)  # after ``carry_on``


class Job(BaseModel):
    mode: str = "ok"


class Done(BaseModel):
    ok: bool
    mode: str = ""


# the step of ``upg-twostep`` fails while this says so (the fixture script flips it to make a run
# fail, then retries it; a test never sets it)
FLAKY: dict[str, bool] = {"fail": False}
# while this says so, ``upg-echo`` given ``mode: crash`` and the ``upg-cmd`` command stop the
# process where they are (the fixture script's stand-in for a worker killed mid-run: its run
# stays ``running`` until a tick finds it stale)
CRASH: dict[str, bool] = {"on": False}
COMMAND = "upg-cmd"


def command(inputs: dict[str, Any]) -> dict[str, Any]:
    if CRASH["on"]:
        raise KeyboardInterrupt("the worker died here")
    return {"ok": True, "inputs": inputs}


@step(id="upg-echo", input=Job, output=Done)
def echo(data: Job, ctx: StepContext) -> Done:
    if data.mode == "fail":
        raise RuntimeError("upg-echo was told to fail")
    if data.mode == "crash" and CRASH["on"]:
        raise KeyboardInterrupt("the worker died here")
    if data.mode == "suspend" and ctx.resume_data is None:
        ctx.suspend({"waiting_for": "approval"})
    return Done(ok=True, mode=data.mode)


@step(id="upg-first", input=Job, output=Job)
def first(data: Job, ctx: StepContext) -> Job:
    return data


@step(id="upg-second", input=Job, output=Done)
def second(data: Job, ctx: StepContext) -> Done:
    if FLAKY["fail"]:
        raise RuntimeError("upg-second is flaky")
    return Done(ok=True, mode=data.mode)


def _flow(wid: str, schedule: Schedule | Sequence[Schedule] | None = None) -> Any:
    return workflow(id=wid, input=Job, output=Done, schedule=schedule).then(echo).commit()


HOURLY = _flow(
    "upg-hourly",
    Schedule(
        cron="0 * * * *",
        timezone="UTC",
        input_data={"mode": "ok"},
        catch_up="all",
        max_catch_up=2,
    ),
)
PAUSED = _flow(
    "upg-paused", Schedule(cron="*/15 * * * *", timezone="UTC", input_data={"mode": "ok"})
)
# the tree: every two hours, once ``upg-manual`` succeeded since its last fire
TREE = _flow(
    "upg-tree",
    Schedule(
        trigger=AllOf(Cron("0 */2 * * *", timezone="UTC"), WorkflowSucceeded("upg-manual")),
        input_data={"mode": "ok"},
    ),
)
MANUAL = _flow("upg-manual")
TWOSTEP = workflow(id="upg-twostep", input=Job, output=Done).then(first).then(second).commit()
WORKFLOWS = [HOURLY, PAUSED, TREE, MANUAL, TWOSTEP]


def _fetch(window: Any, ctx: object) -> list[Candidate]:
    """Four hours a window: a window starting at 04:00 UTC finds nothing, at 08:00 it is down,
    at other hours it finds one candidate of each language; a manual window starting at 23:00
    finds one the handler refuses."""
    start = window.start.astimezone(UTC)
    if start.hour == 8:
        raise SourceUnavailable("timeout")
    if start.hour == 4:
        return []
    inside = window.start + timedelta(minutes=5)
    if start.hour == 23:
        return [Candidate(ref="boom-1", occurred_at=inside, data={"lang": "zh"})]
    return [
        Candidate(ref=f"zh-{start:%d%H}", occurred_at=inside, data={"lang": "zh"}),
        Candidate(ref=f"en-{start:%d%H}", occurred_at=inside, data={"lang": "en"}),
    ]


def _select(candidate: Candidate) -> bool:
    return isinstance(candidate.data, dict) and candidate.data.get("lang") == "zh"


def _handle(accepted: list[Candidate], contract: dict[str, Any]) -> None:
    if any(c.ref.startswith("boom") for c in accepted):
        raise RuntimeError("downstream refused boom")


LANE = Lane(
    id=LANE_ID,
    schedule=Schedule(cron="0 */4 * * *", timezone="UTC"),
    policy_version="upg-v1",
    source=_fetch,
    select=_select,
    handler=_handle,
)
LANES = [LANE]


def carry_on(t: Any, tables: dict[str, str]) -> dict[str, Any]:
    """What happens next, on the populated database (058d927's code on a copy when the fixture
    is written; today's code after the migration in the test): work the pending runs, tick at
    10:05 and 12:05, resume what was paused, backfill the same range again. Returns each
    call's answer; the caller then observes the state at ``END``."""
    t.register_command(COMMAND, command)
    answers: dict[str, Any] = {}
    table_id = tables["Cases"]
    recorded = t.lanes.contracts(LANE_ID, limit=100)["items"]
    answers["verified"] = [t.lanes.verify(i) for i in recorded if i["contract"]]
    answers["work_0906"] = t.work(now=at(9, 6))  # everything pending but the escalation retry
    answers["work_0942"] = t.work(now=at(9, 42))  # its second attempt: failed
    suspended = t.workflow_runs(workflow_id="upg-manual", status="suspended")["items"]
    answers["resumed"] = [
        t.resume_workflow_run(r["id"], {"approved": True}, now=at(9, 50))["status"]
        for r in suspended
    ]
    # upg-tree fires 10:00 on its latch; the runs a dead worker left running are stale: pending
    answers["tick_1005"] = t.tick(now=at(10, 5))
    answers["work_1006"] = t.work(now=at(10, 6))
    answers["tick_1205"] = t.tick(now=at(12, 5))  # the lane's 12:00; the imperative tree fires
    answers["work_1206"] = t.work(now=at(12, 6))
    answers["backfill_again"] = t.schedules.backfill("wf_upg-hourly", at(-3), at(-1), now=at(12, 7))
    answers["resume_schedule"] = t.schedules.resume("wf_upg-paused", now=at(12, 10))
    answers["resume_trigger"] = t.resume_trigger(table_id, "trg_paused", now=at(12, 10))
    answers["restored"] = t.restore_table(tables["Old"], now=at(12, 12))  # owed: table_trashed
    pending = t.list_staged_changes(tables["Approvals"], status="staged")["items"]
    answers["approved"] = [
        t.approve_change(tables["Approvals"], c["id"], now=at(12, 15))["status"] for c in pending
    ]
    answers["tick_1220"] = t.tick(now=at(12, 20))
    answers["work_1221"] = t.work(now=at(12, 21))
    # the lane run of 04:00 (recorded before) again: a duplicate
    answers["lane_again"] = t.lanes.trigger(
        LANE_ID, kind="scheduled", scheduled_for=at(4), now=at(12, 25)
    )
    return answers
