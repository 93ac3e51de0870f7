"""Worker throughput: runs executed per second, tocsin beside procrastinate (``make bench``).

Every tocsin run has one ``notify`` action (one message row: tocsin's cheapest action still does
a write, so it works harder than the no-op it is compared with). Every procrastinate job is a
no-op task. Each measurement starts N worker *processes* that open their connections, wait on a
common start signal, and drain the queue; the clock runs from the signal until the last one exits.

A tocsin worker process is what ``tocsin worker`` runs: ``serve_worker`` with its pool
(``TOCSIN_WORKER_CONCURRENCY`` threads, default settings), stopped at its first pass that
finds nothing to start (then it waits for its runs in flight, as on a stop), as procrastinate's
``wait=False``. The ``work()`` rows are ``Tocsin.work()`` without a pool, for comparison.

- tocsin on SQLite (a fresh file) and on PostgreSQL (a fresh schema), 1 and 4 workers;
- procrastinate 3.x on the same PostgreSQL (a fresh schema, ``PsycopgConnector``), 1 and 4
  workers with ``wait=False`` and ``listen_notify=False``.

Environment: ``BENCH_RUNS`` (default 2000), ``BENCH_REPEAT`` (default 2, best of),
``BENCH_PG_URL`` (default ``postgresql://postgres@127.0.0.1:5432/test``). PostgreSQL legs are
skipped when it does not answer.
"""

from __future__ import annotations

import asyncio
import logging
import multiprocessing as mp
import os
import tempfile
import threading
import time
import uuid
from datetime import UTC, datetime
from typing import Any

import psycopg

from tocsin.runs.worker import serve_worker
from tocsin.service import Tocsin
from tocsin.settings import Settings
from tocsin.store.records import insert_table, set_table_triggers
from tocsin.store.run_queries import count_runs
from tocsin.store.runs import insert_run

RUNS = int(os.environ.get("BENCH_RUNS", "2000"))
PG_URL = os.environ.get("BENCH_PG_URL", "postgresql://postgres@127.0.0.1:5432/test")
NOW = datetime(2026, 8, 27, 5, 2, 13, tzinfo=UTC)
CTX = mp.get_context("spawn")


# ── PostgreSQL schemas ─────────────────────────────────────────────────────────────────────
def pg_available() -> bool:
    try:
        psycopg.connect(PG_URL, connect_timeout=3).close()
    except psycopg.Error:
        return False
    return True


def new_schema(prefix: str) -> tuple[str, str]:
    schema = f"{prefix}_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(PG_URL, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    sep = "&" if "?" in PG_URL else "?"
    return schema, f"{PG_URL}{sep}options=-csearch_path%3D{schema}"


