"""The instants a pass stamps on what really happened in it: its ``now`` plus the monotonic time
elapsed since the pass began. A workflow step or a table run's action that took 2 s shows 2 s
between its receipt's ``started_at`` and ``ended_at``, and a test that drives time with an
explicit ``now`` still reads instants next to it (a few milliseconds later), never the wall
clock."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any, Protocol

from tocsin.core.receipts import make_receipt

PassClock = Callable[[], datetime]


class TimedReceipt(Protocol):
    """``make_receipt`` stamped with when the action started and when this is called."""

    def __call__(
        self, action_id: str | None, type: str, ok: bool, detail: object = None
    ) -> dict[str, Any]: ...


def pass_clock(now: datetime) -> PassClock:
    """``now`` advanced by the monotonic time elapsed since this call."""
    start = time.monotonic()
    return lambda: now + timedelta(seconds=time.monotonic() - start)


def timed_receipt(clock: PassClock | None, now: datetime) -> TimedReceipt:
    """An action starts now (``clock()``): its receipt, made when it ended, says both. Without
    a clock both are ``now``."""
    clock = clock or (lambda: now)
    started = clock()

    def receipt(
        action_id: str | None, type: str, ok: bool, detail: object = None
    ) -> dict[str, Any]:
        return make_receipt(action_id, type, ok, detail, started_at=started, ended_at=clock())

    return receipt


__all__ = ["PassClock", "TimedReceipt", "pass_clock", "timed_receipt"]
