"""Racing tick *processes* on PostgreSQL (DESIGN §6) and on a SQLite file, in
batches of 8 tables (``tick.BATCH_TABLES``): several batches per tick, other processes' commits
between them.

Eight processes tick the same database at the same instants for 50 rounds over 200 tables with
mixed triggers (interval, cron, daily, date_column_reached), the clock advancing one minute per
round; between rounds the runs end ``done`` so the clock triggers fire again. Afterwards the
number of runs equals the number of distinct identities, no identity has two runs, and the
total is exactly what one sequential scheduler would have created.
"""

from __future__ import annotations

from collections import Counter
from datetime import datetime, timedelta
from typing import Any

import pytest
from engine_support import NOW, clock_trigger, date_trigger, interval, make_table, minutes
from sqlalchemy import select, update

from support.forkserver import FORKSERVER
from tocsin.engine import tick
from tocsin.service import Tocsin
from tocsin.settings import Settings
from tocsin.store.schema import runs

PROCESSES = 8
ROUNDS = 50
TABLES = 200
BARRIER_TIMEOUT_S = 120
# runs per table of each flavour (i % 4) over the 50 rounds, see _setup
EXPECTED = {0: 50 + 5, 1: 24, 2: 2, 3: 5}


def tick_rounds(url: str, barrier: Any, errors: Any) -> None:
    """One ticker process: tick at round r's instant (batches of 8 tables), then wait for the
    runs to be finished."""
    tick.BATCH_TABLES = 8
    t = Tocsin.open(url, settings=Settings(database_url=url))
    try:
        for r in range(ROUNDS):
            barrier.wait(BARRIER_TIMEOUT_S)
            t.tick(now=NOW + minutes(r), table_limit=TABLES, record_limit=50)
            barrier.wait(BARRIER_TIMEOUT_S)
    except BaseException as exc:
        errors.put(repr(exc))
        barrier.abort()
        raise
    finally:
        t.close()


def _setup(t: Tocsin) -> None:
    """200 tables; flavour i % 4: interval 60 s + a date trigger, cron, two dailies, dates."""
    for i in range(TABLES):
        table_id = make_table(t)
        due = [{"Due": (NOW + minutes(10 * k)).strftime("%Y-%m-%dT%H:%M")} for k in range(5)]
        flavour = i % 4
        if flavour in (0, 3):
            t.insert_records(table_id, due, now=NOW)
        triggers = {
            0: [interval(60), date_trigger()],
            1: [clock_trigger({"type": "cron", "expression": "*/2 * * * *"})],
            2: [
                clock_trigger({"type": "daily", "at": "01:00"}),
                clock_trigger({"type": "daily", "at": "05:30"}),
            ],
            3: [date_trigger(offset=-5)],
        }[flavour]
        t.set_triggers(table_id, triggers, now=NOW)


def _finish_pending(t: Tocsin, now: datetime) -> None:
    with t.store.begin() as tx:
        stmt = update(runs).where(runs.c.status == "pending").values(status="done", updated_at=now)
        tx.conn.execute(stmt)


@pytest.mark.slow
@pytest.mark.parametrize(
    "backend", ["sqlite", pytest.param("postgresql", marks=pytest.mark.pg)], indirect=True
)
def test_eight_processes_tick_fifty_rounds_and_each_identity_runs_once(
    tocsin: Tocsin, store_url: str, backend: str
) -> None:
    _setup(tocsin)
    ctx = FORKSERVER  # separate processes, forked from one that imported tocsin already
    barrier, errors = ctx.Barrier(PROCESSES + 1), ctx.Queue()
    procs = [
        ctx.Process(target=tick_rounds, args=(store_url, barrier, errors)) for _ in range(PROCESSES)
    ]
    for proc in procs:
        proc.start()
    try:
        for r in range(ROUNDS):
            barrier.wait(BARRIER_TIMEOUT_S)  # go: everyone ticks at NOW + r minutes
            barrier.wait(BARRIER_TIMEOUT_S)  # all ticked
            _finish_pending(tocsin, NOW + minutes(r) + timedelta(seconds=30))
    finally:
        for proc in procs:
            proc.join(timeout=BARRIER_TIMEOUT_S)
    assert errors.empty(), errors.get()
    assert [proc.exitcode for proc in procs] == [0] * PROCESSES

    with tocsin.store.read() as tx:
        rows = tx.conn.execute(select(runs.c.trigger_id, runs.c.identity)).all()
    identities = Counter((trigger_id, identity) for trigger_id, identity in rows)
    assert len(rows) == len(identities)
    assert set(identities.values()) == {1}
    assert len(rows) == sum(EXPECTED[i % 4] for i in range(TABLES))