def drop_schema(schema: str) -> None:
    with psycopg.connect(PG_URL, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA {schema} CASCADE")


# ── tocsin ─────────────────────────────────────────────────────────────────────────────────
def seed_runs(url: str, n: int) -> None:
    tocsin = Tocsin.open(url, settings=Settings(database_url=url))
    trg = {"id": "trg_bench", "on": "created", "actions": [{"id": "act_1", "type": "notify"}]}
    try:
        with tocsin.store.begin() as tx:
            table = insert_table(
                tx,
                id=str(uuid.uuid4()),
                scope="chatroom",
                scope_id=str(uuid.uuid4()),
                name="bench",
                columns={"Title": "text"},
                now=NOW,
            )
            set_table_triggers(tx, table_id=table.id, triggers=[trg], now=NOW)
            for _ in range(n):
                insert_run(
                    tx,
                    id=str(uuid.uuid4()),
                    table_id=table.id,
                    trigger_id="trg_bench",
                    record_id=None,
                    source="created",
                    clock=False,
                    payload={},
                    definition=None,
                    identity=None,
                    scheduled_for=None,
                    now=NOW,
                )
    finally:
        tocsin.close()


def tocsin_child(url: str, ready: Any, go: Any) -> None:
    """``tocsin worker``'s loop (``cli.processes.worker``), until a pass starts nothing."""
    tocsin = Tocsin.open(url, settings=Settings(database_url=url))
    settings = tocsin.settings
    stop = threading.Event()
    ready.put(True)
    go.wait()
    clean = serve_worker(
        tocsin,
        stop_event=stop,
        concurrency=settings.worker_concurrency,
        per_scope=settings.per_scope_cap,
        idle=lambda _s: stop.set(),  # the queue is empty (for this worker): stop
        outage=tocsin.store.outage,
        backoff_max_s=settings.db_backoff_max_s,
    )
    tocsin.close()
    if not clean:
        raise SystemExit("tocsin worker: runs still in flight after the stop")


def tocsin_work_child(url: str, ready: Any, go: Any) -> None:
    """``Tocsin.work()`` without a pool: runs of database-only actions in groups (runs.batch)."""
    tocsin = Tocsin.open(url, settings=Settings(database_url=url))
    ready.put(True)
    go.wait()
    tocsin.work()  # the real clock, read before each claim and action
    tocsin.close()


def count_done(url: str) -> int:
    tocsin = Tocsin.open(url, settings=Settings(database_url=url))
    try:
        with tocsin.store.read() as tx:
            return count_runs(tx, status="done")
    finally:
        tocsin.close()


def timed(target: Any, args: tuple[Any, ...], workers: int) -> float:
    """Start ``workers`` processes, release them together, return the seconds until all exit."""
    ready, go = CTX.Queue(), CTX.Event()
    procs = [CTX.Process(target=target, args=(*args, ready, go)) for _ in range(workers)]
    for proc in procs:
        proc.start()
    for _ in procs:
        ready.get(timeout=60)
    start = time.perf_counter()
    go.set()
    for proc in procs:
        proc.join(600)
    return time.perf_counter() - start


def bench_tocsin(url: str, workers: int, child: Any = tocsin_child) -> float:
    seed_runs(url, RUNS)
    seconds = timed(child, (url,), workers)
    done = count_done(url)
    if done != RUNS:
        raise SystemExit(f"tocsin: {done} of {RUNS} runs done")
    return RUNS / seconds


def tocsin_sqlite(workers: int) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        return bench_tocsin(f"sqlite:///{tmp}/bench.db", workers)


def tocsin_pg(workers: int) -> float:
    schema, url = new_schema("bench_tocsin")
    try:
        return bench_tocsin(url, workers)
    finally:
        drop_schema(schema)


def tocsin_pg_work(workers: int) -> float:
    schema, url = new_schema("bench_tocsin")
    try:
        return bench_tocsin(url, workers, tocsin_work_child)
    finally:
        drop_schema(schema)


# ── procrastinate ──────────────────────────────────────────────────────────────────────────
def noop() -> None:
    return None


def make_app(url: str) -> Any:
    import procrastinate

    app = procrastinate.App(connector=procrastinate.PsycopgConnector(conninfo=url))
    app.task(name="noop")(noop)
    return app


async def _prepare(url: str, n: int) -> None:
    app = make_app(url)
    async with app.open_async():
        await app.schema_manager.apply_schema_async()
        task = app.tasks["noop"]
        for start in range(0, n, 500):
            await task.batch_defer_async(*({} for _ in range(min(500, n - start))))


async def _work(url: str, ready: Any, go: Any) -> None:
    app = make_app(url)
    async with app.open_async():
        ready.put(True)
        await asyncio.to_thread(go.wait)
        await app.run_worker_async(
            wait=False, listen_notify=False, install_signal_handlers=False, concurrency=1
        )


def procrastinate_child(url: str, ready: Any, go: Any) -> None:
    asyncio.run(_work(url, ready, go))


def procrastinate_pg(workers: int) -> float:
    schema, url = new_schema("bench_procr")
    try:
        asyncio.run(_prepare(url, RUNS))
        seconds = timed(procrastinate_child, (url,), workers)
        with psycopg.connect(url) as conn:
            row = conn.execute("SELECT count(*) FROM procrastinate_jobs WHERE status='succeeded'")
            done = row.fetchone()
        if done is None or done[0] != RUNS:
            raise SystemExit(f"procrastinate: {done} of {RUNS} jobs succeeded")
        return RUNS / seconds
    finally:
        drop_schema(schema)


# ── report ─────────────────────────────────────────────────────────────────────────────────
REPEAT = int(os.environ.get("BENCH_REPEAT", "2"))


def measure(legs: list[tuple[str, Any]]) -> dict[tuple[str, int], float]:
    """Best of ``REPEAT`` rounds per leg; legs alternate within a round (the host is shared)."""
    best: dict[tuple[str, int], float] = {}
    for _ in range(REPEAT):
        for workers in (1, 4):
            for name, fn in legs:
                rate = fn(workers)
                best[(name, workers)] = max(rate, best.get((name, workers), 0.0))
    return best


def main() -> None:
    logging.getLogger("procrastinate").setLevel(logging.ERROR)
    print(
        f"worker throughput: {RUNS} runs/jobs; a tocsin run = one notify action (a message row"
        f" written), a procrastinate job = a no-op task; runs/s, best of {REPEAT}; tocsin rows:"
        " `tocsin worker`'s loop and pool, `work()`: Tocsin.work() without a pool"
    )
    legs: list[tuple[str, Any]] = [("tocsin sqlite", tocsin_sqlite)]
    if pg_available():
        legs += [
            ("tocsin postgresql", tocsin_pg),
            ("tocsin postgresql work()", tocsin_pg_work),
            ("procrastinate postgresql", procrastinate_pg),
        ]
    else:
        print(f"PostgreSQL at {PG_URL} does not answer: PostgreSQL legs skipped")
    results = measure(legs)
    for (name, workers), rate in sorted(results.items()):
        print(f"  {name:<26} {workers} worker(s): {rate:8.0f} runs/s")
    for workers in (1, 4):
        theirs = results.get(("procrastinate postgresql", workers))
        for name in ("tocsin postgresql", "tocsin postgresql work()"):
            ours = results.get((name, workers))
            if ours and theirs:
                print(f"  {name}/procrastinate, {workers} worker(s): {ours / theirs:.2f}x")


if __name__ == "__main__":
    main()
