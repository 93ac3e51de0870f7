"""The embedded ticker (SPEC §16, STYLE R1): one clock read per iteration, errors survive."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta

from tocsin.engine.ticker import Ticker

NOW = datetime(2026, 8, 27, 5, 2, 13, tzinfo=UTC)


class FakeClock:
    def __init__(self) -> None:
        self.reads = 0

    def __call__(self) -> datetime:
        self.reads += 1
        return NOW + timedelta(seconds=self.reads)


def test_each_iteration_reads_the_clock_once_and_ticks_at_that_instant() -> None:
    clock = FakeClock()
    seen: list[datetime] = []
    observed: list[Mapping[str, int]] = []

    def tick(now: datetime) -> Mapping[str, int]:
        seen.append(now)
        return {"runs_created": 2}

    ticker = Ticker(tick=tick, every_s=0, clock=clock, on_tick=lambda c, _d: observed.append(c))
    for _ in range(3):
        ticker.run_once()
    assert clock.reads == 3
    assert seen == [NOW + timedelta(seconds=n) for n in (1, 2, 3)]
    assert observed == [{"runs_created": 2}] * 3


def test_a_failing_tick_is_logged_and_the_loop_goes_on() -> None:
    calls: list[datetime] = []
    stop = threading.Event()

    def tick(now: datetime) -> Mapping[str, int]:
        calls.append(now)
        if len(calls) >= 3:
            stop.set()
        raise RuntimeError("database is down")

    Ticker(tick=tick, every_s=0, clock=FakeClock()).run(stop)
    assert len(calls) == 3


def test_stop_interrupts_the_wait_at_once() -> None:
    stop = threading.Event()
    ticks: list[datetime] = []
    ticker = Ticker(tick=lambda now: ticks.append(now) or {}, every_s=3600, clock=FakeClock())
    thread = threading.Thread(target=ticker.run, args=(stop,))
    thread.start()
    stop.set()
    thread.join(timeout=5)
    assert not thread.is_alive()
    assert len(ticks) <= 1
