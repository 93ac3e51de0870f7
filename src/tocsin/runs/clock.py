"""The instants a pass stamps on what really happened in it: its ``now`` plus the monotonic time
elapsed since the pass began. A step that took 2 s shows 2 s between its receipt's
``started_at`` and ``ended_at``, and a test that drives time with an explicit ``now`` still
reads instants next to it (a few milliseconds later), never the wall clock."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import datetime, timedelta

PassClock = Callable[[], datetime]


def pass_clock(now: datetime) -> PassClock:
    """``now`` advanced by the monotonic time elapsed since this call."""
    start = time.monotonic()
    return lambda: now + timedelta(seconds=time.monotonic() - start)


__all__ = ["PassClock", "pass_clock"]
