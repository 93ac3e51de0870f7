"""Staged changes of a table behind the approval gate (SPEC §9.6). Moderator only."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from ..deps import IdPath, Limit, ModeratorTable, NowDep, Skip, TocsinDep
from ..models import Page, error_responses

PREFIX = "/private/module/custom_tables/{scope}/{scope_id}/tables/{table_id}/staged-changes"
router = APIRouter(prefix=PREFIX, tags=["staged changes"])

Json = dict[str, Any]


@router.get("", response_model=Page, responses=error_responses(401, 403, 404))
def list_staged_changes(
    table: ModeratorTable, tocsin: TocsinDep, skip: Skip = 0, limit: Limit = 50
) -> Json:
    """Staged changes of this table, oldest first."""
    return tocsin.list_staged_changes(table["id"], skip=skip, limit=limit)


@router.post(
    "/{change_id}/approve",
    response_model=dict[str, Any],
    responses=error_responses(401, 403, 404, 409),
)
def approve_change(
    change_id: IdPath, table: ModeratorTable, tocsin: TocsinDep, now: NowDep
) -> Json:
    """Approve a staged change; a worker applies it."""
    return tocsin.approve_change(table["id"], change_id, now=now)


@router.post(
    "/{change_id}/reject",
    response_model=dict[str, Any],
    responses=error_responses(401, 403, 404, 409),
)
def reject_change(change_id: IdPath, table: ModeratorTable, tocsin: TocsinDep, now: NowDep) -> Json:
    """Reject a staged change; nothing is written."""
    return tocsin.reject_change(table["id"], change_id, now=now)
