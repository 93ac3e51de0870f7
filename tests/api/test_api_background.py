"""The background half of ``tocsin serve`` (SPEC §16): the embedded ticker keeps ticking when
its metrics observer fails, and ``Background`` starts and stops both loops."""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from datetime import datetime, timedelta

from api_support import NOW

from tocsin.api.background import Background
from tocsin.api.metrics import Metrics
from tocsin.engine.ticker import Ticker
from tocsin.service import Tocsin


def test_a_failing_tick_observer_is_logged_and_the_ticker_goes_on() -> None:
    """Metrics observe each tick; if observing raises, the ticker thread must not die with it."""
    stop = threading.Event()
    ticks: list[datetime] = []

    def tick(now: datetime) -> Mapping[str, int]:
        ticks.append(now)
        if len(ticks) >= 3:
            stop.set()
        return {"runs_created": 1}

    def observe(_counts: Mapping[str, int], _duration: float) -> None:
        raise ValueError("registry is broken")

    reads = iter(NOW + timedelta(seconds=n) for n in range(100))
    Ticker(tick=tick, every_s=0, clock=lambda: next(reads), on_tick=observe).run(stop)
    assert len(ticks) == 3


def test_background_ticks_at_start_and_stops_both_threads(tocsin: Tocsin) -> None:
    metrics = Metrics(lambda: {})
    background = Background(tocsin, metrics)  # ticks every 30 s (the default)

    def ticks() -> float:
        (family,) = metrics.tick_duration.collect()
        return next(s.value for s in family.samples if s.name.endswith("_count"))

    background.start()
    deadline = time.monotonic() + 10
    while ticks() < 1 and time.monotonic() < deadline:  # the first tick comes at once
        time.sleep(0.01)
    background.stop()
    assert ticks() == 1
    assert not any(thread.is_alive() for thread in background.threads)
