"""Workflows and their runs over HTTP (SPEC §12, §15): ``/api/workflows…``.

``schedules:read`` lists and reads; ``schedules:write`` starts, cancels and resumes runs.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query
from pydantic import ConfigDict

from ..deps import (
    IdPath,
    Limit,
    NowDep,
    SchedulesRead,
    SchedulesWrite,
    Skip,
    TocsinDep,
    WorkflowIdPath,
)
from ..models import Body, error_responses

router = APIRouter(prefix="/api/workflows", tags=["workflows"])

Json = dict[str, Any]
READ = error_responses(401, 403, 404)
WRITE = error_responses(400, 401, 403, 404, 409)
STATUS_PATTERN = "^(pending|running|success|failed|suspended|canceled)$"


class StartBody(Body):
    """``input`` for the workflow; ``wait`` runs it before answering (default: enqueue)."""

    model_config = ConfigDict(extra="forbid")

    input: Any = None
    wait: bool = False


class ResumeBody(Body):
    """What the suspended step receives as ``ctx.resume_data``."""

    model_config = ConfigDict(extra="forbid")

    data: Any = None


@router.get("", responses=READ)
def list_workflows(_: SchedulesRead, tocsin: TocsinDep) -> list[Json]:
    """The workflows registered with this server."""
    return tocsin.list_workflows()


@router.get("/runs/{run_id}", responses=READ)
def get_run(run_id: IdPath, _: SchedulesRead, tocsin: TocsinDep) -> Json:
    """One workflow run with its step receipts."""
    return tocsin.get_workflow_run(run_id)


@router.post("/runs/{run_id}/cancel", responses=WRITE)
def cancel_run(run_id: IdPath, _: SchedulesWrite, tocsin: TocsinDep, now: NowDep) -> Json:
    """pending / running / suspended → canceled."""
    return tocsin.cancel_workflow_run(run_id, now=now)


@router.post("/runs/{run_id}/resume", responses=WRITE)
def resume_run(
    run_id: IdPath, body: ResumeBody, _: SchedulesWrite, tocsin: TocsinDep, now: NowDep
) -> Json:
    """Resume a suspended run with ``data`` (it is enqueued; a worker executes it)."""
    return tocsin.resume_workflow_run(run_id, body.data, now=now, wait=False)


@router.get("/{workflow_id}", responses=READ)
def get_workflow(workflow_id: WorkflowIdPath, _: SchedulesRead, tocsin: TocsinDep) -> Json:
    """One registered workflow: its steps, schemas and schedule ids."""
    return tocsin.get_workflow(workflow_id)


@router.post("/{workflow_id}/start", responses=WRITE)
def start(
    workflow_id: WorkflowIdPath,
    body: StartBody,
    _: SchedulesWrite,
    tocsin: TocsinDep,
    now: NowDep,
) -> Json:
    """Start a run (``trigger: manual``), the same path as a scheduled fire. An ``input`` the
    workflow's input model refuses is a 400 and starts nothing."""
    return tocsin.start_workflow(workflow_id, body.input, now=now, wait=body.wait, check_input=True)


@router.get("/{workflow_id}/runs", responses=READ)
def list_runs(
    workflow_id: WorkflowIdPath,
    _: SchedulesRead,
    tocsin: TocsinDep,
    status: Annotated[str | None, Query(pattern=STATUS_PATTERN)] = None,
    skip: Skip = 0,
    limit: Limit = 50,
) -> Json:
    """A workflow's runs, newest first."""
    tocsin.get_workflow(workflow_id)
    return tocsin.workflow_runs(workflow_id=workflow_id, status=status, skip=skip, limit=limit)
