"""The race test's app: one workflow with 500 schedules firing every minute (``overlap="allow"``:
no worker runs here, and every minute must fire)."""

from __future__ import annotations

from tocsin import Schedule, workflow

from .helpers import ReportIn, ReportOut, send_report

SCHEDULES = 500

WORKFLOWS = [
    workflow(
        id="race",
        input=ReportIn,
        output=ReportOut,
        schedule=[
            Schedule(
                id=f"s{i}",
                cron="* * * * *",
                timezone="UTC",
                input_data={"user_id": f"u{i}"},
                overlap="allow",
            )
            for i in range(SCHEDULES)
        ],
    )
    .then(send_report)
    .commit()
]
