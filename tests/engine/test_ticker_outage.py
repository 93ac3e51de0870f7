"""A database outage under the ticker: the same rule as the worker's loop (one ``OutageLog``),
two lines and one traceback an outage, and a pause doubling from ``every_s`` up to
``backoff_max_s`` (``TOCSIN_DB_BACKOFF_MAX_S``), back to ``every_s`` once a tick goes through.
Ticks that fail for another reason are logged each time, at ``every_s``, as before."""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from datetime import UTC, datetime

import pytest

from support.outage import RecordingStop, outage_records, unavailable
from tocsin.engine.ticker import Ticker

NOW = datetime(2026, 8, 27, 5, 2, 13, tzinfo=UTC)


def test_an_outage_under_the_ticker_is_two_lines_and_a_capped_doubling_pause(
    caplog: pytest.LogCaptureFixture,
) -> None:
    calls: list[datetime] = []

    def tick(now: datetime) -> Mapping[str, int]:
        calls.append(now)
        if len(calls) <= 6:
            raise unavailable()
        return {}

    stop = RecordingStop(stop_after=9)
    caplog.set_level(logging.INFO)
    Ticker(tick=tick, every_s=1, clock=lambda: NOW, backoff_max_s=4).run(stop)

    assert stop.waits == [1, 2, 4, 4, 4, 4, 1, 1, 1]
    lines = outage_records(caplog.records)
    assert len(lines) == 2, [r.getMessage() for r in lines]
    assert lines[0].getMessage().startswith("database unavailable (")
    assert lines[0].exc_info is not None and lines[1].exc_info is None
    assert re.fullmatch(r"database back after \d+ s", lines[1].getMessage())


def test_a_tick_failing_for_another_reason_is_logged_each_time_at_its_period(
    caplog: pytest.LogCaptureFixture,
) -> None:
    def tick(now: datetime) -> Mapping[str, int]:
        raise RuntimeError("a bug")

    stop = RecordingStop(stop_after=3)
    Ticker(tick=tick, every_s=1, clock=lambda: NOW, backoff_max_s=4).run(stop)
    assert stop.waits == [1, 1, 1]
    assert [r.getMessage() for r in outage_records(caplog.records)] == ["tick failed"] * 3
