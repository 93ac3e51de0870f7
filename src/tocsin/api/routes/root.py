"""Root routes behind ``X-ADMIN-TOKEN`` (SPEC §6, §9.7)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query, Request

from tocsin.store import pools

from ..deps import Admin, IdQuery, NowDep, TocsinDep
from ..metrics import Metrics
from ..models import TickCounts, error_responses

router = APIRouter(prefix="/root/custom-tables", tags=["root"], dependencies=[Admin])

TableLimit = Annotated[int, Query(ge=1, le=2000)]
RecordLimit = Annotated[int, Query(ge=1, le=10000)]
RequeueStatus = Annotated[Literal["pending", "running"] | None, Query()]
OlderThan = Annotated[float | None, Query(ge=0, le=31_536_000)]


@router.post("/run-due-triggers", response_model=TickCounts, responses=error_responses(403))
def run_due_triggers(
    request: Request,
    tocsin: TocsinDep,
    now: NowDep,
    table_limit: TableLimit = 200,
    record_limit: RecordLimit = 1000,
) -> dict[str, Any]:
    """One tick: claim due occurrences, insert pending runs and enqueue them (SPEC §6). A table
    it finds locked past the API's ``lock_timeout`` is skipped (the next tick takes it)."""
    metrics: Metrics = request.app.state.metrics
    with pools.bound(pools.API):  # a request: the API's pool and timeouts, its client waits
        return metrics.timed_tick(
            lambda: tocsin.tick(now=now, table_limit=table_limit, record_limit=record_limit)
        )


@router.post("/trigger-runs/requeue", response_model=dict[str, Any], responses=error_responses(403))
def requeue_runs(
    tocsin: TocsinDep,
    now: NowDep,
    table_id: IdQuery = None,
    status: RequeueStatus = None,
    older_than_s: OlderThan = None,
) -> dict[str, Any]:
    """Re-enqueue lost (pending) or stale (running) runs in bulk; answers counts (SPEC §9.7).

    ``older_than_s`` defaults to ``TOCSIN_STUCK_AFTER_S``; without ``status`` both are swept.
    """
    return tocsin.requeue(now=now, table_id=table_id, status=status, older_than_s=older_than_s)
