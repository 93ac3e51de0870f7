"""SPEC §9.1 under real concurrency: four worker processes drain 2,000 runs from one PostgreSQL
database; every run ends done exactly once (one claim, one message)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from sqlalchemy import func, select

from tocsin.service import Tocsin
from tocsin.store.run_queries import count_runs
from tocsin.store.runs import insert_run
from tocsin.store.schema import runs

from .helpers import NOW, make_table, new_id, trigger

RUNS = 2000
WORKERS = 4
WORKER = Path(__file__).with_name("crash_worker.py")


@pytest.mark.pg
@pytest.mark.parametrize("backend", ["postgresql"])  # PostgreSQL only: overrides the matrix
def test_four_processes_drain_2000_runs_exactly_once(tocsin: Tocsin, store_url: str) -> None:
    assert tocsin.store.is_postgres
    trg = trigger({"type": "notify", "message": "$run.id"})
    table = make_table(tocsin, trg)
    with tocsin.store.begin() as tx:
        for _ in range(RUNS):
            insert_run(
                tx,
                id=new_id(),
                table_id=table["id"],
                trigger_id=trg["id"],
                record_id=None,
                source="created",
                clock=False,
                payload={},
                definition=None,
                identity=None,
                scheduled_for=None,
                now=NOW,
            )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    procs = [
        subprocess.Popen([sys.executable, str(WORKER), store_url, NOW.isoformat()], env=env)
        for _ in range(WORKERS)
    ]
    assert [p.wait(120) for p in procs] == [0] * WORKERS
    with tocsin.store.read() as tx:
        assert count_runs(tx, status="done") == RUNS
        assert count_runs(tx) == RUNS
        attempts = tx.conn.execute(select(runs.c.attempts, func.count()).group_by(runs.c.attempts))
        assert dict(attempts.all()) == {1: RUNS}  # each run claimed once, by one process
    feed = tocsin.messages(table["scope_id"], limit=1000)
    texts = [m["text"] for m in feed["items"]]
    texts += [m["text"] for m in tocsin.messages(table["scope_id"], skip=1000, limit=1000)["items"]]
    assert feed["total"] == RUNS and len(set(texts)) == RUNS  # each run notified exactly once
