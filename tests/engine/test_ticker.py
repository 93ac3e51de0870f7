"""The embedded ticker (SPEC §16, STYLE R1): one clock read per iteration, errors survive."""

from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import update

from tocsin.engine.ticker import Ticker
from tocsin.service import Tocsin
from tocsin.settings import Settings
from tocsin.store.schema import runs

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
    assert observed == [{"runs_created": 2, "backlog": 0}] * 3


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


def test_an_iteration_ticks_pages_at_one_instant_until_no_backlog_is_left() -> None:
    """One tick takes at most ``table_limit`` tables; the iteration keeps ticking at
    the same instant while due tables were not reached, and sums the counts."""
    seen: list[datetime] = []
    left = iter([2, 1, 0])
    observed: list[Mapping[str, int]] = []

    def tick(now: datetime) -> Mapping[str, int]:
        seen.append(now)
        return {"tables_scanned": 200, "runs_created": 3}

    ticker = Ticker(
        tick=tick,
        every_s=30,
        clock=FakeClock(),
        backlog=lambda now: next(left),
        on_tick=lambda c, _d: observed.append(c),
    )
    ticker.run_once()
    assert seen == [NOW + timedelta(seconds=1)] * 3
    assert observed == [{"tables_scanned": 600, "runs_created": 9, "backlog": 0}]


def test_a_backlog_left_at_the_end_of_the_period_is_logged_and_reported(
    caplog: pytest.LogCaptureFixture,
) -> None:
    observed: list[Mapping[str, int]] = []
    ticker = Ticker(
        tick=lambda now: {"tables_scanned": 200},
        every_s=0,  # the period is over after the first page
        clock=FakeClock(),
        backlog=lambda now: 1800,
        on_tick=lambda c, _d: observed.append(c),
    )
    with caplog.at_level(logging.WARNING, logger="tocsin.ticker"):
        ticker.run_once()
    assert observed == [{"tables_scanned": 200, "backlog": 1800}]
    assert "1800 due tables not reached" in caplog.text


@pytest.mark.slow
def test_two_thousand_one_minute_tables_keep_up_at_the_default_period(tmp_path: Path) -> None:
    """The bounded tick keeps up: 2,000 tables on one-minute intervals, the default 30 s period,
    one iteration per period: every window fires (none coalesced away), minute after minute."""
    url = f"sqlite:///{tmp_path}/tocsin.db"
    t = Tocsin.open(url, settings=Settings(database_url=url))
    try:
        every_minute = {"on": "schedule", "schedule": {"type": "interval", "every_seconds": 60}}
        for i in range(2000):
            room = str(uuid.uuid4())
            table = t.create_table("chatroom", room, f"T{i}", {"Due": "datetime"}, now=NOW)
            note = {"type": "notify", "chatroom_id": room, "message": "x"}
            t.set_triggers(table["id"], [{**every_minute, "actions": [note]}], now=NOW)
        assert t.settings.tick_every_s == 30
        for minute in (1, 2):
            at = NOW + timedelta(minutes=minute)
            ticker = Ticker(
                tick=lambda now: t.tick(now=now),
                every_s=t.settings.tick_every_s,
                clock=lambda at=at: at,  # type: ignore[misc]
                backlog=lambda now: t.tick_backlog(now=now),
            )
            counts = ticker.run_once()
            assert counts is not None
            assert (counts["runs_created"], counts["backlog"]) == (2000, 0)
            with t.store.begin() as tx:  # the runs end, so the next window may fire
                tx.conn.execute(update(runs).values(status="done"))
    finally:
        t.close()
