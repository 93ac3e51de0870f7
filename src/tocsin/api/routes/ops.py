"""Operational routes: ``/metrics`` (Prometheus text format) and ``/healthz``."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

router = APIRouter(tags=["ops"])


@router.get("/metrics", response_class=Response, include_in_schema=False)
def metrics(request: Request) -> Response:
    """Tick duration, runs created, runs by status and stuck runs."""
    body = generate_latest(request.app.state.metrics.registry)
    return Response(body, media_type=CONTENT_TYPE_LATEST)


@router.get("/healthz")
def healthz() -> dict[str, str]:
    """Liveness: the process answers."""
    return {"status": "ok"}
