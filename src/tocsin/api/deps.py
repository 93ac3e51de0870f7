"""FastAPI dependencies: the facade, the clock, bearer auth, table ownership, the admin token.

These are the "authorise" step of every route (STYLE R9). Tests override :func:`get_now`
instead of patching the clock.
"""

from __future__ import annotations

import hmac
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Annotated, Any

from fastapi import Depends, Header, Path, Query, Request
from fastapi.dependencies.models import Dependant
from fastapi.exceptions import RequestValidationError
from fastapi.routing import APIRoute
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from tocsin import messages
from tocsin.errors import NotFound, PermissionDenied
from tocsin.service import Tocsin
from tocsin.service.auth import Principal
from tocsin.settings import Settings

from .models import Scope

bearer = HTTPBearer(auto_error=False, description="A token from `tocsin tokens create`.")


def get_tocsin(request: Request) -> Tocsin:
    """The facade this app serves."""
    tocsin: Tocsin = request.app.state.tocsin
    return tocsin


def get_settings(request: Request) -> Settings:
    settings: Settings = request.app.state.settings
    return settings


def get_now() -> datetime:
    """The request's instant: the real clock at the edge; tests override this dependency."""
    return datetime.now(UTC)


TocsinDep = Annotated[Tocsin, Depends(get_tocsin)]
NowDep = Annotated[datetime, Depends(get_now)]
Skip = Annotated[int, Query(ge=0, le=1_000_000)]
Limit = Annotated[int, Query(ge=1, le=500)]
N = Annotated[int, Query(ge=1, le=1000)]  # how many next instants


@dataclass(frozen=True, slots=True)
class Page:
    """A listing's page: ``skip`` items passed over, at most ``limit`` returned."""

    skip: int
    limit: int


def page_query(skip: Skip = 0, limit: Limit = 50) -> Page:
    return Page(skip, limit)


PageDep = Annotated[Page, Depends(page_query)]
ScopePath = Annotated[Scope, Path(description="chatroom, workspace or user")]
ScopeIdPath = Annotated[uuid.UUID, Path(description="the scope's UUID")]
Credentials = Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)]
# ids are UUIDs or prefixed hex; anything else (NUL bytes, slashes, …) is refused as 422 before
# it reaches a database that would choke on it
ID_PATTERN = r"^[A-Za-z0-9_-]{1,64}$"
IdPath = Annotated[str, Path(pattern=ID_PATTERN, description="an id")]
IdQuery = Annotated[str | None, Query(pattern=ID_PATTERN, description="an id")]
# trigger ids are authored: 1-64 letters, digits, '_', '.', ':' or '-' (core.config.triggers)
TRIGGER_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.:\-]{0,63}$"
TriggerIdPath = Annotated[str, Path(pattern=TRIGGER_ID_PATTERN, description="a trigger id")]
TriggerIdQuery = Annotated[
    str | None, Query(pattern=TRIGGER_ID_PATTERN, description="only this trigger's runs")
]


def require(role: str) -> Callable[..., Principal]:
    """A dependency: the bearer token may act as ``role`` in the path's scope."""

    def dependency(
        scope: ScopePath, scope_id: ScopeIdPath, creds: Credentials, tocsin: TocsinDep
    ) -> Principal:
        token = creds.credentials if creds is not None else None
        return tocsin.authorize(token, scope=scope, scope_id=str(scope_id), role=role)

    return dependency


Member = Annotated[Principal, Depends(require("member"))]
Moderator = Annotated[Principal, Depends(require("moderator"))]


def _owned_table(
    tocsin: Tocsin, principal: Principal, table_id: str, *, allow_trashed: bool
) -> dict[str, Any]:
    """The table if the principal's scope owns it (404 otherwise, or when trashed)."""
    try:
        table = tocsin.get_table(table_id)
    except NotFound:
        raise NotFound(messages.TABLE_NOT_FOUND) from None
    owner = (table["scope"], str(table["scope_id"]))
    if owner != (principal.scope, principal.scope_id):
        raise NotFound(messages.TABLE_NOT_FOUND)
    if table.get("trashed") and not allow_trashed:
        raise NotFound(messages.TABLE_NOT_FOUND)
    return table


def member_table(principal: Member, table_id: IdPath, tocsin: TocsinDep) -> dict[str, Any]:
    """A live table of the path's scope, readable by a member."""
    return _owned_table(tocsin, principal, table_id, allow_trashed=False)


def moderator_table(principal: Moderator, table_id: IdPath, tocsin: TocsinDep) -> dict[str, Any]:
    """A live table of the path's scope, for a moderator."""
    return _owned_table(tocsin, principal, table_id, allow_trashed=False)


