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

``LANES``: the lane ``content-intake`` (yearly too, in Asia/Taipei) whose source answers what
``FEED`` holds; :func:`drive_lane` records one run of each decision over explicit day-long
windows with explicit instants. ``APP`` is what ``tocsin serve --app studio.studio_app:APP``
reads of a Tocsin: its workflows and its lanes (registries only; no database is opened here).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any, cast
from zoneinfo import ZoneInfo

from tocsin import (
    AllOf,
    AnyOf,
    Candidate,
    Cron,
    DefinitionChanged,
    Lane,
    Schedule,
    SourceUnavailable,
    StepContext,
    WorkflowSucceeded,
    step,
    workflow,
)
from tocsin.core.contract.lane import Window
from tocsin.service import Tocsin
from tocsin.service.lanes import Lanes

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


LANE_ID = "content-intake"
TPE = ZoneInfo("Asia/Taipei")
DAY = datetime(2026, 9, 7, 7, 30, tzinfo=TPE)  # each run's window is one day up to 07:30
FEED: dict[str, Any] = {"candidates": [], "down": None, "handler_fails": False}


def fetch(window: Window, ctx: object) -> list[Candidate]:
    if FEED["down"]:
        raise SourceUnavailable(FEED["down"])
    return list(FEED["candidates"])


def policy(c: Candidate) -> bool:
    """policy-v1: only candidates whose data says ``{"lang": "zh"}``."""
    return isinstance(c.data, dict) and c.data.get("lang") == "zh"


def handle(accepted: list[Candidate], contract: Any) -> None:
    if FEED["handler_fails"]:
        raise RuntimeError("downstream refused")


LANES = [
    Lane(
        id=LANE_ID,
        schedule=Schedule(cron=YEARLY, timezone="Asia/Taipei"),
        policy_version="policy-v1",
        source=fetch,
        select=policy,
        handler=handle,
    )
]


class App:
    """The registries ``--app`` reads of a Tocsin (``workflows``, ``lanes``)."""

    def __init__(self) -> None:
        self.workflows = {w.id: w for w in WORKFLOWS}
        registry = {lane.id: lane for lane in LANES}
        self.lanes = Lanes(cast(Any, None), registry, lambda now: now, 0.0)


APP = App()


def _run(t: Tocsin, day: int, **feed: Any) -> dict[str, Any]:
    """One scheduled run over day ``day``'s window, the source answering ``feed``."""
    FEED.update({"candidates": [], "down": None, "handler_fails": False, **feed})
    start, end = DAY + timedelta(days=day), DAY + timedelta(days=day + 1)
    observed = end + timedelta(seconds=5)
    return t.lanes.trigger(
        LANE_ID, window=(start, end), kind="scheduled", scheduled_for=end, now=observed
    )


def drive_lane(t: Tocsin) -> list[dict[str, Any]]:
    """Seven attempts, oldest first: stopped, noop (empty), ready (one accepted, one refused,
    one outside), ignored (day 2 again), rejected (a window overlapping day 2), noop (none
    eligible), and ready with a failing handler."""
    inside = DAY + timedelta(days=2, hours=3)
    got = [
        _run(t, 0, down="timeout"),
        _run(t, 1),
        _run(
            t,
            2,
            candidates=[
                Candidate("post-zh", inside, {"lang": "zh"}),
                Candidate("post-en", inside, {"lang": "en"}),
                Candidate("post-old", DAY, {"lang": "zh"}),
            ],
        ),
        _run(t, 2),
    ]
    moved = (DAY + timedelta(days=3, seconds=-1), DAY + timedelta(days=4))
    at = DAY + timedelta(days=3, seconds=10)  # after day 2's run, before day 3's
    got.append(t.lanes.trigger(LANE_ID, window=moved, kind="manual", now=at))
    fr, tw = DAY + timedelta(days=3, hours=1), DAY + timedelta(days=4, hours=1)
    got.append(_run(t, 3, candidates=[Candidate("post-fr", fr, {"lang": "fr"})]))
    got.append(
        _run(t, 4, candidates=[Candidate("post-tw", tw, {"lang": "zh"})], handler_fails=True)
    )
    return got
