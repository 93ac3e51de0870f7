"""The background half of ``tocsin serve``: the embedded ticker and an in-process worker.

Started by the app's lifespan when ``run_background=True``; stopped on shutdown (SIGTERM):
the stop event ends the ticker's wait at once, and the worker finishes the action it is
executing before it returns, so no run is left ``running`` (SPEC §16).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from datetime import datetime

from tocsin.engine.ticker import Ticker
from tocsin.runs.worker import serve_worker
from tocsin.service import Tocsin

from .metrics import Metrics

log = logging.getLogger("tocsin.serve")

WORKER_POLL_S = 0.5
STOP_TIMEOUT_S = 60.0


class Background:
    """Two daemon threads (ticker, worker) sharing one stop event."""

    def __init__(self, tocsin: Tocsin, metrics: Metrics) -> None:
        self.tocsin = tocsin
        self.stop_event = threading.Event()
        self.ticker = Ticker(
            tick=self._tick, every_s=tocsin.settings.tick_every_s, on_tick=metrics.observe_tick
        )
        self.threads = [
            threading.Thread(target=self.ticker.run, args=(self.stop_event,), name="ticker"),
            threading.Thread(target=self._work, name="worker"),
        ]

    def _tick(self, now: datetime) -> Mapping[str, int]:
        return self.tocsin.tick(now=now)

    def _work(self) -> None:
        try:
            serve_worker(self.tocsin, stop_event=self.stop_event, poll_interval=WORKER_POLL_S)
        except Exception:
            log.exception("worker stopped by an error")

    def start(self) -> None:
        for thread in self.threads:
            thread.daemon = True
            thread.start()
        log.info("background started", extra={"tick_every_s": self.ticker.every_s})

    def stop(self) -> None:
        """Ask both loops to stop and wait for them (the worker finishes its current action)."""
        self.stop_event.set()
        for thread in self.threads:
            thread.join(STOP_TIMEOUT_S)
            if thread.is_alive():
                log.error("background thread did not stop", extra={"thread": thread.name})
        log.info("background stopped")


__all__ = ["Background"]
