"""Tables in Studio: the tables of the viewer's scope, and one table's triggers (schedule in
words, next fire, Pause/Resume per schedule trigger), its schedule preview rendered for people
(SPEC §7) and its runs with the status and ``stuck`` filters (SPEC §8) and a Retry button on
failed runs (SPEC §9.4); one trigger's page with its fire history (its scheduled runs and skips,
as a workflow schedule's).

Roles are the API's (SPEC §15): a member sees the table; triggers, preview and runs need a
moderator, who also gets the buttons.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, Query, Request, Response

from tocsin import messages
from tocsin.errors import NotFound, PermissionDenied, TocsinError

from .schedule_pages import PANEL, PageQ, fires_panel_values
from .web import (
    FormDep,
    Viewer,
    ViewerDep,
    check_post,
    facade,
    html_page,
    pager,
    redirect,
    render,
    utc_now,
)
from .words import preview_lines, trigger_words

router = APIRouter(include_in_schema=False)
TABLES_PAGE = 50
RUNS_PAGE = 25
RECENT_SKIPS = 5
NEXT_FIRES = 5
RUN_FILTERS = ("pending", "running", "done", "failed", "stuck")
TableId = Annotated[str, Path(pattern=r"^[A-Za-z0-9_-]{1,64}$")]
RunId = TableId
TriggerId = Annotated[str, Path(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$")]
StatusQ = Annotated[str | None, Query(pattern="^(pending|running|done|failed|stuck)$")]


def _scope(viewer: Viewer) -> tuple[str, str]:
    if not viewer.has_scope:
        raise PermissionDenied(messages.STUDIO_NO_SCOPE)
    return viewer.principal.scope, viewer.principal.scope_id


def _owned(request: Request, viewer: Viewer, table_id: str) -> dict[str, Any]:
    """A live table of the viewer's scope; 404 otherwise (as the API, never another tenant's)."""
    scope = _scope(viewer)
    table = facade(request).get_table(table_id)
    if (table["scope"], str(table["scope_id"])) != scope or table.get("trashed"):
        raise NotFound(messages.TABLE_NOT_FOUND)
    return table


@router.get("/tables")
@html_page
def tables_list(request: Request, viewer: ViewerDep, page: PageQ = 1) -> Response:
    scope, scope_id = _scope(viewer)
    skip = (page - 1) * TABLES_PAGE
    found = facade(request).list_tables(scope, scope_id, skip=skip, limit=TABLES_PAGE)
    return render(
        request,
        "tables.html",
        viewer=viewer,
        tables=found["items"],
        pages=pager(request, page, TABLES_PAGE, found["total"]),
    )


def _triggers(request: Request, table_id: str) -> list[dict[str, Any]]:
    """Triggers with their words, next fire and the preview's reasons, in config order."""
    t, now = facade(request), utc_now(request)
    arms = {a["trigger_id"]: a for a in t.preview(table_id, now=now, next_due=True)["triggers"]}
    out = []
    for trigger in t.get_triggers(table_id):
        arm = arms.get(trigger.get("id")) or {}
        out.append(
            {
                **trigger,
                "words": trigger_words(trigger),
                "next_fire": arm.get("next_due_at"),
                "due_now": bool(arm.get("due_now")),
                "paused": bool(arm.get("paused")),
                "reasons": preview_lines(arm) if arm else [],
                **_why(request, table_id, trigger),
            }
        )
    return out


def _why(request: Request, table_id: str, trigger: dict[str, Any]) -> dict[str, Any]:
    """A trigger's recent skips (the newest :data:`RECENT_SKIPS` ranges and how many there
    are) and, for a clock trigger, its next fires."""
    t, trigger_id = facade(request), trigger.get("id")
    if not isinstance(trigger_id, str):
        return {"skips": [], "skips_total": 0, "next_fires": None}
    try:
        found = t.skips(table_id, trigger_id, limit=RECENT_SKIPS)
    except TocsinError:
        found = {"items": [], "total": 0}
    upcoming: list[dict[str, Any]] | None = None
    if trigger.get("on") == "schedule":
        try:
            nxt = t.next_fires(table_id, trigger_id, n=NEXT_FIRES, now=utc_now(request))
            upcoming = list(nxt["items"])
        except TocsinError:
            upcoming = None
    return {"skips": found["items"], "skips_total": found["total"], "next_fires": upcoming}


