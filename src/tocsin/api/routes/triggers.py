"""A table's triggers config and its schedule preview (SPEC §3–§5, §7). Moderator only."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Response

from ..deps import ModeratorTable, NowDep, TocsinDep, TriggerIdPath
from ..models import TriggerOut, TriggerPatch, TriggersOut, TriggersPut, error_responses

PREFIX = "/private/module/custom_tables/{scope}/{scope_id}/tables/{table_id}"
router = APIRouter(prefix=PREFIX, tags=["triggers"])

Json = dict[str, Any]


@router.get("/triggers", response_model=TriggersOut, responses=error_responses(401, 403, 404))
def get_triggers(table: ModeratorTable, tocsin: TocsinDep) -> Json:
    """The normalized triggers config, every trigger and action with its id."""
    return {"triggers": tocsin.get_triggers(table["id"])}


@router.put("/triggers", response_model=TriggersOut, responses=error_responses(400, 401, 403, 404))
def put_triggers(body: TriggersPut, table: ModeratorTable, tocsin: TocsinDep, now: NowDep) -> Json:
    """Replace the whole triggers list; answers the normalized config with ids assigned."""
    return {"triggers": tocsin.set_triggers(table["id"], body.triggers, now=now)}


@router.get(
    "/triggers/schedule-preview",
    response_model=dict[str, Any],
    responses=error_responses(401, 403, 404),
)
def schedule_preview(table: ModeratorTable, tocsin: TocsinDep, now: NowDep) -> Json:
    """What the scheduler would do at this instant; creates nothing (SPEC §7)."""
    return tocsin.preview(table["id"], now=now)


@router.get(
    "/triggers/{trigger_id}", response_model=TriggerOut, responses=error_responses(401, 403, 404)
)
def get_trigger(trigger_id: TriggerIdPath, table: ModeratorTable, tocsin: TocsinDep) -> Json:
    """One trigger of the config, with its id and its actions' ids."""
    return tocsin.get_trigger(table["id"], trigger_id)


@router.patch(
    "/triggers/{trigger_id}",
    response_model=TriggerOut,
    responses=error_responses(400, 401, 403, 404),
)
def patch_trigger(
    trigger_id: TriggerIdPath,
    body: TriggerPatch,
    table: ModeratorTable,
    tocsin: TocsinDep,
    now: NowDep,
) -> Json:
    """Merge a JSON Merge Patch (RFC 7396: objects merge, ``null`` removes a key, lists replace)
    into one trigger; its id, state and ledger stay (SPEC §5.2). Validated as ``PUT`` is."""
    return tocsin.patch_trigger(table["id"], trigger_id, body.patch(), now=now)


@router.delete(
    "/triggers/{trigger_id}", status_code=204, responses=error_responses(400, 401, 403, 404)
)
def delete_trigger(
    trigger_id: TriggerIdPath, table: ModeratorTable, tocsin: TocsinDep, now: NowDep
) -> Response:
    """Remove one trigger: it is retired (state and ledger kept; re-adding its id revives it)."""
    tocsin.delete_trigger(table["id"], trigger_id, now=now)
    return Response(status_code=204)
