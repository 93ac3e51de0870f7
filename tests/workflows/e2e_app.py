"""The end-to-end app: two schedules firing every second (6-field extended cron), so a real
``tocsin serve`` shows fires within its first seconds. ``witness`` is never paused: its fires
prove the ticker kept ticking while ``watched`` was paused."""

from __future__ import annotations

from tocsin import Schedule, workflow

from .helpers import ReportIn, ReportOut, send_report

WORKFLOWS = [
    workflow(
        id="e2e",
        input=ReportIn,
        output=ReportOut,
        schedule=[
            Schedule(id=name, cron="* * * * * *", timezone="UTC", input_data={"user_id": name})
            for name in ("watched", "witness")
        ],
    )
    .then(send_report)
    .commit()
]
