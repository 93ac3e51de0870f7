"""Why (not) over HTTP: skips, next fires, run-now, backfill, the global dry run.

- ``GET P/tables/{id}/triggers/{trigger_id}/fires`` (the fire history: its scheduled runs with
  its skip ranges interleaved), ``…/skips`` and ``…/next-fires``; ``POST …/run`` (one manual run
  now): moderator of the table;
- ``GET /api/schedules/{id}/skips`` and ``…/next-fires`` (``schedules:read``), ``POST
  …/backfill`` (``schedules:write``);
- ``GET /root/due?at=`` (``X-ADMIN-TOKEN``): what a tick at ``at`` fires, and why not.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, Query
from pydantic import BaseModel, ConfigDict

from ..deps import (
    Admin,
    ModeratorTable,
    N,
    NowDep,
    PageDep,
    ScheduleIdPath,
    SchedulesRead,
    SchedulesWrite,
    TocsinDep,
    TriggerIdPath,
)
from ..models import Instant, error_responses
from .triggers import PREFIX

Json = dict[str, Any]
READ = error_responses(400, 401, 403, 404)

tables_router = APIRouter(prefix=PREFIX + "/triggers/{trigger_id}", tags=["triggers"])
schedules_router = APIRouter(prefix="/api/schedules/{schedule_id}", tags=["schedules"])
root_router = APIRouter(prefix="/root", tags=["root"], dependencies=[Admin])


@tables_router.get("/fires", responses=READ)
def trigger_fires(
    trigger_id: TriggerIdPath, table: ModeratorTable, tocsin: TocsinDep, page: PageDep
) -> Json:
    """The fire history, newest first: each fire (its scheduled run: scheduled vs actual time,
    run id, run status) and, between them, the skipped occurrences; paged by the fires."""
    return tocsin.triggers.history(table["id"], trigger_id, page.skip, page.limit)


@tables_router.get("/skips", responses=READ)
def trigger_skips(
    trigger_id: TriggerIdPath, table: ModeratorTable, tocsin: TocsinDep, page: PageDep
) -> Json:
    """The trigger's skipped occurrences as ranges (reason, first, last, count), newest first."""
    return tocsin.skips(table["id"], trigger_id, page.skip, page.limit)


@tables_router.get("/next-fires", responses=READ)
def trigger_next_fires(
    trigger_id: TriggerIdPath, table: ModeratorTable, tocsin: TocsinDep, now: NowDep, n: N = 10
) -> Json:
    """The next ``n`` instants the clock trigger fires at, in UTC and its zone."""
    return tocsin.next_fires(table["id"], trigger_id, n=n, now=now)


@tables_router.post("/run", status_code=201, responses=READ)
def run_trigger(
    trigger_id: TriggerIdPath, table: ModeratorTable, tocsin: TocsinDep, now: NowDep
) -> Json:
    """One manual run of the trigger now; never consumes or blocks a scheduled occurrence."""
    return tocsin.run_trigger(table["id"], trigger_id, now=now)


@schedules_router.get("/skips", responses=READ)
def schedule_skips(
    schedule_id: ScheduleIdPath, _: SchedulesRead, tocsin: TocsinDep, page: PageDep
) -> Json:
    """The schedule's skipped instants as ranges, newest first."""
    return tocsin.schedules.skips(schedule_id, page.skip, page.limit)


@schedules_router.get("/next-fires", responses=READ)
def schedule_next_fires(
    schedule_id: ScheduleIdPath, _: SchedulesRead, tocsin: TocsinDep, now: NowDep, n: N = 10
) -> Json:
    """The next ``n`` instants (UTC and the schedule's zone); none while paused."""
    return tocsin.schedules.next_fires(schedule_id, n=n, now=now)


class BackfillBody(BaseModel):
    """``[start, end)``; more than 10,000 instants need ``force``."""

    model_config = ConfigDict(extra="forbid")

    start: Instant
    end: Instant
    force: bool = False


@schedules_router.post("/backfill", responses=error_responses(400, 401, 403, 404))
def backfill(
    schedule_id: ScheduleIdPath,
    body: BackfillBody,
    _: SchedulesWrite,
    tocsin: TocsinDep,
    now: NowDep,
) -> Json:
    """One run per instant of ``[start, end)``, oldest first; idempotent."""
    return tocsin.schedules.backfill(schedule_id, body.start, body.end, now=now, force=body.force)


@root_router.get("/due", responses=error_responses(400, 403))
def due(
    tocsin: TocsinDep,
    now: NowDep,
    at: Annotated[datetime | None, Query(description="an aware instant; default now")] = None,
    record_limit: Annotated[int, Query(ge=1, le=10000)] = 1000,
) -> Json:
    """The global dry run (read-only): what a tick at ``at`` fires, and why not for the rest."""
    return tocsin.due(at=at or now, record_limit=record_limit)


router = APIRouter()
for _sub in (tables_router, schedules_router, root_router):
    router.include_router(_sub)

__all__ = ["router"]
