"""What compound triggers cost the paths they touch, as ratios against a baseline
measured in the same process on the same database.

Run: ``.venv/bin/python bench/compound_bench.py [--backend sqlite|postgresql|both]
[--writes N] [--ticks N]``.

(1) record updates (``update_record``): the event statement (``INSERT … SELECT WHERE EXISTS``
    against the schedules' ``trigger_keys``) stubbed out (baseline) and real with nobody
    listening, in five interleaved rounds (medians); then real with a schedule listening (an
    event row per write).
(2) an idle tick (nothing due, no events, 200 compound schedules): the whole ``tick`` vs its
    compound pass alone (``fire_trigger_schedules``), medians.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
import uuid
import warnings
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import psycopg

from tocsin import AnyOf, Cron, Schedule, TableUpdated, step, workflow
from tocsin.engine.trees import fire_trigger_schedules
from tocsin.service import Tocsin
from tocsin.store import trigger_events as store_events

NOW = datetime(2026, 3, 2, 8, 0, tzinfo=UTC)


def _sqlite(writes: int, ticks: int) -> None:
    """One run on a SQLite file in a temporary directory, removed afterwards."""
    with tempfile.TemporaryDirectory() as folder:
        run(f"sqlite:///{Path(folder) / 'bench.db'}", writes, ticks)


def _pg(base: str, writes: int, ticks: int) -> None:
    """One run in a fresh schema, dropped afterwards."""
    schema = f"compound_bench_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(base, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    driver = base.replace("postgresql://", "postgresql+psycopg://", 1)
    try:
        run(f"{driver}?options=-csearch_path%3D{schema}", writes, ticks)
    finally:
        with psycopg.connect(base, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA {schema} CASCADE")


@step(id="noop")
def noop(data: Any, ctx: Any) -> None:
    return None


def _writes(t: Tocsin, table: str, record: str, n: int) -> float:
    start = time.perf_counter()
    for i in range(n):
        t.update_record(table, record, {"N": i}, now=NOW + timedelta(seconds=i))
    return n / (time.perf_counter() - start)


def _median(fn: Callable[[], Any], times: int) -> float:
    out = []
    for _ in range(times):
        start = time.perf_counter()
        fn()
        out.append(time.perf_counter() - start)
    return statistics.median(out)


def run(url: str, writes: int, ticks: int) -> None:
    t = Tocsin.open(url)
    table = str(t.create_table("chatroom", str(uuid.uuid4()), "T", {"N": "number"})["id"])
    other = str(t.create_table("chatroom", str(uuid.uuid4()), "U", {"N": "number"})["id"])
    record = str(t.insert_record(table, {"N": 0})["id"])
    scheds = [
        Schedule(id=f"s{i}", trigger=AnyOf(Cron("0 9 * * *", timezone="UTC"), TableUpdated(other)))
        for i in range(199)
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        wf = workflow(id="w", schedule=scheds).then(noop).commit()
    t.register_workflows([wf])
    t.sync_schedules(now=NOW)
    real = store_events.insert_events
    _writes(t, table, record, writes // 3)  # warm up
    bases, quiets = [], []
    for _ in range(5):  # interleaved rounds: the machine's load hits both alike
        store_events.insert_events = lambda *a, **k: None  # type: ignore[assignment]
        try:
            bases.append(_writes(t, table, record, writes))
        finally:
            store_events.insert_events = real  # type: ignore[assignment]
        quiets.append(_writes(t, table, record, writes))
    base, quiet = statistics.median(bases), statistics.median(quiets)
    listen = Schedule(id="listen", trigger=TableUpdated(table))
    t.workflows.clear()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t.register_workflows([workflow(id="w", schedule=[*scheds, listen]).then(noop).commit()])
    t.sync_schedules(now=NOW)
    heard = _writes(t, table, record, writes)
    print(
        f"  updates/s: baseline {base:.0f}, nobody listening {quiet:.0f} "
        f"({quiet / base:.0%}), listened to {heard:.0f} ({heard / base:.0%})"
    )
    at = NOW + timedelta(minutes=30)
    t.tick(now=at)  # drain the events of the writes above
    _median(lambda: t.tick(now=at), 3)  # warm up
    whole = _median(lambda: t.tick(now=at), ticks)
    alone = _median(lambda: fire_trigger_schedules(t.store, now=at), ticks)
    print(
        f"  idle tick {whole * 1000:.2f} ms, its compound pass {alone * 1000:.2f} ms "
        f"({alone / whole:.0%} of the tick)"
    )
    t.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--backend", choices=("sqlite", "postgresql", "both"), default="both")
    ap.add_argument("--pg-url", default="postgresql://postgres@127.0.0.1:5432/test")
    ap.add_argument("--writes", type=int, default=300)
    ap.add_argument("--ticks", type=int, default=15)
    args = ap.parse_args()
    if args.backend in ("sqlite", "both"):
        print("sqlite")
        _sqlite(args.writes, args.ticks)
    if args.backend in ("postgresql", "both"):
        print("postgresql")
        _pg(args.pg_url, args.writes, args.ticks)


if __name__ == "__main__":
    main()
