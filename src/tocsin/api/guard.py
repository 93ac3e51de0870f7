"""``RequestGuard``: a pure ASGI middleware that refuses a request before its body is read.

FastAPI reads and parses a request's body before any dependency runs, so without this an
unauthenticated 50 MB JSON body was parsed (seconds, hundreds of MB) only to answer 401. Here,
in order, before the application sees the request:

1. a ``Content-Length`` above ``Settings.max_body_bytes`` (``TOCSIN_MAX_BODY_BYTES``) → 413;
2. a request that may carry a body (any method but GET, HEAD, OPTIONS) to a tenant route
   (``/private/module/custom_tables/<scope>/<scope_id>/…``) without a valid bearer token → 401,
   with another tenant's token → 403; to a root route (``/root/…``) without the admin token → 403;
   to ``/api/schedules…``, ``/api/workflows…`` or ``/api/lanes…`` without a valid (known,
   unexpired, unrevoked) bearer token → 401 (the routes' own dependencies still decide roles and
   permissions: this only authenticates early);
3. the body is counted as it streams (chunked uploads have no ``Content-Length``): past the
   limit, reading it raises a 413 ``HTTPException`` that the application renders; and it must
   arrive within ``Settings.body_timeout_s`` (``TOCSIN_BODY_TIMEOUT_S``) of its first read, or
   reading it raises a 408 (a client trickling a body, or stopping short of its
   ``Content-Length``, would otherwise hold its connection for as long as it likes).

Every refusal is JSON ``{"detail": …}``, as the application's own errors.
"""

from __future__ import annotations

import asyncio
import json
import re
import uuid

from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from tocsin import messages
from tocsin.errors import PermissionDenied, TocsinError
from tocsin.service import Tocsin
from tocsin.service.auth import Unauthenticated
from tocsin.settings import Settings

from .deps import admin_token_ok
from .errors import error_headers

BODYLESS_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
TENANT_PATH = re.compile(r"^/private/module/custom_tables/(chatroom|workspace|user)/([^/]+)(?:/|$)")
ROOT_PATH = re.compile(r"^/root(?:/|$)")
API_PATH = re.compile(r"^/api/(?:schedules|workflows|lanes)(?:/|$)")


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", ()):
        if key.lower() == name:
            return bytes(value).decode("latin-1")
    return None


def _bearer(scope: Scope) -> str | None:
    scheme, _, token = (_header(scope, b"authorization") or "").partition(" ")
    return (token.strip() or None) if scheme.lower() == "bearer" else None


def _is_uuid(text: str) -> bool:
    try:
        uuid.UUID(text)
    except ValueError:
        return False
    return True


async def _respond(send: Send, status: int, detail: str, headers: dict[str, str] | None) -> None:
    body = json.dumps({"detail": detail}).encode("utf-8")
    raw = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    raw += [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in (headers or {}).items()]
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": body})


class RequestGuard:
    """Size cap and early authentication (see the module docstring)."""

    def __init__(self, app: ASGIApp, *, tocsin: Tocsin, settings: Settings) -> None:
        self.app = app
        self.tocsin = tocsin
        self.settings = settings
        self.limit = settings.max_body_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        length = _header(scope, b"content-length")
        if length is not None and length.strip().isdigit() and int(length) > self.limit:
            await _respond(send, 413, messages.body_too_large(self.limit), None)
            return
        if scope["method"] not in BODYLESS_METHODS:
            refusal = await self.authenticate(scope)
            if refusal is not None:
                await _respond(send, refusal.status, refusal.detail, error_headers(refusal))
                return
        await self.app(scope, self.counted(receive), send)

    def counted(self, receive: Receive) -> Receive:
        """``receive`` that raises a 413 once more than ``limit`` body bytes have arrived, and a
        408 when the body is not complete ``body_timeout_s`` after its first read (once it is,
        a wait for the client's disconnect has no deadline)."""
        seen, complete, deadline = 0, False, None
        timeout = self.settings.body_timeout_s

        async def counting() -> Message:
            nonlocal seen, complete, deadline
            if complete:
                return await receive()
            loop = asyncio.get_running_loop()
            if deadline is None:
                deadline = loop.time() + timeout
            try:
                message = await asyncio.wait_for(receive(), max(0.0, deadline - loop.time()))
            except TimeoutError:
                raise HTTPException(408, detail=messages.body_too_slow(timeout)) from None
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.limit:
                    raise HTTPException(413, detail=messages.body_too_large(self.limit))
                complete = not message.get("more_body", False)
            return message

        return counting

    async def authenticate(self, scope: Scope) -> TocsinError | None:
        """Why this request is refused before its body is read, or None."""
        path: str = scope["path"]
        if ROOT_PATH.match(path):
            if admin_token_ok(self.settings, _header(scope, b"x-admin-token")):
                return None
            return PermissionDenied(messages.ADMIN_DENIED)
        if API_PATH.match(path):
            return await self.authenticate_api(scope)
        tenant = TENANT_PATH.match(path)
        if tenant is None or not _is_uuid(tenant.group(2)):
            return None  # not a tenant route, or a malformed one the application answers
        token = _bearer(scope)
        if token is None:
            return Unauthenticated(messages.TOKEN_INVALID)
        kind, scope_id = tenant.group(1), tenant.group(2)
        try:
            await run_in_threadpool(self.tocsin.authenticate, token, scope=kind, scope_id=scope_id)
        except TocsinError as exc:  # 401, 403, or 503 while the database is unreachable
            return exc
        return None

    async def authenticate_api(self, scope: Scope) -> TocsinError | None:
        """401 for a permission route's request without a valid token (permissions: the route)."""
        token = _bearer(scope)
        try:
            principal = await run_in_threadpool(self.tocsin.verify_token, token) if token else None
        except TocsinError as exc:  # 503 while the database is unreachable
            return exc
        return Unauthenticated(messages.TOKEN_INVALID) if principal is None else None


__all__ = ["RequestGuard"]
