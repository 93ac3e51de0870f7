"""Tables and records of a scope (SPEC §2, DESIGN §4b). Columns are part of the table."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from ..deps import (
    IdPath,
    Limit,
    Member,
    MemberTable,
    Moderator,
    ModeratorAnyTable,
    ModeratorTable,
    NowDep,
    Skip,
    TocsinDep,
)
from ..models import (
    Page,
    RecordOut,
    RecordWrite,
    RecordWritten,
    TableCreate,
    TableOut,
    error_responses,
)

PREFIX = "/private/module/custom_tables/{scope}/{scope_id}"
router = APIRouter(prefix=PREFIX, tags=["tables"])

AUTH = (401, 403)
Json = dict[str, Any]


@router.post(
    "/tables", status_code=201, response_model=TableOut, responses=error_responses(400, *AUTH)
)
def create_table(body: TableCreate, who: Moderator, tocsin: TocsinDep, now: NowDep) -> Json:
    """Create a table with typed columns in this scope (moderator).

    ``requires_approval`` puts trigger writes to it behind the approval gate (SPEC §9.6);
    ``scp_rules`` are channel security rules, exclusive with triggers (SPEC §2).
    """
    return tocsin.create_table(
        scope=who.scope,
        scope_id=who.scope_id,
        name=body.name,
        columns=body.columns,
        requires_approval=body.requires_approval,
        scp_rules=body.scp_rules,
        now=now,
    )


@router.get("/tables", response_model=Page, responses=error_responses(*AUTH))
def list_tables(who: Member, tocsin: TocsinDep, skip: Skip = 0, limit: Limit = 50) -> Json:
    """This scope's live tables, oldest first (member)."""
    return tocsin.list_tables(who.scope, who.scope_id, skip=skip, limit=limit)


@router.get("/tables/{table_id}", response_model=TableOut, responses=error_responses(*AUTH, 404))
def get_table(table: MemberTable) -> Json:
    """A live table of this scope (member)."""
    return table


@router.post(
    "/tables/{table_id}/trash", response_model=TableOut, responses=error_responses(*AUTH, 404)
)
def trash_table(table: ModeratorTable, tocsin: TocsinDep, now: NowDep) -> Json:
    """Trash a table: its schedules fall silent (moderator)."""
    return tocsin.trash_table(table["id"], now=now)


@router.post(
    "/tables/{table_id}/restore", response_model=TableOut, responses=error_responses(*AUTH, 404)
)
def restore_table(table: ModeratorAnyTable, tocsin: TocsinDep, now: NowDep) -> Json:
    """Restore a trashed table (moderator)."""
    return tocsin.restore_table(table["id"], now=now)


@router.post(
    "/tables/{table_id}/records",
    status_code=201,
    response_model=RecordWritten,
    responses=error_responses(400, *AUTH, 404),
)
def create_record(body: RecordWrite, table: ModeratorTable, tocsin: TocsinDep, now: NowDep) -> Json:
    """Insert one record; values are validated against the column types (moderator)."""
    return tocsin.insert_record(table["id"], body.data, now=now)


@router.get(
    "/tables/{table_id}/records", response_model=Page, responses=error_responses(*AUTH, 404)
)
def list_records(table: MemberTable, tocsin: TocsinDep, skip: Skip = 0, limit: Limit = 50) -> Json:
    """Live records, oldest first (member)."""
    return tocsin.list_records(table["id"], skip=skip, limit=limit)


@router.patch(
    "/tables/{table_id}/records/{record_id}",
    response_model=RecordWritten,
    responses=error_responses(400, *AUTH, 404),
)
def update_record(
    record_id: IdPath, body: RecordWrite, table: ModeratorTable, tocsin: TocsinDep, now: NowDep
) -> Json:
    """Partial update: only the given columns change (moderator)."""
    return tocsin.update_record(table["id"], record_id, body.data, now=now)


@router.post(
    "/tables/{table_id}/records/{record_id}/trash",
    response_model=RecordOut,
    responses=error_responses(*AUTH, 404),
)
def trash_record(record_id: IdPath, table: ModeratorTable, tocsin: TocsinDep, now: NowDep) -> Json:
    """Trash a record (a ``deleted`` row event) (moderator)."""
    return tocsin.trash_record(table["id"], record_id, now=now)


@router.post(
    "/tables/{table_id}/records/{record_id}/restore",
    response_model=RecordOut,
    responses=error_responses(*AUTH, 404),
)
def restore_record(
    record_id: IdPath, table: ModeratorTable, tocsin: TocsinDep, now: NowDep
) -> Json:
    """Restore a trashed record (a ``restored`` row event) (moderator)."""
    return tocsin.restore_record(table["id"], record_id, now=now)
