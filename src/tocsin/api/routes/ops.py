"""Operational routes: ``/metrics`` (Prometheus text format), ``/healthz`` and ``/readyz``.

``/metrics`` answers 404 when ``TOCSIN_METRICS_PORT`` serves it on a port of its own, and takes
``Authorization: Bearer <TOCSIN_METRICS_TOKEN>`` when that is set (401 otherwise).
"""

from __future__ import annotations

import hmac

from fastapi import APIRouter, Request, Response
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from tocsin import messages
from tocsin.errors import NotFound
from tocsin.service.auth import Unauthenticated
from tocsin.settings import Settings

from ..deps import Credentials, TocsinDep

router = APIRouter(tags=["ops"])


@router.get("/metrics", response_class=Response, include_in_schema=False)
def metrics(request: Request, creds: Credentials) -> Response:
    """Tick duration, runs created, runs by status and stuck runs."""
    settings: Settings = request.app.state.settings
    if settings.metrics_port is not None:
        raise NotFound(messages.METRICS_ELSEWHERE)
    expected = settings.metrics_token
    if expected is not None:
        given = creds.credentials if creds is not None else ""
        if not hmac.compare_digest(given.encode("utf-8"), expected.encode("utf-8")):
            raise Unauthenticated(messages.METRICS_TOKEN_INVALID)
    body = generate_latest(request.app.state.metrics.registry)
    return Response(body, media_type=CONTENT_TYPE_LATEST)


@router.get("/healthz")
def healthz() -> dict[str, str]:
    """Liveness: the process answers."""
    return {"status": "ok"}


@router.get("/readyz", responses={503: {"description": "the database does not answer"}})
def readyz(tocsin: TocsinDep) -> dict[str, str]:
    """Readiness: the database answers a query (503 with ``Retry-After`` while it does not)."""
    tocsin.ping()
    return {"status": "ok"}
