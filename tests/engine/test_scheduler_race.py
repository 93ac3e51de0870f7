"""SPEC §12 "several hosts never double-fire", for real: four ``tocsin scheduler`` processes on one
PostgreSQL database, 500 schedules firing every minute over 30 simulated minutes. Time is driven
through ``--clock-stdin`` (every process gets the same instant, at once); nothing sleeps."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import func, select

from tocsin.service import Tocsin
from tocsin.store.schema import occurrence_ledger, schedule_fires
from tocsin.store.workflow_runs import count_runs
from workflows.race_app import SCHEDULES

PROCESSES = 4
MINUTES = 30
START = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)
TESTS = Path(__file__).resolve().parents[1]
SCHEDULER = "from tocsin.cli import main; main()"


def _spawn(store_url: str) -> subprocess.Popen[str]:
    env = {
        **os.environ,
        "TOCSIN_DATABASE_URL": store_url,
        "PYTHONPATH": os.pathsep.join([str(TESTS), *sys.path]),
    }
    env.pop("TOCSIN_APP", None)
    args = [sys.executable, "-c", SCHEDULER, "scheduler", "--clock-stdin"]
    args += ["--app", "workflows.race_app:WORKFLOWS"]
    return subprocess.Popen(
        args,
        env=env,
        cwd=TESTS,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        bufsize=1,
    )


def _tick_all(procs: list[subprocess.Popen[str]], at: datetime) -> list[int]:
    for proc in procs:
        assert proc.stdin is not None
        proc.stdin.write(at.isoformat() + "\n")
        proc.stdin.flush()
    fired = []
    for proc in procs:
        assert proc.stdout is not None
        counts = json.loads(proc.stdout.readline())
        assert "error" not in counts, counts
        fired.append(int(counts["schedules_fired"]))
    return fired


@pytest.mark.pg
@pytest.mark.slow
@pytest.mark.parametrize("backend", ["postgresql"])  # PostgreSQL only: overrides the matrix
def test_four_schedulers_fire_every_schedule_minute_exactly_once(
    tocsin: Tocsin, store_url: str
) -> None:
    procs = [_spawn(store_url) for _ in range(PROCESSES)]
    try:
        assert _tick_all(procs, START) == [0] * PROCESSES  # the first instant syncs (concurrently)
        per_process = [0] * PROCESSES
        for minute in range(1, MINUTES + 1):
            fired = _tick_all(procs, START + timedelta(minutes=minute))
            assert sum(fired) == SCHEDULES, (minute, fired)
            per_process = [a + b for a, b in zip(per_process, fired, strict=True)]
    finally:
        for proc in procs:
            assert proc.stdin is not None
            proc.stdin.close()
        codes = [proc.wait(60) for proc in procs]
        for proc in procs:
            assert proc.stdout is not None
            proc.stdout.close()
    assert codes == [0] * PROCESSES
    assert sum(per_process) == SCHEDULES * MINUTES
    with tocsin.store.read() as tx:
        pairs = select(schedule_fires.c.schedule_id, schedule_fires.c.scheduled_for).distinct()
        distinct = tx.conn.execute(select(func.count()).select_from(pairs.subquery())).scalar()
        total = tx.conn.execute(select(func.count()).select_from(schedule_fires)).scalar()
        runs = count_runs(tx)
        claims = tx.conn.execute(
            select(func.count()).where(occurrence_ledger.c.table_id == "workflow")
        ).scalar()
        minutes = tx.conn.execute(
            select(schedule_fires.c.scheduled_for).distinct().order_by("scheduled_for")
        ).scalars()
        expected = [START + timedelta(minutes=m) for m in range(1, MINUTES + 1)]
        assert list(minutes) == expected
    assert distinct == total == runs == claims == SCHEDULES * MINUTES
    assert tocsin.schedules.list(limit=1)["total"] == SCHEDULES
