"""Workflow schedules over HTTP (SPEC §12, §15): ``/api/schedules…``.

Bearer tokens with ``schedules:read`` (GET) or ``schedules:write`` (create, delete, pause,
resume). Bodies accept camelCase (``workflowId``, ``inputData``…) or snake_case keys; unknown
keys are 422.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query, Response
from pydantic import ConfigDict, Field
from pydantic.alias_generators import to_camel

from ..deps import (
    SCHEDULE_ID_PATTERN,
    Limit,
    NowDep,
    PageDep,
    ScheduleIdPath,
    SchedulesRead,
    SchedulesWrite,
    Skip,
    TocsinDep,
)
from ..models import Body, error_responses

router = APIRouter(prefix="/api/schedules", tags=["schedules"])

Json = dict[str, Any]
READ = error_responses(401, 403, 404)
WRITE = error_responses(400, 401, 403, 404, 409)


class ScheduleCreate(Body):
    """An imperative schedule of a registered workflow: ``cron`` or a ``trigger`` tree
    (``{"all": [...]}``, ``{"any": [...]}``, ``{"cron": ..., "timezone": ..., "repeated": ...,
    "missing": ...}``, ``{"event": "table_updated", "table_id": ...}``, ...)."""

    model_config = ConfigDict(extra="forbid", alias_generator=to_camel, populate_by_name=True)

    workflow_id: Annotated[str, Field(max_length=64)]
    cron: str | None = None
    trigger: dict[str, Any] | None = None  # a compound trigger's JSON tree (SPEC §13)
    timezone: Annotated[str | None, Field(max_length=64)] = None
    input_data: dict[str, Any] | None = None
    initial_state: dict[str, Any] | None = None
    request_context: dict[str, Any] | None = None
    metadata: dict[str, Any] | None = None
    overlap: Literal["skip", "allow"] = "skip"
    catch_up: Literal["latest", "none", "all"] = "latest"
    max_catch_up: Annotated[int, Field(ge=1, le=10_000)] = 100


@router.get("", responses=READ)
def list_schedules(
    _: SchedulesRead,
    tocsin: TocsinDep,
    workflow_id: Annotated[
        str | None, Query(alias="workflowId", pattern=SCHEDULE_ID_PATTERN)
    ] = None,
    skip: Skip = 0,
    limit: Limit = 50,
) -> Json:
    """All schedules (``?workflowId=`` filters): ``{"items", "total", "skip", "limit"}``."""
    return tocsin.schedules.list(workflow_id=workflow_id, skip=skip, limit=limit)


@router.post("", status_code=201, responses=WRITE)
def create_schedule(
    body: ScheduleCreate, _: SchedulesWrite, tocsin: TocsinDep, now: NowDep
) -> Json:
    """Create an imperative schedule (id ``sch_…``)."""
    return tocsin.schedules.create(**body.model_dump(), now=now)


@router.get("/{schedule_id}", responses=READ)
def get_schedule(
    schedule_id: ScheduleIdPath, _: SchedulesRead, tocsin: TocsinDep, now: NowDep
) -> Json:
    """One schedule with its last fire (a compound one: its tree, latches, next instant)."""
    return tocsin.schedules.get(schedule_id, now=now)


@router.delete("/{schedule_id}", status_code=204, responses=WRITE)
def delete_schedule(schedule_id: ScheduleIdPath, _: SchedulesWrite, tocsin: TocsinDep) -> Response:
    """Delete an imperative schedule; a schedule declared in code is 409."""
    tocsin.schedules.delete(schedule_id)
    return Response(status_code=204)


@router.post("/{schedule_id}/pause", responses=WRITE)
def pause_schedule(
    schedule_id: ScheduleIdPath, _: SchedulesWrite, tocsin: TocsinDep, now: NowDep
) -> Json:
    """Stop firing (persisted, idempotent; a redeploy never unpauses)."""
    return tocsin.schedules.pause(schedule_id, now=now)


@router.post("/{schedule_id}/resume", responses=WRITE)
def resume_schedule(
    schedule_id: ScheduleIdPath, _: SchedulesWrite, tocsin: TocsinDep, now: NowDep
) -> Json:
    """Fire again from the next regular instant after now (no backlog)."""
    return tocsin.schedules.resume(schedule_id, now=now)


@router.get("/{schedule_id}/fires", responses=READ)
def list_fires(
    schedule_id: ScheduleIdPath, _: SchedulesRead, tocsin: TocsinDep, page: PageDep
) -> Json:
    """The fire history, newest first (``run_status`` is ``pending`` until the run is seen)."""
    return tocsin.schedules.fires(schedule_id, page.skip, page.limit)
