"""A table's triggers config, its schedule preview (SPEC §3–§5, §7) and schedule triggers' pause
and resume. Moderator only."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Response

from ..deps import Moderator, ModeratorTable, NowDep, TocsinDep, TriggerIdPath
from ..models import TriggerOut, TriggerPatch, TriggersOut, TriggersPut, error_responses

PREFIX = "/private/module/custom_tables/{scope}/{scope_id}/tables/{table_id}"
router = APIRouter(prefix=PREFIX, tags=["triggers"])

Json = dict[str, Any]


@router.get("/triggers", response_model=TriggersOut, responses=error_responses(401, 403, 404))
def get_triggers(table: ModeratorTable, tocsin: TocsinDep) -> Json:
    """The normalized triggers config, every trigger and action with its id."""
    return {"triggers": tocsin.get_triggers(table["id"])}


@router.put("/triggers", response_model=TriggersOut, responses=error_responses(400, 401, 403, 404))
def put_triggers(
    body: TriggersPut, who: Moderator, table: ModeratorTable, tocsin: TocsinDep, now: NowDep
) -> Json:
    """Replace the whole triggers list; answers the normalized config with ids assigned. A
    ``start_workflow`` or ``invoke_command`` action needs its target exposed to tenants or a
    token with ``schedules:write`` (403 otherwise)."""
    saved = tocsin.as_tenant(who).set_triggers(table["id"], body.triggers, now=now)
    return {"triggers": saved}


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
    who: Moderator,
    table: ModeratorTable,
    tocsin: TocsinDep,
    now: NowDep,
) -> Json:
    """Merge a JSON Merge Patch (RFC 7396: objects merge, ``null`` removes a key, lists replace)
    into one trigger; its id, state and ledger stay (SPEC §5.2). Validated as ``PUT`` is."""
    return tocsin.as_tenant(who).patch_trigger(table["id"], trigger_id, body.patch(), now=now)


@router.delete(
    "/triggers/{trigger_id}", status_code=204, responses=error_responses(400, 401, 403, 404)
)
def delete_trigger(
    trigger_id: TriggerIdPath, table: ModeratorTable, tocsin: TocsinDep, now: NowDep
) -> Response:
    """Remove one trigger: it is retired (state and ledger kept; re-adding its id revives it)."""
    tocsin.delete_trigger(table["id"], trigger_id, now=now)
    return Response(status_code=204)


@router.post(
    "/triggers/{trigger_id}/pause",
    response_model=dict[str, Any],
    responses=error_responses(401, 403, 404, 409),
)
def pause_trigger(
    trigger_id: TriggerIdPath, table: ModeratorTable, tocsin: TocsinDep, now: NowDep
) -> Json:
    """Pause a schedule trigger (idempotent): no fire until resumed; kept across config saves."""
    return tocsin.pause_trigger(table["id"], trigger_id, now=now)


@router.post(
    "/triggers/{trigger_id}/resume",
    response_model=dict[str, Any],
    responses=error_responses(401, 403, 404, 409),
)
def resume_trigger(
    trigger_id: TriggerIdPath, table: ModeratorTable, tocsin: TocsinDep, now: NowDep
) -> Json:
    """Resume a paused schedule trigger from now: nothing that came due while paused fires."""
    return tocsin.resume_trigger(table["id"], trigger_id, now=now)
