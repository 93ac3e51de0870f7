"""Polling for a condition another thread or process brings about (never for the scheduler: tests
drive time with ``now=``)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

import httpx

T = TypeVar("T")

WAIT_S = 45.0


def wait_for(
    what: str, probe: Callable[[], T], *, timeout: float = WAIT_S, every: float = 0.2
) -> T:
    """Call ``probe`` every ``every`` seconds until it returns something truthy, and return that;
    a server not answering yet (``httpx.TransportError``) counts as not yet. After ``timeout``
    seconds: ``AssertionError`` naming ``what``."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            value = probe()
        except httpx.TransportError:
            pass
        else:
            if value:
                return value
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(every)
