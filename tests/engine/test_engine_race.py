"""Racing ticks: each identity is claimed exactly once, and nobody waits (SPEC §6, DESIGN §6).

Four threads, each with its own facade (own connection pool), tick the same database at the
same ``now``. On PostgreSQL the tables are claimed with ``FOR UPDATE SKIP LOCKED`` and the ledger
key is the fence; on SQLite ``BEGIN IMMEDIATE`` serialises the writers.
"""

from __future__ import annotations

import threading
from collections import Counter
from datetime import datetime, timedelta
from typing import Any

from engine_support import NOW, date_trigger, interval, make_table, runs_of

from tocsin.service import Tocsin
from tocsin.settings import Settings

TICKERS = 4
TABLES = 6
DUE_ROWS = 15


def _race(url: str, settings: Settings, now: datetime = NOW) -> list[dict[str, int]]:
    facades = [Tocsin.open(url, settings=settings) for _ in range(TICKERS)]
    barrier = threading.Barrier(TICKERS)
    results: list[dict[str, int]] = []
    errors: list[BaseException] = []

    def run(t: Tocsin) -> None:
        try:
            barrier.wait(timeout=30)
            for _ in range(2):
                results.append(t.tick(now=now, record_limit=5))
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(t,)) for t in facades]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    for t in facades:
        t.close()
    assert not errors, errors
    assert not any(thread.is_alive() for thread in threads)  # nobody blocked for good
    return results


def test_racing_ticks_create_each_identity_once(
    tocsin: Tocsin, store_url: str, settings: Settings
) -> None:
    tables = [make_table(tocsin) for _ in range(TABLES)]
    for table_id in tables:
        tocsin.insert_records(table_id, [{"Due": "2026-08-27T01:00"}] * DUE_ROWS, now=NOW)
        tocsin.set_triggers(table_id, [date_trigger(), interval(3600)], now=NOW)

    results = _race(store_url, settings)
    # a ticker skips tables another one holds, and a page with due rows ends a table's pass:
    # finish the backlog sequentially, then every identity must exist exactly once
    created = sum(r["runs_created"] for r in results)
    for _ in range(DUE_ROWS):
        created += tocsin.tick(now=NOW, record_limit=5)["runs_created"]

    expected = TABLES * (DUE_ROWS + 1)
    assert created == expected
    runs: list[dict[str, Any]] = [run for t in tables for run in runs_of(tocsin, t)]
    assert len(runs) == expected
    identities = Counter((r["trigger_id"], r["identity"]) for r in runs)
    assert set(identities.values()) == {1}


def test_racing_ticks_over_time_keep_one_active_clock_run(
    tocsin: Tocsin, store_url: str, settings: Settings
) -> None:
    table_id = make_table(tocsin)
    tocsin.set_triggers(table_id, [interval(60)], now=NOW)
    for minute in range(3):
        _race(store_url, settings, NOW + timedelta(minutes=minute))
    assert len(runs_of(tocsin, table_id)) == 1  # still pending: no later window queued
