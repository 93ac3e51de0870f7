"""The background half of ``tocsin serve`` (SPEC §16): the embedded ticker keeps ticking when
its metrics observer fails, and ``Background`` starts and stops both loops."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

from api_support import NOW
from fastapi.testclient import TestClient

from runs.helpers import make_run, make_table, read_run, trigger
from support.waiting import wait_for
from tocsin.api.app import create_app
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
    wait_for("the first tick", lambda: ticks() >= 1, timeout=10, every=0.01)  # comes at once
    background.stop()
    assert ticks() == 1
    assert not any(thread.is_alive() for thread in background.threads)
    (backlog,) = metrics.tick_backlog.collect()  # the embedded ticker reports what it left
    assert [s.value for s in backlog.samples] == [0.0]
    assert background.ticker.backlog is not None and background.ticker.backlog(NOW) == 0


def test_the_lifespan_records_a_clean_stop(tocsin: Tocsin) -> None:
    app = create_app(tocsin=tocsin, run_background=True)
    assert app.state.stopped_cleanly is None
    with TestClient(app) as client:
        assert client.get("/healthz").status_code == 200
    assert app.state.stopped_cleanly is True


def test_a_background_whose_run_will_not_stop_says_so(tocsin: Tocsin) -> None:
    """A registered command that never returns cannot be interrupted; the stop gives
    up after its timeout and answers False (``tocsin serve`` then exits 1)."""
    entered, release = threading.Event(), threading.Event()

    def wedged(inputs: dict[str, Any]) -> str:
        entered.set()
        release.wait(10)
        return "late"

    tocsin.register_command("wedged", wedged)
    trg = trigger({"type": "invoke_command", "command": "wedged"})
    run = make_run(tocsin, make_table(tocsin, trg), trg)
    background = Background(tocsin, Metrics(lambda: {}))
    background.stop_timeout_s = 0.2
    background.start()
    try:
        assert entered.wait(10)
        assert background.stop() is False
        assert read_run(tocsin, run["id"])["status"] == "running"
    finally:
        release.set()
    # the command returns at last: its thread ends the run
    wait_for("the run to end", lambda: read_run(tocsin, run["id"])["status"] == "done", every=0.01)
    assert read_run(tocsin, run["id"])["status"] == "done"


def test_a_run_a_tick_makes_starts_at_once_not_a_worker_poll_later(
    tocsin: Tocsin, monkeypatch: Any
) -> None:
    """``serve``: the in-process worker, idle, waits for its poll (made 60 s here); a tick that
    made work wakes it (and the stop does too, so this test does not wait for the poll)."""
    ran = threading.Event()

    def ping(inputs: dict[str, Any]) -> str:
        ran.set()
        return "ok"

    tocsin.register_command("ping", ping)
    trg = trigger({"type": "invoke_command", "command": "ping"})
    table = make_table(tocsin, trg)
    real_tick, ticks = tocsin.tick, []

    def tick(now: datetime | None = None, **kwargs: Any) -> dict[str, int]:
        counts = real_tick(now=now, **kwargs)
        if ticks:  # every tick after the first one at start: as if it had made a run
            make_run(tocsin, table, trg)
            counts = {**counts, "runs_created": 1}
        ticks.append(now)
        return counts

    monkeypatch.setattr(tocsin, "tick", tick)
    background = Background(tocsin, Metrics(lambda: {}), worker_poll_s=60.0)
    idling, idle = threading.Event(), background._idle

    def watched(timeout: float) -> None:
        idling.set()
        idle(timeout)

    background._idle = watched  # type: ignore[method-assign]
    background.start()
    try:
        assert idling.wait(10)  # the worker's first pass found nothing: it waits its poll
        background._tick(NOW)  # the ticker's next tick, as the ticker calls it
        assert ran.wait(10), "the worker slept through the tick's run"
    finally:
        assert background.stop() is True
