"""A locked table meets each pool's timeouts (``tocsin.store.pools``; settings
``TOCSIN_{API,WORKER,TICKER}_{LOCK,STATEMENT}_TIMEOUT_S``): a run's action that waits past the
worker's ``lock_timeout`` is retried in place (SPEC §9.5), a tick skips the locked table and
answers its counts (SPEC §6). PostgreSQL: another session holds
``LOCK TABLE records IN ACCESS EXCLUSIVE MODE``. SQLite has no such locks: every role shares
one engine with its busy timeout, as before.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg
import pytest

from tocsin.service import Tocsin
from tocsin.settings import Settings
from tocsin.store import pools
from tocsin.store.engine import SQLITE_BUSY_TIMEOUT_MS

pg_only = pytest.mark.parametrize("backend", [pytest.param("postgresql", marks=pytest.mark.pg)])

NOW = datetime(2026, 8, 27, 5, 2, 13, tzinfo=UTC)
CHATROOM = str(uuid.uuid4())
LOCK_TIMEOUT_S = 0.3
SAFETY_S = 4.0  # the lock goes by itself after this long (a test that fails does not hang)


@pytest.fixture
def settings(settings: Settings) -> Settings:
    """Short lock timeouts for the worker and the ticker (the API keeps its default)."""
    return replace(settings, worker_lock_timeout_s=LOCK_TIMEOUT_S, ticker_lock_timeout_s=0.5)


class RecordsLock:
    """Another session holding ``LOCK TABLE records IN ACCESS EXCLUSIVE MODE`` in the test's
    schema until :meth:`release` (at the latest after ``SAFETY_S``)."""

    def __init__(self, store_url: str) -> None:
        self.conn = psycopg.connect(store_url, connect_timeout=5)  # the test's schema
        self.conn.execute("LOCK TABLE records IN ACCESS EXCLUSIVE MODE")
        self.timer = threading.Timer(SAFETY_S, self.release)
        self.timer.start()

    def release(self) -> None:
        self.conn.rollback()

    def close(self) -> None:
        self.timer.cancel()
        self.conn.close()


@pytest.fixture
def locked(store_url: str) -> Iterator[Any]:
    holders: list[RecordsLock] = []

    def lock() -> RecordsLock:
        holders.append(RecordsLock(store_url))
        return holders[-1]

    yield lock
    for holder in holders:
        holder.close()


def _table(t: Tocsin, columns: dict[str, str], triggers: list[dict[str, Any]]) -> str:
    table_id = str(t.create_table("chatroom", CHATROOM, "T", columns, now=NOW)["id"])
    t.set_triggers(table_id, triggers, now=NOW)
    return table_id


def _interval(actions: list[dict[str, Any]]) -> dict[str, Any]:
    schedule = {"type": "interval", "every_seconds": 3600}
    return {"name": "clock", "on": "schedule", "schedule": schedule, "actions": actions}


CREATE = [{"id": "make", "type": "create_record", "values": {"Title": "made"}}]


@pg_only
def test_a_run_that_meets_the_lock_timeout_is_retried_in_place_and_done(
    tocsin: Tocsin, locked: Any
) -> None:
    table_id = _table(tocsin, {"Title": "text"}, [_interval(CREATE)])
    assert tocsin.tick(now=NOW)["runs_created"] == 1
    lock = locked()
    sleeps: list[float] = []

    def sleep(seconds: float) -> None:  # the backoff between two attempts: the lock goes
        sleeps.append(seconds)
        lock.release()

    tocsin.configure_retries(sleep=sleep, jitter=lambda _low, high: high)
    started = time.monotonic()
    assert tocsin.work(now=NOW) == 1
    assert time.monotonic() - started < SAFETY_S - 1  # it did not wait for the lock to go
    assert len(sleeps) == 1  # one lock timeout, retried in place
    [run] = tocsin.list_runs(table_id, now=NOW)["items"]
    assert run["status"] == "done", run
    assert tocsin.list_records(table_id)["total"] == 1


@pg_only
def test_a_run_whose_lock_outlives_its_attempts_fails_with_the_conflict(
    tocsin: Tocsin, locked: Any
) -> None:
    table_id = _table(tocsin, {"Title": "text"}, [_interval(CREATE)])
    assert tocsin.tick(now=NOW)["runs_created"] == 1
    sleeps: list[float] = []
    tocsin.configure_retries(sleep=sleeps.append, jitter=lambda _low, high: high)
    locked()
    started = time.monotonic()
    assert tocsin.work(now=NOW) == 1
    assert time.monotonic() - started < SAFETY_S - 1
    assert len(sleeps) == 2  # three attempts in all (SPEC §9.5), then failed
    [run] = tocsin.list_runs(table_id, now=NOW)["items"]
    assert run["status"] == "failed", run
    assert "lock timeout" in run["error"]


@pg_only
def test_a_tick_skips_a_locked_table_and_answers_its_counts(tocsin: Tocsin, locked: Any) -> None:
    dated = _table(
        tocsin,
        {"Due": "datetime"},
        [
            {
                "name": "due",
                "on": "schedule",
                "schedule": {"type": "date_column_reached", "column": "Due"},
                "actions": [{"type": "notify", "message": "due"}],
            }
        ],
    )
    tocsin.insert_record(dated, {"Due": "2026-08-27T01:00"}, now=NOW)
    clock = _table(tocsin, {"Title": "text"}, [_interval([{"type": "notify", "message": "x"}])])
    lock = locked()
    started = time.monotonic()
    counts = tocsin.tick(now=NOW)
    assert time.monotonic() - started < SAFETY_S - 1  # it did not wait for the lock to go
    # the clock table does not read records: it fires; the dated one is skipped
    assert (counts["tables_scanned"], counts["runs_created"]) == (1, 1)
    assert len(tocsin.list_runs(clock, now=NOW)["items"]) == 1
    lock.release()
    again = tocsin.tick(now=NOW + timedelta(minutes=1))  # the next tick takes it
    assert (again["tables_scanned"], again["runs_created"]) == (1, 1)
    assert len(tocsin.list_runs(dated, now=NOW)["items"]) == 1


@pg_only
def test_each_role_has_its_pool_and_timeouts(tocsin: Tocsin) -> None:
    seen = {}
    for role in pools.ROLES:
        with pools.bound(role), tocsin.store.read() as tx:
            sql = "SELECT current_setting('lock_timeout'), current_setting('statement_timeout')"
            seen[role] = tuple(tx.conn.exec_driver_sql(sql).one())
        assert (
            tocsin.store.engines[role].pool.size()
            == {  # type: ignore[attr-defined]
                "api": 10,
                "worker": 10,
                "ticker": 3,
            }[role]
        )
    assert seen == {"api": ("2s", "10s"), "worker": ("300ms", "2min"), "ticker": ("500ms", "2min")}


def test_sqlite_keeps_one_engine_and_its_busy_timeout(tmp_path: Any) -> None:
    """The pool settings are PostgreSQL's: on SQLite every role shares one engine, whose
    writers wait for the write lock up to the busy timeout, as before."""
    url = f"sqlite:///{tmp_path / 'one.db'}"
    opened = Tocsin.open(url, settings=Settings(api_pool_size=1, api_lock_timeout_s=0.001))
    try:
        engines = set(map(id, opened.store.engines.values()))
        assert engines == {id(opened.store.engine)}
        for role in pools.ROLES:
            with pools.bound(role), opened.store.read() as tx:
                busy = tx.conn.exec_driver_sql("PRAGMA busy_timeout").scalar()
            assert busy == SQLITE_BUSY_TIMEOUT_MS
    finally:
        opened.close()
