"""Lanes over HTTP (SPEC §14, §15): ``/api/lanes…``.

Bearer tokens with ``schedules:read`` (the list, one lane, its contracts, fires and next fires)
or ``schedules:write`` (trigger, pause, resume, requeue an attempt), as for
``/api/schedules``. Instants in a trigger body are RFC 3339 with an offset (a naive instant is
422); unknown keys are 422.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Path
from pydantic import ConfigDict, Field

from ..deps import Limit, N, NowDep, SchedulesRead, SchedulesWrite, Skip, TocsinDep
from ..models import AwareInstant, Body, error_responses

router = APIRouter(prefix="/api/lanes", tags=["lanes"])

LaneIdPath = Annotated[str, Path(pattern=r"^[A-Za-z0-9_.-]{1,64}$", description="a lane id")]
AttemptIdPath = Annotated[
    str, Path(pattern=r"^[A-Za-z0-9_.-]{1,64}$", description="an attempt id (attempt_…)")
]
Decision = Literal["ready", "noop", "stopped", "rejected", "ignored"]
Json = dict[str, Any]
READ = error_responses(401, 403, 404)
WRITE = error_responses(400, 401, 403, 404)
PAUSE = error_responses(400, 401, 403, 404, 409)
REQUEUE = error_responses(401, 403, 404, 409)


class WindowIn(Body):
    model_config = ConfigDict(extra="forbid")

    start_inclusive: AwareInstant
    end_exclusive: AwareInstant


class LaneTrigger(Body):
    """``kind`` manual (a window), retry (a ``run_id``) or scheduled (``scheduled_for``, the
    window defaulting to the lane's previous schedule instant)."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["manual", "retry", "scheduled"] = "manual"
    window: WindowIn | None = None
    run_id: Annotated[str | None, Field(max_length=40)] = None
    scheduled_for: AwareInstant | None = None


@router.get("", responses=READ)
def list_lanes(_: SchedulesRead, tocsin: TocsinDep) -> Json:
    """Registered lanes and lanes with a stored history: ``{"items": […]}``."""
    return {"items": tocsin.lanes.list()}


@router.get("/{lane_id}", responses=READ)
def get_lane(lane_id: LaneIdPath, _: SchedulesRead, tocsin: TocsinDep) -> Json:
    """One lane: its schedule, catch-up, pause state, next run and decision counts."""
    return tocsin.lanes.get(lane_id)


@router.post("/{lane_id}/pause", responses=PAUSE)
def pause_lane(lane_id: LaneIdPath, _: SchedulesWrite, tocsin: TocsinDep, now: NowDep) -> Json:
    """Stop the lane's scheduled runs (persisted, idempotent; a redeploy never unpauses);
    a lane without a schedule is 409."""
    return tocsin.lanes.pause(lane_id, now=now)


@router.post("/{lane_id}/resume", responses=PAUSE)
def resume_lane(lane_id: LaneIdPath, _: SchedulesWrite, tocsin: TocsinDep, now: NowDep) -> Json:
    """Run again from the next instant after now; the instants passed while paused are
    recorded as ``paused`` skips and none of them runs."""
    return tocsin.lanes.resume(lane_id, now=now)


@router.get("/{lane_id}/fires", responses=READ)
def list_fires(
    lane_id: LaneIdPath,
    _: SchedulesRead,
    tocsin: TocsinDep,
    skip: Skip = 0,
    limit: Limit = 50,
) -> Json:
    """The scheduled runs newest first (scheduled vs actual time, run, attempt, status) with
    the skipped instants between them (``kind``: ``fire`` or ``skip``; paged by the fires)."""
    return tocsin.lanes.fires(lane_id, skip=skip, limit=limit)


@router.get("/{lane_id}/next-fires", responses=PAUSE)
def next_fires(
    lane_id: LaneIdPath, _: SchedulesRead, tocsin: TocsinDep, now: NowDep, n: N = 10
) -> Json:
    """The next ``n`` instants the lane runs at (UTC and its zone); none while paused."""
    return tocsin.lanes.next_fires(lane_id, n=n, now=now)


@router.get("/{lane_id}/contracts", responses=READ)
def list_contracts(
    lane_id: LaneIdPath,
    _: SchedulesRead,
    tocsin: TocsinDep,
    decision: Decision | None = None,
    skip: Skip = 0,
    limit: Limit = 50,
) -> Json:
    """A lane's attempts newest first, each with its contract; ``?decision=`` filters."""
    return tocsin.lanes.contracts(lane_id, skip=skip, limit=limit, decision=decision)


@router.post("/{lane_id}/trigger", responses=WRITE)
def trigger_lane(
    lane_id: LaneIdPath, body: LaneTrigger, _: SchedulesWrite, tocsin: TocsinDep, now: NowDep
) -> Json:
    """Admit and execute one attempt now; answers the attempt with its contract."""
    window = None
    if body.window is not None:
        window = (body.window.start_inclusive, body.window.end_exclusive)
    return tocsin.lanes.trigger(
        lane_id,
        window,
        kind=body.kind,
        run_id=body.run_id,
        scheduled_for=body.scheduled_for,
        now=now,
    )


@router.post("/{lane_id}/attempts/{attempt_id}/requeue", responses=REQUEUE)
def requeue_attempt(
    lane_id: LaneIdPath,
    attempt_id: AttemptIdPath,
    _: SchedulesWrite,
    tocsin: TocsinDep,
    now: NowDep,
) -> Json:
    """Send a pending (lost) or stale running attempt back to pending for a worker; answers
    the attempt. Another lane's attempt is 404; a live running or finished one 409 (a failed
    run is retried with ``kind: retry``)."""
    return tocsin.lanes.requeue(lane_id, attempt_id, now=now)
