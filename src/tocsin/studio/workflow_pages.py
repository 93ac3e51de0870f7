"""Workflows in Studio: the list with steps and recent runs, one workflow (its **Schedules**
header action: hidden for none, the detail page for one, the filtered list for several) and one
run's graph (steps in order, parallel branches side by side) with Cancel / Resume / Retry."""

from __future__ import annotations

import json
from typing import Annotated, Any

from fastapi import APIRouter, Path, Query, Request, Response

from tocsin import messages
from tocsin.errors import ValidationError
from tocsin.service import Tocsin

from .schedule_pages import NON_TERMINAL, PageQ, _require_read
from .web import FormDep, ViewerDep, check_post, facade, html_page, pager, redirect, render, utc_now

router = APIRouter(include_in_schema=False)
RUNS_PAGE = 20
RECENT = 5
ID = r"^[A-Za-z0-9_.-]{1,64}$"
WorkflowId = Annotated[str, Path(pattern=ID)]
RunId = Annotated[str, Path(pattern=r"^[A-Za-z0-9_-]{1,64}$")]
StatusQ = Annotated[
    str | None, Query(pattern="^(pending|running|success|failed|suspended|canceled)$")
]


def schedules_action(t: Tocsin, workflow_id: str) -> dict[str, Any] | None:
    """The header's Schedules action: None (hidden), or its link and label."""
    found = t.schedules.list(workflow_id=workflow_id, limit=2)
    if found["total"] == 0:
        return None
    if found["total"] == 1:
        sid = found["items"][0]["id"]
        return {"href": f"/workflows/schedules/{sid}", "count": 1}
    return {"href": f"/workflows/schedules?workflowId={workflow_id}", "count": found["total"]}


def stages(t: Tocsin, workflow_id: str) -> list[list[str]]:
    """The workflow's step ids by stage (a parallel stage has several)."""
    wf = t.workflows.get(workflow_id)
    if wf is None:
        return []
    return [[s.id for s in stage.steps] for stage in wf.stages]


@router.get("/workflows")
@html_page
def workflows_list(request: Request, viewer: ViewerDep) -> Response:
    """Every registered workflow with its steps, schedules action and most recent runs."""
    _require_read(viewer)
    t = facade(request)
    rows = [
        {
            **wf,
            "stages": stages(t, wf["id"]),
            "action": schedules_action(t, wf["id"]),
            "recent": t.workflow_runs(workflow_id=wf["id"], limit=RECENT)["items"],
        }
        for wf in t.list_workflows()
    ]
    return render(request, "workflows.html", viewer=viewer, workflows=rows)


@router.get("/workflows/{workflow_id}")
@html_page
def workflow_detail(
    request: Request,
    viewer: ViewerDep,
    workflow_id: WorkflowId,
    status: StatusQ = None,
    page: PageQ = 1,
) -> Response:
    """One workflow: steps, the Schedules action, runs (paginated, by status)."""
    _require_read(viewer)
    t = facade(request)
    wf = t.get_workflow(workflow_id)
    skip = (page - 1) * RUNS_PAGE
    runs = t.workflow_runs(workflow_id=workflow_id, status=status, skip=skip, limit=RUNS_PAGE)
    return render(
        request,
        "workflow.html",
        viewer=viewer,
        workflow=wf,
        stages=stages(t, workflow_id),
        action=schedules_action(t, workflow_id),
        runs=runs["items"],
        status=status,
        pages=pager(request, page, RUNS_PAGE, runs["total"], status=status),
    )


@router.get("/workflows/{workflow_id}/graph/{run_id}")
@html_page
def run_graph(
    request: Request, viewer: ViewerDep, workflow_id: WorkflowId, run_id: RunId
) -> Response:
    """One run: its steps stage by stage with status, output or error and timing."""
    _require_read(viewer)
    t = facade(request)
    run = t.get_workflow_run(run_id)
    if run["workflow_id"] != workflow_id:
        return redirect(f"/workflows/{run['workflow_id']}/graph/{run_id}")
    by_id = {s["id"]: s for s in run["steps"]}
    layout = stages(t, workflow_id) or [[s["id"]] for s in run["steps"]]
    idle = {"status": "not started", "output": None, "error": None, "started_at": None}
    graph = [[by_id.get(sid, {**idle, "id": sid}) for sid in st] for st in layout]
    return render(
        request,
        "graph.html",
        viewer=viewer,
        run=run,
        graph=graph,
        live=run["status"] in NON_TERMINAL,
    )


def _resume_data(text: str) -> Any:
    if not text.strip():
        return None
    try:
        return json.loads(text)
    except ValueError:
        raise ValidationError(messages.STUDIO_RESUME_DATA_INVALID) from None


@router.post("/workflows/{workflow_id}/graph/{run_id}/{verb}")
@html_page
def run_action(
    request: Request,
    viewer: ViewerDep,
    form: FormDep,
    workflow_id: WorkflowId,
    run_id: RunId,
    verb: Annotated[str, Path(pattern="^(cancel|resume|retry)$")],
) -> Response:
    """Cancel, resume (with optional JSON data) or retry; the worker executes what is enqueued."""
    check_post(viewer, form, allowed=viewer.writes_schedules)
    t, now = facade(request), utc_now(request)
    if verb == "cancel":
        t.cancel_workflow_run(run_id, now=now)
    elif verb == "resume":
        t.resume_workflow_run(run_id, _resume_data(form.get("data", "")), now=now, wait=False)
    else:
        t.retry_workflow_run(run_id, now=now, wait=False)
    return redirect(f"/workflows/{workflow_id}/graph/{run_id}")


__all__ = ["router"]
