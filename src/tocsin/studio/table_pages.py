"""Tables in Studio: the tables of the viewer's scope, and one table's triggers (schedule in
words, next fire, Pause/Resume per schedule trigger), its schedule preview rendered for people
(SPEC §7) and its runs with the status and ``stuck`` filters (SPEC §8) and a Retry button on
failed runs (SPEC §9.4).

Roles are the API's (SPEC §15): a member sees the table; triggers, preview and runs need a
moderator, who also gets the buttons.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, Query, Request, Response

from tocsin import messages
from tocsin.errors import NotFound, PermissionDenied, TocsinError

from .schedule_pages import PageQ
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
    return redirect(f"/tables/{table_id}")


__all__ = ["router"]
