"""Trigger runs of a table: list, get, retry (SPEC §8, §9.4). Moderator only."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, Query

from ..deps import IdPath, IdQuery, Limit, ModeratorTable, NowDep, Skip, TocsinDep, TriggerIdQuery
from ..models import Page, RunOut, RunStatus, error_responses

PREFIX = "/private/module/custom_tables/{scope}/{scope_id}/tables/{table_id}/trigger-runs"
router = APIRouter(prefix=PREFIX, tags=["runs"])

Json = dict[str, Any]
WINDOW = "ISO 8601; without an offset the instant is read as UTC"
Since = Annotated[datetime | None, Query(description=f"runs created at or after this ({WINDOW})")]
Until = Annotated[datetime | None, Query(description=f"runs created before this ({WINDOW})")]


@router.get("", response_model=Page, responses=error_responses(401, 403, 404))
def list_runs(
    table: ModeratorTable,
    tocsin: TocsinDep,
    now: NowDep,
    status: RunStatus | None = None,
    skip: Skip = 0,
    limit: Limit = 50,
    trigger_id: TriggerIdQuery = None,
    record_id: IdQuery = None,
    since: Since = None,
    until: Until = None,
) -> Json:
    """Runs, newest first; ``status=stuck`` is failed or stale running (SPEC §8); narrowed by
    ``trigger_id``, ``record_id`` and creation time (``since`` <= created_at < ``until``)."""
    return tocsin.list_runs(
        table["id"],
        status=status,
        skip=skip,
        limit=limit,
        now=now,
        trigger_id=trigger_id,
        record_id=record_id,
        since=since,
        until=until,
    )


@router.get("/{run_id}", response_model=RunOut, responses=error_responses(401, 403, 404))
def get_run(run_id: IdPath, table: ModeratorTable, tocsin: TocsinDep) -> Json:
    """One run with its receipts."""
    return tocsin.get_run(table["id"], run_id)


@router.post(
    "/{run_id}/retry", response_model=RunOut, responses=error_responses(401, 403, 404, 409)
)
def retry_run(run_id: IdPath, table: ModeratorTable, tocsin: TocsinDep, now: NowDep) -> Json:
    """Reset a failed, pending or stale running run to pending (SPEC §9.4)."""
    return tocsin.retry_run(table["id"], run_id, now=now)