def moderator_any_table(
    principal: Moderator, table_id: IdPath, tocsin: TocsinDep
) -> dict[str, Any]:
    """A live or trashed table of the path's scope (restore), for a moderator."""
    return _owned_table(tocsin, principal, table_id, allow_trashed=True)


MemberTable = Annotated[dict[str, Any], Depends(member_table)]
ModeratorTable = Annotated[dict[str, Any], Depends(moderator_table)]
ModeratorAnyTable = Annotated[dict[str, Any], Depends(moderator_any_table)]


def admin_token_ok(settings: Settings, given: str | None) -> bool:
    """``given`` equals ``Settings.admin_token`` (constant time); never when none is set."""
    expected = settings.admin_token
    if not expected or given is None:
        return False
    return hmac.compare_digest(given.encode("utf-8"), expected.encode("utf-8"))


def require_admin(
    settings: Annotated[Settings, Depends(get_settings)],
    x_admin_token: Annotated[str | None, Header(alias="X-ADMIN-TOKEN")] = None,
) -> None:
    """Root routes: ``X-ADMIN-TOKEN`` must equal ``Settings.admin_token`` (constant time)."""
    if not admin_token_ok(settings, x_admin_token):
        raise PermissionDenied(messages.ADMIN_DENIED)


Admin = Depends(require_admin)


def require_permission(permission: str) -> Callable[..., Principal]:
    """A dependency: the bearer token carries ``permission`` (``schedules:read|write``)."""

    def dependency(creds: Credentials, tocsin: TocsinDep) -> Principal:
        token = creds.credentials if creds is not None else None
        return tocsin.authorize_permission(token, permission=permission)

    return dependency


SchedulesRead = Annotated[Principal, Depends(require_permission("schedules:read"))]
SchedulesWrite = Annotated[Principal, Depends(require_permission("schedules:write"))]
# schedule ids: wf_<workflow>[__<entry>] (letters, digits, '_', '.', '-') or sch_<hex>
SCHEDULE_ID_PATTERN = r"^[A-Za-z0-9_.-]{1,64}$"
ScheduleIdPath = Annotated[str, Path(pattern=SCHEDULE_ID_PATTERN, description="a schedule id")]
WorkflowIdPath = Annotated[str, Path(pattern=SCHEDULE_ID_PATTERN, description="a workflow id")]


def _declared_query(route: APIRoute) -> frozenset[str]:
    """The query parameter names ``route`` declares (its dependencies' included), cached."""
    cached: frozenset[str] | None = getattr(route, "_tocsin_query_names", None)
    if cached is None:
        names: set[str] = set()
        pending: list[Dependant] = [route.dependant]
        while pending:
            dependant = pending.pop()
            names.update(param.alias for param in dependant.query_params)
            pending.extend(dependant.dependencies)
        cached = frozenset(names)
        route._tocsin_query_names = cached  # type: ignore[attr-defined]
    return cached


def reject_unknown_query(request: Request) -> None:
    """422 for a query parameter the route does not declare (a typo such as ``?stauts=`` must
    not silently list everything), in FastAPI's validation shape."""
    route = request.scope.get("route")
    if not isinstance(route, APIRoute):
        return
    allowed = _declared_query(route)
    unknown = sorted({name for name in request.query_params if name not in allowed})
    if unknown:
        msg = messages.unknown_query_parameters(unknown, sorted(allowed))
        errors = [
            {
                "type": "extra_forbidden",
                "loc": ["query", name],
                "msg": msg,
                "input": request.query_params.get(name),
            }
            for name in unknown
        ]
        raise RequestValidationError(errors)


RejectUnknownQuery = Depends(reject_unknown_query)

_BODY_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
_NO_BODY = (b"", b"{}", b"null")


async def reject_unexpected_body(request: Request) -> None:
    """422 for a body sent to a route that takes none (``POST …/run`` with ``{"record_id": …}``
    must not answer 201 as if the field were used), in FastAPI's validation shape; no body,
    ``{}`` or ``null`` is fine. The body is already bounded by the request guard."""
    route = request.scope.get("route")
    if request.method not in _BODY_METHODS or not isinstance(route, APIRoute):
        return
    if route.body_field is not None or (await request.body()).strip() in _NO_BODY:
        return
    error = {"type": "extra_forbidden", "loc": ["body"], "msg": messages.NO_BODY_EXPECTED}
    raise RequestValidationError([{**error, "input": None}])


RejectUnexpectedBody = Depends(reject_unexpected_body)
