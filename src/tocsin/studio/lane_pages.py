"""Lanes in Studio (SPEC §14, §16): every lane with its schedule in words and its
last decision, and one lane's attempts newest first, each with its three layers (trigger,
source, selection), its decision badge and the handler's outcome beside the contract;
``?decision=`` narrows the attempts to one decision.

A scheduled lane's page also shows its state (active or paused) with a Pause / Resume button,
and its fire history: the scheduled runs (scheduled vs actual time, window, status) with the
skipped instants between them (``paused``, ``coalesced``, ``dst_gap``), paged by ``?fires=``.

Each attempt row carries what an operator can do with it: **Retry** on an attempt that did not
get its data through (failed, its source stopped, or its handler failed) runs the run again as
a new attempt (``kind: retry``, as ``POST /api/lanes/{id}/trigger`` does); **Requeue** on a
pending or running attempt sends it back to pending for a worker when it is lost or stale
(``POST /api/lanes/{id}/attempts/{attempt_id}/requeue``: a live running one is refused, 409).

Rights are the API's: ``schedules:read`` to look (as ``GET /api/lanes``); ``schedules:write``
(and the session's CSRF token) for Pause / Resume, Retry / Requeue and the "Trigger a manual
run" form, whose window is read in the lane's zone and runs at once as
``POST /api/lanes/{id}/trigger`` does.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from typing import Annotated, Any
from zoneinfo import ZoneInfo

from fastapi import APIRouter, Path, Query, Request, Response

from tocsin import messages
from tocsin.errors import NotFound, PermissionDenied, ValidationError

from .schedule_pages import ID, PageQ
from .web import FormDep, ViewerDep, check_post, facade, html_page, pager, redirect, render, utc_now
from .words import cron_words, lane_reason_words

router = APIRouter(include_in_schema=False)
RUNS_PAGE = 25
DECISIONS = ("ready", "noop", "rejected", "ignored", "stopped")
LaneId = Annotated[str, Path(pattern=ID)]
AttemptId = Annotated[str, Path(pattern="^attempt_[0-9a-f]{32}$")]
DecisionQ = Annotated[str | None, Query(pattern="^(ready|noop|rejected|ignored|stopped)$")]
FiresQ = Annotated[int, Query(ge=1, le=1_000_000)]


def _require_read(viewer: ViewerDep) -> None:
    if not viewer.reads_schedules:
        raise PermissionDenied(messages.STUDIO_NO_SCHEDULES)


def _with_words(lane: dict[str, Any]) -> dict[str, Any]:
    cron = lane.get("cron")
    words = cron_words(cron, dialect="extended") if cron else None
    return {**lane, "cron_words": words}


@router.get("/lanes")
@html_page
def lanes_list(request: Request, viewer: ViewerDep) -> Response:
    """Every lane: id, schedule in words, zone, policy version, last decision."""
    _require_read(viewer)
    lanes = [_with_words(lane) for lane in facade(request).lanes.list()]
    return render(request, "lanes.html", viewer=viewer, lanes=lanes)


def _attempt_view(item: dict[str, Any]) -> dict[str, Any]:
    """An attempt with its layers read out of the contract (empty before a decision), and the
    operator's verb for it: ``retry`` (its data did not get through), ``requeue`` (pending or
    running: lost or stale), else None."""
    contract = item.get("contract") or {}
    decision = item.get("decision")
    return {
        **item,
        "source": contract.get("source_observation"),
        "selection": contract.get("selection"),
        "reason_words": lane_reason_words(decision.get("reason")) if decision else None,
        "verb": _verb(item),
    }


def _verb(item: dict[str, Any]) -> str | None:
    if item["state"] in ("pending", "running"):
        return "requeue"
    decision, handler = item.get("decision") or {}, item.get("handler") or {}
    if item["state"] == "failed" or decision.get("status") == "stopped":
        return "retry"
    return "retry" if handler.get("status") == "failed" else None


@router.get("/lanes/{lane_id}")
@html_page
def lane_detail(
    request: Request,
    viewer: ViewerDep,
    lane_id: LaneId,
    decision: DecisionQ = None,
    page: PageQ = 1,
    fires: FiresQ = 1,
) -> Response:
    """A lane's metadata, Pause / Resume and fire history when it has a schedule, and its
    attempts (paginated, newest first, ``?decision=``)."""
    _require_read(viewer)
    t = facade(request)
    skip = (page - 1) * RUNS_PAGE
    found = t.lanes.contracts(lane_id, skip=skip, limit=RUNS_PAGE, decision=decision)
    lane = _with_words(t.lanes.get(lane_id))
    history: dict[str, Any] = {"what": "lane", "paused": lane["paused"]}
    if lane["cron"]:
        size = request.app.state.settings.studio_fires_per_page
        shown = t.lanes.fires(lane_id, skip=(fires - 1) * size, limit=size)
        pages = pager(request, fires, size, shown["total"], decision=decision)
        runs_page = (("page", str(page)),) if page > 1 else ()
        history |= {
            "history": shown["items"],
            "has_fires": any(i["kind"] == "fire" for i in shown["items"]),
            "fire_pages": replace(pages, key="fires", params=pages.params + runs_page),
            "skips_left_off": shown["skips_left_off"],
            "next_due": lane["next_fire_at"],
        }
    return render(
        request,
        "lane.html",
        viewer=viewer,
        lane=lane,
        attempts=[_attempt_view(item) for item in found["items"]],
        decision=decision,
        decisions=DECISIONS,
        pages=pager(request, page, RUNS_PAGE, found["total"], decision=decision),
        **history,
    )


def _form_instant(form: dict[str, str], field: str, zone: str) -> datetime:
    """A ``datetime-local`` value (or one with an offset), naive ones read in ``zone``."""
    value = form.get(field, "").strip()
    try:
        at = datetime.fromisoformat(value)
    except ValueError:
        raise ValidationError(messages.studio_lane_instant_invalid(field, value, zone)) from None
    return at.replace(tzinfo=ZoneInfo(zone)) if at.tzinfo is None else at


@router.post("/lanes/{lane_id}/trigger")
@html_page
def trigger_manual(request: Request, viewer: ViewerDep, form: FormDep, lane_id: LaneId) -> Response:
    """A manual run over the form's window (CSRF and ``schedules:write``), then the lane page."""
    check_post(viewer, form, allowed=viewer.writes_schedules)
    service = facade(request).lanes
    lane = service.registered().get(lane_id)
    if lane is None:
        raise NotFound(messages.lane_unknown(lane_id))
    window = (_form_instant(form, "start", lane.zone), _form_instant(form, "end", lane.zone))
    service.trigger(lane_id, window, kind="manual", now=utc_now(request))
    return redirect(f"/lanes/{lane_id}")


