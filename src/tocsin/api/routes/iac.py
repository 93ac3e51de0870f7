"""Infrastructure as code over one scope (SPEC §11): export, plan, apply. Moderator only.

``GET P/iac/export`` answers JSON Lines (``application/jsonl``), one trigger document per line;
``POST P/iac/plan`` and ``POST P/iac/apply`` take ``{"documents": [...]}`` (the same documents,
parsed) and answer ``{"plan": [...]}``. Schedule documents (imperative workflow schedules, not
scoped) are refused here with 400: they are planned and applied with the CLI or the facade.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query
from fastapi.responses import Response

from tocsin import iac

from ..deps import Moderator, NowDep, TocsinDep
from ..models import IacDocuments, IacPlanOut, error_responses

PREFIX = "/private/module/custom_tables/{scope}/{scope_id}/iac"
router = APIRouter(prefix=PREFIX, tags=["infrastructure as code"])

JSONL = "application/jsonl"
TableQuery = Annotated[
    list[str] | None, Query(alias="table", description="only these tables (repeatable)")
]


@router.get(
    "/export",
    response_class=Response,
    responses={200: {"content": {JSONL: {}}}, **error_responses(400, 401, 403)},
)
def export(who: Moderator, tocsin: TocsinDep, tables: TableQuery = None) -> Response:
    """The scope's triggers as JSON Lines, normalized; byte-stable across exports."""
    documents = tocsin.export(who.scope, who.scope_id, tables=tables)
    return Response(content=iac.dumps(documents), media_type=JSONL)


@router.post("/plan", response_model=IacPlanOut, responses=error_responses(400, 401, 403))
def plan(body: IacDocuments, who: Moderator, tocsin: TocsinDep) -> dict[str, Any]:
    """Per trigger of every table the documents name: create, update, delete or noop; or
    invalid, with the refusal apply would answer (the same validation as apply)."""
    return {"plan": tocsin.as_tenant(who).plan(body.documents)}


@router.post("/apply", response_model=IacPlanOut, responses=error_responses(400, 401, 403))
def apply(body: IacDocuments, who: Moderator, tocsin: TocsinDep, now: NowDep) -> dict[str, Any]:
    """Carry the plan out through the same validation and save as ``PUT …/triggers`` (the same
    403 for an action reaching app code beyond the token's reach)."""
    return {"plan": tocsin.as_tenant(who).apply(body.documents, now=now)}
