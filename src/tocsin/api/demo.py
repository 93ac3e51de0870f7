"""Demo-only routes (mounted by ``tocsin demo``): a local echo endpoint for the demo webhook."""

from __future__ import annotations

import logging
from typing import Any

from fastapi import APIRouter, Request

log = logging.getLogger("tocsin.demo")

router = APIRouter(prefix="/demo", tags=["demo"])


@router.post("/echo")
async def echo(request: Request) -> dict[str, Any]:
    """Answer 200 with what was posted, so the demo's interval webhook succeeds."""
    body = await request.body()
    request.app.state.demo_echoes = getattr(request.app.state, "demo_echoes", 0) + 1
    log.info("demo echo", extra={"bytes": len(body)})
    return {"ok": True, "received_bytes": len(body)}


@router.get("/echo")
def echo_count(request: Request) -> dict[str, int]:
    """How many webhook calls the echo endpoint has received."""
    return {"received": getattr(request.app.state, "demo_echoes", 0)}
