"""The embedded ticker: the one loop of ``tocsin serve`` that reads the clock (SPEC §16, R1).

Each iteration reads the wall clock exactly once and hands that instant to ``tick(now)``. One
tick takes at most ``table_limit`` tables: while ``backlog(now)`` says due tables were not
reached yet, the iteration ticks the next page at the same instant, for at most ``every_s``
seconds; a backlog left at the end is logged (WARNING) and reported to ``on_tick``. Then it
waits ``every_s`` seconds or until ``stop`` is set. A tick that raises is logged and the loop
goes on: the next iteration is a fresh tick (SPEC §6: a tick never waits for actions, and a
broken tick must not stop the schedule). A tick that fails because the database is down or full
is reported to the ``OutageLog`` instead (one line when the outage starts, one when it ends,
shared with the worker in ``serve``) and the next one waits a pause doubling from ``every_s``
up to ``backoff_max_s`` (``TOCSIN_DB_BACKOFF_MAX_S``).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime

from tocsin.store.outage import DEFAULT_CAP_S, Backoff, OutageLog

log = logging.getLogger("tocsin.ticker")

TickFn = Callable[[datetime], Mapping[str, int]]
TickObserver = Callable[[Mapping[str, int], float], None]
BacklogFn = Callable[[datetime], int]


def wall_clock() -> datetime:
    """The real clock, aware UTC. Only loops like this one may call it."""
    return datetime.now(UTC)


@dataclass(slots=True)
class Ticker:
    """Calls ``tick(now)`` every ``every_s`` seconds until ``stop`` is set.

    ``on_tick(counts, duration_s)`` observes each successful tick (metrics; ``counts`` summed
    over the pages, with ``backlog``); ``clock`` is injectable so tests drive the loop with fixed
    instants; ``backlog(now)`` (None: one page per iteration) counts the due tables not reached.
    ``outage`` (None: one of its own) is the store's; ``backoff_max_s`` caps the pause after a
    tick that met an outage.
    """

    tick: TickFn
    every_s: float
    clock: Callable[[], datetime] = wall_clock
    on_tick: TickObserver | None = None
    backlog: BacklogFn | None = None
    outage: OutageLog | None = None
    backoff_max_s: float = DEFAULT_CAP_S
    _pause: Backoff | None = field(default=None, init=False)  # set while ticks meet an outage

    def __post_init__(self) -> None:
        if self.outage is None:
            self.outage = OutageLog(log)

    def run_once(self) -> Mapping[str, int] | None:
        """One iteration: read the clock once, tick pages at that instant until nothing due is
        left unreached or ``every_s`` has passed; None if a tick raised."""
        now = self.clock()
        started = time.perf_counter()
        totals: dict[str, int] = {}
        left = 0
        try:
            while True:
                for key, value in self.tick(now).items():
                    totals[key] = totals.get(key, 0) + value
                left = 0 if self.backlog is None else self.backlog(now)
                if left == 0 or time.perf_counter() - started >= self.every_s:
                    break
        except Exception as exc:
            if not self._met_outage(exc):
                log.exception("tick failed", extra={"now": now.isoformat()})
            return None
        if self.outage is not None:
            self.outage.recovered("ticker")
        self._pause = None
        duration = time.perf_counter() - started
        counts = {**totals, "backlog": left}
        log.info("tick", extra={"now": now.isoformat(), "duration_s": duration, **counts})
        if left:
            log.warning("tick fell behind: %d due tables not reached within the tick period", left)
        if self.on_tick is not None:
            try:
                self.on_tick(counts, duration)
            except Exception:  # an observer (metrics) must never stop the schedule
                log.exception("tick observer failed", extra={"now": now.isoformat()})
        return counts

    def _met_outage(self, exc: Exception) -> bool:
        """Whether ``exc`` is a database outage (then reported, and the pause grows)."""
        if self.outage is None or not self.outage.failed("ticker", exc):
            return False
        if self._pause is None:
            self._pause = Backoff(self.every_s, max(self.every_s, self.backoff_max_s))
        return True

    def wait_s(self) -> float:
        """How long to wait before the next tick: ``every_s``, longer while the database is
        down or full (doubling at each failed tick, at most ``backoff_max_s``)."""
        return self.every_s if self._pause is None else self._pause.next()

    def run(self, stop: threading.Event) -> None:
        """Tick until ``stop`` is set; a stop request interrupts the wait at once."""
        while not stop.is_set():
            self.run_once()
            stop.wait(self.wait_s())


__all__ = ["BacklogFn", "TickFn", "TickObserver", "Ticker", "wall_clock"]
