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

from tocsin.core.config.receipts import make_receipt

PassClock = Callable[[], datetime]


class TimedReceipt(Protocol):
    """``make_receipt`` stamped with when the action started and when this is called."""

    def __call__(
        self, action_id: str | None, type: str, ok: bool, detail: object = None
    ) -> dict[str, Any]: ...


class Stopwatch:
    """``now`` advanced by the monotonic time elapsed since it was made, to the millisecond.

    Called, the instant; :meth:`iso`, the same as ISO text. Readings within one millisecond share
    one instant and one text: a batch of fast steps formats a few strings, not two per step
    (formatting costs about ten times reading the monotonic clock). Safe across the threads of
    a parallel stage: the reading is one tuple, replaced whole."""

    __slots__ = ("_last", "_start", "now")

    def __init__(self, now: datetime) -> None:
        self.now = now
        self._start = time.monotonic()
        self._last: tuple[int, datetime, str | None] = (0, now, None)

    def _read(self) -> tuple[int, datetime, str | None]:
        ms = int((time.monotonic() - self._start) * 1000)
        last = self._last
        if last[0] != ms:
            last = self._last = (ms, self.now + timedelta(milliseconds=ms), None)
        return last

    def __call__(self) -> datetime:
        return self._read()[1]

    def iso(self) -> str:
        ms, at, text = self._read()
        if text is None:
            text = at.isoformat()
            self._last = (ms, at, text)
        return text


def elapsed_reader() -> Callable[[], float]:
    """Seconds elapsed since this call, read from the monotonic clock (a step's or a run's time
    limit: an execution budget, not scheduling time)."""
    start = time.monotonic()
    return lambda: time.monotonic() - start


def pass_clock(now: datetime) -> Stopwatch:
    """``now`` advanced by the monotonic time elapsed since this call (:class:`Stopwatch`)."""
    return Stopwatch(now)


def iso_reader(clock: PassClock) -> Callable[[], str]:
    """``clock()`` as ISO text: a :class:`Stopwatch`'s own (shared within a millisecond)."""
    if isinstance(clock, Stopwatch):
        return clock.iso
    return lambda: clock().isoformat()


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


__all__ = [
    "PassClock",
    "Stopwatch",
    "TimedReceipt",
    "elapsed_reader",
    "iso_reader",
    "pass_clock",
    "timed_receipt",
]