@router.post("/lanes/{lane_id}/attempts/{attempt_id}/{verb}")
@html_page
def attempt_verb(
    request: Request,
    viewer: ViewerDep,
    form: FormDep,
    lane_id: LaneId,
    attempt_id: AttemptId,
    verb: Annotated[str, Path(pattern="^(retry|requeue)$")],
) -> Response:
    """Retry an attempt's run as a new attempt, or requeue a lost or stale attempt (CSRF and
    ``schedules:write``; the service's rules and errors), then the lane page."""
    check_post(viewer, form, allowed=viewer.writes_schedules)
    service, now = facade(request).lanes, utc_now(request)
    if verb == "requeue":
        service.requeue(lane_id, attempt_id, now=now)
    else:
        attempt = service.attempt(attempt_id)
        if attempt["lane_id"] != lane_id:
            raise NotFound(messages.lane_run_not_found(attempt_id))
        service.trigger(lane_id, kind="retry", run_id=attempt["run_id"], now=now)
    return redirect(f"/lanes/{lane_id}")


# after ``…/trigger``: a verb route listed first would answer 422 for it
@router.post("/lanes/{lane_id}/{verb}")
@html_page
def pause_or_resume(
    request: Request,
    viewer: ViewerDep,
    form: FormDep,
    lane_id: LaneId,
    verb: Annotated[str, Path(pattern="^(pause|resume)$")],
) -> Response:
    """Pause or resume the lane's scheduled runs (CSRF and ``schedules:write``), then the lane
    page."""
    check_post(viewer, form, allowed=viewer.writes_schedules)
    service = facade(request).lanes
    action = service.pause if verb == "pause" else service.resume
    action(lane_id, now=utc_now(request))
    return redirect(f"/lanes/{lane_id}")


__all__ = ["router"]