@router.get("/tables/{table_id}")
@html_page
def table_detail(
    request: Request,
    viewer: ViewerDep,
    table_id: TableId,
    status: StatusQ = None,
    page: PageQ = 1,
) -> Response:
    table = _owned(request, viewer, table_id)
    if not viewer.moderator:
        return render(
            request, "table.html", viewer=viewer, table=table, denied=messages.STUDIO_MODERATOR_ONLY
        )
    t, now = facade(request), utc_now(request)
    skip = (page - 1) * RUNS_PAGE
    runs = t.list_runs(table_id, status=status, skip=skip, limit=RUNS_PAGE, now=now)
    return render(
        request,
        "table.html",
        viewer=viewer,
        table=table,
        triggers=_triggers(request, table_id),
        runs=runs["items"],
        live=any(r["status"] in ("pending", "running") for r in runs["items"]),
        status=status,
        filters=RUN_FILTERS,
        pages=pager(request, page, RUNS_PAGE, runs["total"], status=status),
    )


def _trigger_page(
    request: Request, viewer: Viewer, table_id: str, trigger_id: str, page: int, *, whole: bool
) -> dict[str, Any]:
    """A trigger of a table of the viewer's scope (moderator) with a page of its fire history:
    its scheduled runs interleaved with its skip ranges (``triggers.history``), each fire with
    its run's start and duration. The trigger's card (words, next fires, pause) when ``whole``
    or when the panel needs it (no fires yet: when the first is due)."""
    table = _owned(request, viewer, table_id)
    if not viewer.moderator:
        raise PermissionDenied(messages.STUDIO_MODERATOR_ONLY)
    size = request.app.state.settings.studio_fires_per_page
    found = facade(request).triggers.history(
        table_id, trigger_id, skip=(page - 1) * size, limit=size
    )
    items = [{**i, "run": _run_timing(i)} if i["kind"] == "fire" else i for i in found["items"]]
    at = f"/tables/{table_id}/triggers/{trigger_id}"
    api = f"{table_url(table)}/triggers/{trigger_id}/skips"
    panel = fires_panel_values(request, found, items, page, size, at=at, skips_api=api)
    out = {"table": table, "page": page, "what": "trigger", "paused": False, "next_due": None}
    if whole or not panel["has_fires"]:
        [trigger] = [x for x in _triggers(request, table_id) if x.get("id") == trigger_id]
        next_due = None if trigger["due_now"] else trigger["next_fire"]
        out |= {"trigger": trigger, "paused": trigger["paused"], "next_due": next_due}
    return out | panel


def _run_timing(fire: dict[str, Any]) -> dict[str, Any]:
    started, finished = fire.get("started_at"), fire.get("finished_at")
    duration = None
    if started is not None and finished is not None:
        duration = int((finished - started).total_seconds() * 1000)
    return {"started_at": started, "duration_ms": duration}


def table_url(table: dict[str, Any]) -> str:
    """The table's API path (what the page names for a tenant's scripts)."""
    scope = f"/private/module/custom_tables/{table['scope']}/{table['scope_id']}"
    return f"{scope}/tables/{table['id']}"


@router.get("/tables/{table_id}/triggers/{trigger_id}")
@router.get("/tables/{table_id}/triggers/{trigger_id}" + PANEL)
@html_page
def trigger_detail(
    request: Request, viewer: ViewerDep, table_id: TableId, trigger_id: TriggerId, page: PageQ = 1
) -> Response:
    """One trigger: its words, next fires, Pause/Resume and its fire history; at ``…/fires``
    the history panel alone (polled by the trigger page)."""
    whole = not request.scope["route"].path.endswith(PANEL)  # the route matched, not the URL
    values = _trigger_page(request, viewer, table_id, trigger_id, page, whole=whole)
    return render(request, "trigger.html" if whole else "fires_panel.html", viewer=viewer, **values)


@router.post("/tables/{table_id}/runs/{run_id}/retry")
@html_page
def retry(
    request: Request, viewer: ViewerDep, form: FormDep, table_id: TableId, run_id: RunId
) -> Response:
    """Retry a failed run (SPEC §9.4); the worker executes it."""
    check_post(viewer, form, allowed=viewer.moderator)
    _owned(request, viewer, table_id)
    facade(request).retry_run(table_id, run_id, now=utc_now(request))
    back = form.get("back", "")
    return redirect(back if back.startswith(f"/tables/{table_id}") else f"/tables/{table_id}")


@router.post("/tables/{table_id}/triggers/{trigger_id}/{verb}")
@html_page
def pause_or_resume(
    request: Request,
    viewer: ViewerDep,
    form: FormDep,
    table_id: TableId,
    trigger_id: TriggerId,
    verb: Annotated[str, Path(pattern="^(pause|resume)$")],
) -> Response:
    """Pause or resume one schedule trigger (kept in its state row, idempotent)."""
    check_post(viewer, form, allowed=viewer.moderator)
    _owned(request, viewer, table_id)
    t, now = facade(request), utc_now(request)
    if verb == "pause":
        t.pause_trigger(table_id, trigger_id, now=now)
    else:
        t.resume_trigger(table_id, trigger_id, now=now)
    back = form.get("back", "")
    return redirect(back if back.startswith(f"/tables/{table_id}/") else f"/tables/{table_id}")


__all__ = ["router"]
