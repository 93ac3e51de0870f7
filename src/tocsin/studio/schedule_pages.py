"""Schedules in Studio (SPEC §16, seed "View schedules in Studio"): the list across workflows
(``?workflowId=`` narrows it), a schedule's detail with Pause / Resume and its paginated fire
history, and the history panel alone (what the detail page polls every 5 s while a fire is
non-terminal)."""

from __future__ import annotations

from typing import Annotated, Any
from urllib.parse import quote

from fastapi import APIRouter, Path, Query, Request, Response

from tocsin import messages
from tocsin.errors import PermissionDenied, TocsinError

from .tree_words import tree_blocks, tree_summary
from .web import (
    FormDep,
    ViewerDep,
    check_post,
    facade,
    html_page,
    pager,
    redirect,
    render,
    utc_now,
)

router = APIRouter(include_in_schema=False)
SCHEDULES_PAGE = 50
NEXT_FIRES = 5
NON_TERMINAL = frozenset({"pending", "running", "suspended"})
PANEL = "/fires"  # a page's fire history panel alone, polled by the page
ID = r"^[A-Za-z0-9_.-]{1,64}$"
ScheduleId = Annotated[str, Path(pattern=ID)]
PageQ = Annotated[int, Query(ge=1, le=1_000_000)]
WorkflowQ = Annotated[str | None, Query(alias="workflowId", pattern=ID)]


def _require_read(viewer: ViewerDep) -> None:
    if not viewer.reads_schedules:
        raise PermissionDenied(messages.STUDIO_NO_SCHEDULES)


@router.get("/workflows/schedules")
@html_page
def schedules_list(
    request: Request, viewer: ViewerDep, workflow_id: WorkflowQ = None, page: PageQ = 1
) -> Response:
    """Every schedule: id, workflow, cron in words, zone, next fire, last run, paused."""
    _require_read(viewer)
    skip = (page - 1) * SCHEDULES_PAGE
    found = facade(request).schedules.list(workflow_id=workflow_id, skip=skip, limit=SCHEDULES_PAGE)
    items = [{**s, "summary": tree_summary(s["description"])} for s in found["items"]]
    return render(
        request,
        "schedules.html",
        viewer=viewer,
        schedules=items,
        workflow_id=workflow_id,
        pages=pager(request, page, SCHEDULES_PAGE, found["total"], workflowId=workflow_id),
    )


def _fires(request: Request, schedule: dict[str, Any], page: int) -> dict[str, Any]:
    """A page of the history: the fires, paged as before, interleaved by time with
    the skip ranges of the page's share of time (``schedules.history``); each fire with its
    run (start, duration) when the run row exists, and its graph."""
    t, schedule_id = facade(request), str(schedule["id"])
    size = request.app.state.settings.studio_fires_per_page
    found = t.schedules.history(schedule_id, skip=(page - 1) * size, limit=size)
    fired = [i for i in found["items"] if i["kind"] == "fire"]
    runs = t.get_workflow_runs(f["run_id"] for f in fired if f.get("run_id"))
    items = [
        {**i, "run": runs.get(str(i.get("run_id"))), "run_href": _graph(i)}
        if i["kind"] == "fire"
        else i
        for i in found["items"]
    ]
    at = f"/workflows/schedules/{schedule_id}"
    return fires_panel_values(
        request, found, items, page, size, at=at, skips_api=f"/api/schedules/{schedule_id}/skips"
    ) | {"paused": schedule["paused"], "next_due": schedule.get("next_fire_at"), "what": "schedule"}


def _graph(fire: dict[str, Any]) -> str | None:
    if not fire.get("run_id"):
        return None
    workflow, run = (quote(str(fire[k]), safe="") for k in ("workflow_id", "run_id"))
    return f"/workflows/{workflow}/graph/{run}"


def fires_panel_values(
    request: Request,
    found: dict[str, Any],
    items: list[dict[str, Any]],
    page: int,
    size: int,
    *,
    at: str,
    skips_api: str,
) -> dict[str, Any]:
    """What ``fires_panel.html`` shows of a history page (``found``, its ``items`` dressed),
    for any kind of schedule whose page is at ``at`` (the panel alone at ``at + "/fires"``)."""
    fired = [i for i in items if i["kind"] == "fire"]
    return {
        "history": items,
        "has_fires": bool(fired),
        "live": any(f["run_status"] in NON_TERMINAL for f in fired),
        "fire_pages": pager(request, page, size, found["total"], at=at),
        "skips_left_off": found["skips_left_off"],
        "fires_at": f"{at}/fires",
        "skips_api": skips_api,
    }


def _next_fires(request: Request, schedule_id: str) -> list[dict[str, Any]]:
    """The next instants; none for a schedule whose trigger has no cron of its
    own (compound: its tree says when it could fire)."""
    t = facade(request)
    try:
        found = t.schedules.next_fires(schedule_id, n=NEXT_FIRES, now=utc_now(request))
    except TocsinError:
        return []
    return list(found["items"])


@router.get("/workflows/schedules/{schedule_id}")
@router.get("/workflows/schedules/{schedule_id}" + PANEL)
@html_page
def schedule_detail(
    request: Request,
    viewer: ViewerDep,
    schedule_id: ScheduleId,
    page: PageQ = 1,
) -> Response:
    """Metadata, Pause / Resume, a compound trigger's tree with its latches (SPEC §13), and the
    fire history; at ``…/fires`` the history panel alone, fires and skips (polled by the page)."""
    _require_read(viewer)
    if request.scope["route"].path.endswith(PANEL):  # the route matched, not the URL
        schedule = facade(request).schedules.get(schedule_id)
        panel = _fires(request, schedule, page)
        return render(
            request, "fires_panel.html", viewer=viewer, schedule=schedule, page=page, **panel
        )
    schedule = facade(request).schedules.get(schedule_id, now=utc_now(request))
    trigger = schedule.get("trigger")
    extra: dict[str, Any] = {
        "tree": tree_blocks(trigger["tree"]) if trigger else None,
        "summary": tree_summary(schedule["description"]),
        "next_fires": _next_fires(request, schedule_id) if schedule.get("cron") else [],
    }
    panel = _fires(request, schedule, page)
    return render(
        request, "schedule.html", viewer=viewer, schedule=schedule, page=page, **extra, **panel
    )


@router.post("/workflows/schedules/{schedule_id}/{verb}")
@html_page
def pause_or_resume(
    request: Request,
    viewer: ViewerDep,
    form: FormDep,
    schedule_id: ScheduleId,
    verb: Annotated[str, Path(pattern="^(pause|resume)$")],
) -> Response:
    """Pause or resume (CSRF token and ``schedules:write`` required), then back to the page."""
    check_post(viewer, form, allowed=viewer.writes_schedules)
    service = facade(request).schedules
    action = service.pause if verb == "pause" else service.resume
    action(schedule_id, now=utc_now(request))
    return redirect(f"/workflows/schedules/{schedule_id}")


__all__ = ["router"]
