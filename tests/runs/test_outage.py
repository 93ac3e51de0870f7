"""A database outage under ``tocsin worker``'s loop (``serve_worker``): at most two lines and
one traceback per outage ("database unavailable (…)" with the traceback, "database back after
N s"), passes tried again after a pause doubling from the poll interval up to
``TOCSIN_DB_BACKOFF_MAX_S``, the pause back to the poll interval once the database answers.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from dataclasses import replace
from datetime import datetime
from typing import Any

import pytest

from support.outage import CuttableProxy, RecordingStop, outage_records, unavailable
from support.waiting import wait_for
from tocsin import messages
from tocsin.engine.ticker import Ticker
from tocsin.runs.worker import serve_worker
from tocsin.service import Tocsin
from tocsin.settings import Settings
from tocsin.store.notify import WorkListener

from .helpers import LATER

BACK = re.compile(r"database back after \d+ s")


class Down:
    """A work source whose passes fail while the database is down (``down`` passes), then
    succeed."""

    def __init__(self, down: int) -> None:
        self.down = down
        self.passes = 0

    def work(self, now: Any = None, limit: Any = None, **_: Any) -> int:
        self.passes += 1
        if self.passes <= self.down:
            raise unavailable()
        return 0


def test_an_outage_is_two_lines_one_traceback_and_a_capped_doubling_pause(
    caplog: pytest.LogCaptureFixture,
) -> None:
    source, stop = Down(down=40), RecordingStop(stop_after=43)
    caplog.set_level(logging.INFO)
    serve_worker(source, stop_event=stop, poll_interval=0.5, backoff_max_s=8, clock=lambda: LATER)

    # 40 failed passes: 0.5, 1, 2, 4, then 8 s at most; then idle polls of 0.5 s again
    assert stop.waits == [0.5, 1, 2, 4] + [8] * 36 + [0.5] * 3
    lines = outage_records(caplog.records)
    assert len(lines) == 2, [r.getMessage() for r in lines]
    first, last = lines
    assert first.getMessage() == messages.database_unavailable(
        str(unavailable().__cause__).strip().splitlines()[0]
    )
    assert first.getMessage().startswith("database unavailable (")
    assert first.exc_info is not None and last.exc_info is None
    assert BACK.fullmatch(last.getMessage())


def test_two_outages_are_logged_as_two(caplog: pytest.LogCaptureFixture) -> None:
    """After the database came back, the next outage is logged again, pausing from the poll
    interval again."""

    class Twice(Down):
        def work(self, now: Any = None, limit: Any = None, **_: Any) -> int:
            self.passes += 1
            if self.passes in (1, 2, 4, 5, 6):
                raise unavailable()
            return 0

    stop = RecordingStop(stop_after=8)
    caplog.set_level(logging.INFO)
    serve_worker(Twice(0), stop_event=stop, poll_interval=0.5, backoff_max_s=8)
    assert stop.waits == [0.5, 1, 0.5, 0.5, 1, 2, 0.5, 0.5]
    messages_logged = [r.getMessage() for r in outage_records(caplog.records)]
    assert [BACK.fullmatch(m) is not None for m in messages_logged] == [False, True] * 2
    assert sum(r.exc_info is not None for r in outage_records(caplog.records)) == 2


@pytest.mark.parametrize("backend", [pytest.param("postgresql", marks=pytest.mark.pg)])
def test_a_real_outage_under_the_worker_and_the_ticker_is_two_lines(
    store_url: str, settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    """PostgreSQL through a proxy that is cut for ~1.5 s: the worker loop (with its listener)
    and the ticker of one process share the store's ``OutageLog``, as in ``tocsin serve``."""
    caplog.set_level(logging.INFO)
    with CuttableProxy(store_url) as proxy:
        tocsin = Tocsin.open(proxy.url, settings=replace(settings, db_backoff_max_s=0.2))
        ticks: list[float] = []

        def tick(now: datetime) -> Any:
            ticks.append(time.monotonic())
            return tocsin.tick(now=now)

        stop = threading.Event()
        listener = WorkListener(tocsin.store, stop)
        outage = tocsin.store.outage
        ticker = Ticker(tick=tick, every_s=0.05, outage=outage, backoff_max_s=0.2)
        threads = [
            threading.Thread(target=ticker.run, args=(stop,), daemon=True),
            threading.Thread(
                target=serve_worker,
                args=(tocsin,),
                kwargs={
                    "stop_event": stop,
                    "poll_interval": 0.05,
                    "idle": listener.wait,
                    "outage": outage,
                    "backoff_max_s": 0.2,
                },
                daemon=True,
            ),
        ]
        try:
            for thread in threads:
                thread.start()
            wait_for("two ticks", lambda: len(ticks) >= 2, timeout=10.0, every=0.01)
            proxy.cut()
            cut_at = time.monotonic()
            wait_for("the outage", lambda: outage.ongoing, timeout=10.0, every=0.01)
            time.sleep(1.5)  # the outage lasts (real time: a real server away)
            during = [t for t in ticks if t >= cut_at]
            proxy.restore()
            wait_for("the outage's end", lambda: not outage.ongoing, timeout=10.0, every=0.01)
        finally:
            stop.set()
            for thread in threads:
                thread.join(10)
            listener.close()
            tocsin.close()
    # 0.05 s ticks would be ~30 in 1.5 s; doubling up to 0.2 s, about a dozen
    assert 2 <= len(during) <= 14, len(during)
    lines = outage_records(caplog.records)
    assert len(lines) == 2, [r.getMessage() for r in lines]
    assert lines[0].getMessage().startswith("database unavailable (")
    assert lines[0].exc_info is not None and lines[1].exc_info is None
    assert BACK.fullmatch(lines[1].getMessage())
