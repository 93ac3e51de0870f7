"""The background half of ``tocsin serve``: the embedded ticker and an in-process worker.

Started by the app's lifespan when ``run_background=True``; stopped on shutdown (SIGTERM):
the stop event ends the ticker's wait at once; the worker claims nothing more, and each run in
flight finishes its current action (an outbound one ends by its deadline, at most
``TOCSIN_ACTION_TIMEOUT_MAX_S``) and goes back to ``pending`` with its receipts, so no run is
left ``running`` (SPEC §16). :meth:`Background.stop` answers whether that held; the CLI exits
non-zero when it did not.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from datetime import datetime

from tocsin.engine.ticker import Ticker
from tocsin.runs.worker import STOP_GRACE_S, serve_worker
from tocsin.service import Tocsin
from tocsin.store.notify import WorkListener

from .metrics import Metrics

log = logging.getLogger("tocsin.serve")

WORKER_POLL_S = 0.5
# tick counts that are not work for the worker (every other count is: runs created, schedules
# and lanes fired, runs requeued)
_NOT_WORK = frozenset({"tables_scanned", "tables_with_schedules"})


class Background:
    """Two daemon threads (ticker, worker) sharing one stop event."""

    def __init__(
        self, tocsin: Tocsin, metrics: Metrics, *, worker_poll_s: float = WORKER_POLL_S
    ) -> None:
        """``worker_poll_s``: the idle worker's longest wait before it looks for runs again
        (a tick that made work, or the stop, ends the wait at once)."""
        self.tocsin = tocsin
        self.worker_poll_s = worker_poll_s
        self.stop_event = threading.Event()
        self.wake = threading.Event()  # a tick made work: the worker's idle wait ends at once
        # PostgreSQL: so does work another process made (another replica's tick, `scheduler`);
        # not on SQLite, where every commit (each API write) would wake it
        pg = tocsin.store.is_postgres
        self.listener = WorkListener(tocsin.store, self.wake) if pg else None
        self.stop_timeout_s = tocsin.settings.action_timeout_max_s + STOP_GRACE_S
        self.worker_clean = False
        self.ticker = Ticker(
            tick=self._tick,
            every_s=tocsin.settings.tick_every_s,
            on_tick=metrics.observe_tick,
            backlog=lambda now: tocsin.tick_backlog(now=now),
            outage=tocsin.store.outage,  # one outage, two lines, whichever loop meets it
            backoff_max_s=tocsin.settings.db_backoff_max_s,
        )
        self.threads = [
            threading.Thread(target=self.ticker.run, args=(self.stop_event,), name="ticker"),
            threading.Thread(target=self._work, name="worker"),
        ]

    def _tick(self, now: datetime) -> Mapping[str, int]:
        counts = self.tocsin.tick(now=now)
        if any(n for key, n in counts.items() if key not in _NOT_WORK):
            self.wake.set()
        return counts

    def _idle(self, timeout: float) -> None:
        """The worker's wait after a pass that started nothing: until a tick made work (or the
        stop, or, on PostgreSQL, another process), at most ``timeout``: runs a tick creates
        start at once, not a poll later."""
        if self.listener is not None:
            self.listener.wait(timeout)
        else:
            self.wake.wait(timeout)
        self.wake.clear()

    def _work(self) -> None:
        try:
            self.worker_clean = serve_worker(
                self.tocsin,
                stop_event=self.stop_event,
                poll_interval=self.worker_poll_s,
                concurrency=self.tocsin.settings.worker_concurrency,
                per_scope=self.tocsin.settings.per_scope_cap,
                stop_timeout_s=self.stop_timeout_s,
                idle=self._idle,
                outage=self.tocsin.store.outage,
                backoff_max_s=self.tocsin.settings.db_backoff_max_s,
            )
        except Exception:
            log.exception("worker stopped by an error")
        finally:
            if self.listener is not None:
                self.listener.close()

    def start(self) -> None:
        for thread in self.threads:
            thread.daemon = True
            thread.start()
        log.info("background started", extra={"tick_every_s": self.ticker.every_s})

    def stop(self) -> bool:
        """Ask both loops to stop and wait for them; True when both ended and no run they
        held is left ``running``."""
        self.stop_event.set()
        self.wake.set()
        clean = True
        for thread in self.threads:
            thread.join(self.stop_timeout_s + STOP_GRACE_S)
            if thread.is_alive():
                log.error("background thread did not stop", extra={"thread_name": thread.name})
                clean = False
        clean = clean and self.worker_clean
        if clean:
            log.info("background stopped")
        else:
            log.error("background stopped uncleanly: a run may be left running")
        return clean


__all__ = ["Background"]
