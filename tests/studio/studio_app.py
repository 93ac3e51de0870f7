"""The Studio browser tests' app (``tocsin serve --app studio.studio_app:WORKFLOWS``).

Every schedule fires once a year (``0 0 1 1 *``, UTC), so the server's own ticker, reading the
real clock, never fires one during a test: the tests fire them with an explicit ``now``.

- ``report``: two schedules (``morning``, ``evening``): the Schedules action leads to the
  filtered list; ``evening`` is the witness that a tick happened while ``morning`` was paused.
- ``nightly``: one schedule (``overlap="allow"``) whose step suspends until resumed: its fires
  stay non-terminal until the test resumes them (the polling test).
- ``adhoc``: no schedule: its Schedules action is hidden.
- ``digest``: a compound trigger (SPEC §13): ALL of noon on 29 February in Berlin and ANY of
  "report succeeded" / "nightly's definition changed". Its instant never comes during a test
  (the next is 2028-02-29, after ``SECOND``), so it never fires; a report run latches it.
"""

from __future__ import annotations

from typing import Any

from tocsin import (
    AllOf,
    AnyOf,
    Cron,
    DefinitionChanged,
    Schedule,
    StepContext,
    WorkflowSucceeded,
    step,
    workflow,
)

YEARLY = "0 0 1 1 *"
LEAP_NOON = "0 12 29 2 *"
DIGEST = AllOf(
    Cron(LEAP_NOON, timezone="Europe/Berlin"),
    AnyOf(WorkflowSucceeded("report"), DefinitionChanged("nightly")),
)


@step(id="send-report")
def send_report(data: Any, ctx: StepContext) -> dict[str, Any]:
    return {"ok": True, "input": data}


@step(id="wait-for-approval")
def wait_for_approval(data: Any, ctx: StepContext) -> dict[str, Any]:
    if ctx.resume_data is None:
        ctx.suspend({"question": "ship it?"})
    return {"approved": ctx.resume_data}


@step(id="count")
def count(data: Any, ctx: StepContext) -> int:
    return 1


@step(id="measure")
def measure(data: Any, ctx: StepContext) -> int:
    return 2


WORKFLOWS = [
    workflow(
        id="report",
        schedule=[
            Schedule(id=name, cron=YEARLY, timezone="UTC", input_data={"who": name})
            for name in ("morning", "evening")
        ],
    )
    .then(send_report)
    .commit(),
    workflow(
        id="nightly",
        schedule=Schedule(cron=YEARLY, timezone="UTC", input_data={"n": 1}, overlap="allow"),
    )
    .then(wait_for_approval)
    .parallel([count, measure])
    .commit(),
    workflow(id="adhoc").then(send_report).commit(),
    workflow(id="digest", schedule=Schedule(trigger=DIGEST, timezone="UTC"))
    .then(send_report)
    .commit(),
]
