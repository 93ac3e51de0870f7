"""``/metrics`` scrapes while the database is down: no samples for the run gauges, and the outage
logged once in the store's ``OutageLog`` (not a traceback per scrape); "back" once a scrape reads
the counts again."""

from __future__ import annotations

import re

import pytest
from prometheus_client import generate_latest

from support.outage import outage_records, unavailable
from tocsin.api.metrics import Metrics
from tocsin.store.outage import OutageLog


def test_scrapes_during_an_outage_log_it_once(caplog: pytest.LogCaptureFixture) -> None:
    down = [True]

    def count() -> dict[str, int]:
        if down[0]:
            raise unavailable()
        return {"done": 2}

    metrics = Metrics(count, OutageLog())
    for _ in range(5):
        assert b"tocsin_runs{" not in generate_latest(metrics.registry)
    down[0] = False
    assert b'tocsin_runs{status="done"} 2.0' in generate_latest(metrics.registry)
    lines = outage_records(caplog.records)
    assert len(lines) == 2, [r.getMessage() for r in lines]
    assert lines[0].getMessage().startswith("database unavailable (") and lines[0].exc_info
    assert re.fullmatch(r"database back after \d+ s", lines[1].getMessage())
