"""Workflow-test helpers: models, steps and workflows, a fixed clock."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from pydantic import BaseModel

from tocsin import Schedule, StepContext, step, workflow
from tocsin.workflows import Workflow

# 2026-03-02 is a Monday; 14:00 UTC = 09:00 in New York (EST, UTC-5)
NOW = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)
NY = "America/New_York"


def minutes(n: float) -> timedelta:
    return timedelta(minutes=n)


class ReportIn(BaseModel):
    user_id: str


class ReportOut(BaseModel):
    ok: bool
    user_id: str = ""


@step(id="send-report", input=ReportIn, output=ReportOut)
def send_report(data: ReportIn, ctx: StepContext) -> ReportOut:
    return ReportOut(ok=True, user_id=data.user_id)


def daily(
    cron: str = "0 9 * * *", tz: str = NY, input_data: dict[str, Any] | None = None, **kw: Any
) -> Workflow:
    sched = Schedule(cron=cron, timezone=tz, input_data=input_data or {"user_id": "system"}, **kw)
    return (
        workflow(id="daily-report", input=ReportIn, output=ReportOut, schedule=sched)
        .then(send_report)
        .commit()
    )


def every_minute(wid: str = "tick-tock", overlap: str = "skip") -> Workflow:
    sched = Schedule(cron="* * * * *", timezone="UTC", input_data={"user_id": "m"}, overlap=overlap)  # type: ignore[arg-type]
    return (
        workflow(id=wid, input=ReportIn, output=ReportOut, schedule=sched)
        .then(send_report)
        .commit()
    )
