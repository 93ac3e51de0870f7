"""The compound race test's app: one workflow without declared schedules (the test creates its
compound schedules imperatively, naming the tables it made)."""

from __future__ import annotations

from tocsin import workflow

from .helpers import ReportIn, ReportOut, send_report

WORKFLOW = "compound-race"

WORKFLOWS = [
    workflow(id=WORKFLOW, input=ReportIn, output=ReportOut).then(send_report).commit(),
]
