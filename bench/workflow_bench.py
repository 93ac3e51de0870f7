"""Workflow schedules firing at once: tocsin beside APScheduler 3 (SPEC §12; the 5x target).

10,000 schedules are due at the same instant. tocsin (one process, on a fresh SQLite file and on
a fresh PostgreSQL schema): ``tick`` until every fire row is recorded (a tick fires every due
schedule, 1,000 set-based per transaction: one claim of the due rows, one ledger claim for the
batch, bulk inserts of fire rows and pending workflow runs, one bulk ``next_fire_at`` update),
then ``work`` until every (one-step, no-op) run is ``success`` (``runs.drain.GROUP_BATCH``,
1,000 runs, claimed in one statement, executed, then finished together in one transaction: one
fenced UPDATE for the batch and one INSERT of the success events somebody listens to; the same
loop on both backends). The clock starts at the first tick and is read at both milestones.

Each backend is also run as ``tocsin worker`` and ``serve`` run the runs ("worker pool"): the
fires recorded as above, then the worker's own loop (``runs.worker.serve_worker``, as the CLI
starts it: a pool of ``TOCSIN_WORKER_CONCURRENCY`` threads, default 8; passes of 2,000 runs
by whole claims, each claim taking up to ``runs.drain.slot_share`` runs per free slot (125
for 8; per slot a tenant may still take) into a queue that one slot starts on, each slot
finishing what it ran in one transaction) until every run is
``success`` (whether a run is left is read every 20 ms: the resolution).

And as the two-process deployment (``bench_processes``): the real ``tocsin scheduler`` and
``tocsin worker`` processes on one database, ticking and working at the same time.

The baseline of tocsin's own figure, per backend: plain driver calls (``bench_plain``): the
same rows (ledger, run, fire, schedule advance; claim, finish) on the same schema and indexes,
written with plain psycopg / sqlite3 statements in tocsin's page and batch sizes, nothing
validated; on PostgreSQL each column's values go as one typed array in binary (``%b``), as
tocsin's ``store.bulk`` sends them (in text arrays, psycopg's quoting of the 500 ``steps`` texts
of a finish alone took ~4 ms per batch).

APScheduler 3.x: a ``BackgroundScheduler`` with a ``SQLAlchemyJobStore`` on the *same SQLite
file* as tocsin's leg and a 20-thread pool; 10,000 no-op date jobs added while paused, all due;
the clock runs from ``resume()`` until the 10,000th job has executed (and been removed from the
store: its "fire recorded").

Every leg, APScheduler's too, runs ``BENCH_ROUNDS`` times (default 3), round after round; each
figure is the median of its leg's rounds (the range beside it), and each ratio is of medians:
on this 2-core machine one APScheduler run took 2.98-4.71 s across runs, which moved a
single-run ratio by half.

The SQLite files (tocsin's and APScheduler's) live in a fresh temporary directory under
``BENCH_DIR`` (default: the system's temporary directory). APScheduler commits once per job it
runs (its store removes each executed job in a transaction of its own), so its figure follows
the disk's flush latency: on 2026-12-03 on this machine, 4.6-4.9 s with the files on disk and
2.4-2.5 s on tmpfs (``BENCH_DIR=/dev/shm``), where tocsin's SQLite legs lose their few flushes too.
The PostgreSQL legs flush to the server's own disk either way.

Environment: ``BENCH_SCHEDULES`` (default 10000), ``BENCH_ROUNDS`` (default 3), ``BENCH_DIR``,
``BENCH_PG_URL`` (default ``postgresql://postgres@127.0.0.1:5432/test``; the PostgreSQL leg is
skipped when it does not answer). Run: ``.venv/bin/python bench/workflow_bench.py``.
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from datetime import UTC, datetime, timedelta
from functools import partial
from typing import Any

import psycopg
from pydantic import BaseModel

from tocsin import StepContext, step, workflow
from tocsin.cli.processes import WORKER_POLL_S
from tocsin.runs.drain import GROUP_BATCH
from tocsin.runs.worker import serve_worker
from tocsin.service import Tocsin
from tocsin.settings import Settings
from tocsin.store import schedules as store_schedules
from tocsin.store import workflow_runs as store_runs

N = int(os.environ.get("BENCH_SCHEDULES", "10000"))
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "3"))
PG_URL = os.environ.get("BENCH_PG_URL", "postgresql://postgres@127.0.0.1:5432/test")
FILES_DIR = os.environ.get("BENCH_DIR") or None  # None: the system's temporary directory
DUE = datetime(2026, 9, 1, 12, 0, tzinfo=UTC)
TARGET = 5.0  # tocsin at least 5x APScheduler until every run is done


class Empty(BaseModel):
    pass


@step(id="noop", input=Empty, output=Empty)
def noop_step(data: Empty, ctx: StepContext) -> Empty:
    return data


NOOP = workflow(id="noop", input=Empty, output=Empty).then(noop_step).commit()


# ── tocsin ─────────────────────────────────────────────────────────────────────────────────
def seed(t: Tocsin) -> None:
    """N imperative schedules of ``noop``, every one due at ``DUE`` (one transaction)."""
    with t.store.begin() as tx:
        for i in range(N):
            store_schedules.insert_schedule(
                tx,
                values={
                    "id": f"sch_{i:06d}",
                    "workflow_id": "noop",
                    "source": "imperative",
                    "cron": "0 12 * * *",
                    "timezone": "UTC",
                    "overlap": "skip",
                    "input_data": {},
                    "initial_state": None,
                    "request_context": None,
                    "metadata": None,
                    "paused_at": None,
                    "next_fire_at": DUE,
                    "last_fire_id": None,
                    "created_at": DUE - timedelta(days=1),
                    "updated_at": DUE - timedelta(days=1),
                },
            )


def count(t: Tocsin, status: str | None = None) -> int:
    with t.store.read() as tx:
        if status is None:
            return store_schedules.count_fires(tx)
        return store_runs.count_runs(tx, status=status)


@contextmanager
def probe(t: Tocsin) -> Iterator[Callable[[], bool]]:
    """``unfinished()``: whether a run of ``t``'s database is still pending or running. One probe
    of the status index (a count of 10,000 rows every 20 ms took a few percent of a core from the
    legs it watched), in one round trip on a driver connection of the bench's own (through
    ``t.store.read()`` a probe was five: the pool's ping, BEGIN, the snapshot, the probe,
    COMMIT). Asked only once every run exists (after every fire was recorded)."""
    sql = "SELECT 1 FROM runs WHERE kind = 'workflow' AND status IN ('pending', 'running') LIMIT 1"
    url = t.store.engine.url
    if t.store.is_postgres:
        plain = url.set(drivername="postgresql").render_as_string(hide_password=False)
        conn: Any = psycopg.connect(plain, autocommit=True)
    else:  # each probe its own read
        conn = sqlite3.connect(str(url.database), isolation_level=None)
    try:
        yield lambda: conn.execute(sql).fetchone() is not None
    finally:
        conn.close()


def bench_tocsin(url: str, pooled: bool = False) -> tuple[float, float]:
    """Seconds until every fire is recorded and until every run is ``success``. ``pooled``:
    the runs go through the worker's pool as ``tocsin worker`` and ``serve`` run them
    (``TOCSIN_WORKER_CONCURRENCY`` threads, default 8), not one ``work`` call's batches."""
    settings = Settings(database_url=url)
    t = Tocsin.open(url, settings=settings, workflows=[NOOP])
    stack = ExitStack()  # the probe connection
    try:
        seed(t)
        now = DUE + timedelta(seconds=1)
        unfinished = stack.enter_context(probe(t))  # opened before the clock starts
        start = time.perf_counter()
        while t.tick(now=now)["schedules_fired"]:
            pass
        fired = time.perf_counter() - start
        if pooled:  # ``tocsin worker``'s loop, as the CLI runs it, until every run succeeded
            stop = threading.Event()
            loop = threading.Thread(
                target=serve_worker,
                args=(t,),
                kwargs={
                    "stop_event": stop,
                    "poll_interval": WORKER_POLL_S,
                    "concurrency": settings.worker_concurrency,
                    "clock": lambda: now,
                },
            )
            loop.start()
            try:
                while unfinished():  # read every 20 ms: the figure's resolution
                    if not loop.is_alive() or time.perf_counter() - start > 900:
                        raise SystemExit("tocsin: the worker loop did not finish in 900 s")
                    time.sleep(0.02)
            finally:
                stop.set()
                loop.join()
        else:
            t.work(now=now)
        ran = time.perf_counter() - start
        fires, successes = count(t), count(t, "success")
    finally:
        stack.close()
        t.close()
    if fires != N or successes != N:
        raise SystemExit(f"tocsin: {fires} fires and {successes} successful runs of {N}")
    return fired, ran


# ── tocsin scheduler + tocsin worker: two processes ───────────────────────────────────────
APP = [NOOP]  # ``--app workflow_bench:APP``: what the two processes import
_BIN = os.path.join(os.path.dirname(sys.executable), "tocsin")


def bench_processes(url: str) -> tuple[float, float]:
    """The two-process deployment (SPEC §12 "a dedicated scheduler worker process"): the real
    CLI processes ``tocsin scheduler --clock-stdin`` (its ticks driven through stdin, at the
    same ``now`` as the other legs) and ``tocsin worker`` (its own loop: a pool of
    ``TOCSIN_WORKER_CONCURRENCY`` threads, default 8, idle between passes, woken by the fire's
    commit: ``NOTIFY`` on PostgreSQL, ``PRAGMA data_version`` on SQLite) on one database,
    both started, synced and idle before the clock starts. Seconds from the tick's instant
    being written until the scheduler prints its counts (every fire recorded: the tick fires
    every due schedule) and until every run is ``success`` (read every 20 ms from this
    process: the figure's resolution)."""
    t = Tocsin.open(url, settings=Settings(database_url=url), workflows=[NOOP])
    procs: list[subprocess.Popen[str]] = []
    stack = ExitStack()  # the probe connection
    try:
        seed(t)
        bench_dir = os.path.dirname(os.path.abspath(__file__))
        env = {
            **os.environ,
            "TOCSIN_DATABASE_URL": url,
            "TOCSIN_APP": "workflow_bench:APP",
            "PYTHONPATH": os.pathsep.join(filter(None, [bench_dir, os.environ.get("PYTHONPATH")])),
        }
        worker = subprocess.Popen(
            [_BIN, "worker"], env=env, stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL
        )
        procs.append(worker)
        scheduler = subprocess.Popen(
            [_BIN, "scheduler", "--clock-stdin"],
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        procs.append(scheduler)
        assert worker.stderr is not None and scheduler.stdin and scheduler.stdout
        for line in worker.stderr:  # the worker synced: its loop starts next
            if "schedules synced" in line:
                break
        threading.Thread(target=worker.stderr.read, daemon=True).start()  # drain its log

        def tick(at: datetime) -> dict[str, int]:
            assert scheduler.stdin and scheduler.stdout
            scheduler.stdin.write(at.isoformat() + "\n")
            scheduler.stdin.flush()
            counts: dict[str, int] = json.loads(scheduler.stdout.readline())
            return counts

        unfinished = stack.enter_context(probe(t))  # opened before the clock starts
        tick(DUE - timedelta(hours=1))  # the scheduler synced and ticked once: nothing due
        time.sleep(1.0)  # the worker's first (empty) pass is over: it idles
        start = time.perf_counter()
        counts = tick(DUE + timedelta(seconds=1))
        fired = time.perf_counter() - start
        while unfinished():
            if worker.poll() is not None or time.perf_counter() - start > 900:
                raise SystemExit(f"tocsin worker: not done in 900 s (exit {worker.returncode})")
            time.sleep(0.02)
        ran = time.perf_counter() - start
        fires, successes = count(t), count(t, "success")
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            proc.wait(30)
        stack.close()
        t.close()
    if counts.get("schedules_fired") != N or fires != N or successes != N:
        raise SystemExit(f"tocsin processes: {counts}, {fires} fires, {successes} runs of {N}")
    return fired, ran


# ── the plain-driver baseline ──────────────────────────────────────────────────────────────
PLAIN_PAGE, PLAIN_BATCH = 1000, GROUP_BATCH  # tocsin's page of fires and batch of runs


def bench_plain(url: str) -> tuple[float, float]:
    """The plain way to do tocsin's writes, the baseline of its own figure: on the same
    schema (tables and indexes made by ``Tocsin.open``) and the same seeded schedules, plain
    driver calls (psycopg / sqlite3) claim each page of due schedules and write its ledger rows
    (the conflict check kept), pending runs, fire rows and schedule advances in one transaction;
    then claim runs ``PLAIN_BATCH`` at a time and finish each batch ``success`` in the next
    claim's transaction. No validation, receipts or events; plain statements, not tuned further (on
    SQLite tocsin's own multi-row statements beat it in some runs). Seconds until every fire is
    written and until every run is ``success``."""
    t = Tocsin.open(url, settings=Settings(database_url=url), workflows=[NOOP])
    try:
        seed(t)
    finally:
        t.close()
    due = DUE.replace(tzinfo=None)
    now, later = due + timedelta(seconds=1), due + timedelta(days=1)
    if url.startswith("sqlite"):
        return _plain_sqlite(url.removeprefix("sqlite:///"), due, now, later)
    return _plain_pg(url, due, now, later)


_PLAIN_DUE = (
    "SELECT id FROM workflow_schedules WHERE paused_at IS NULL AND next_fire_at <= {m}"
    " AND trigger_tree IS NULL ORDER BY next_fire_at, id LIMIT {m}"
)
_PLAIN_CLAIM = (
    "UPDATE runs SET status = 'running', attempts = attempts + 1, started_at = {m},"
    " updated_at = {m} WHERE id IN (SELECT id FROM runs WHERE kind = 'workflow'"
    " AND status = 'pending' ORDER BY updated_at, id LIMIT {m}{lock})"
    " RETURNING id, input, action_results, attempts"
)
_T = "%b::text[]"  # a text column as one typed array, as tocsin's store.bulk sends it
_PLAIN_STEPS = '[{"id": "noop", "status": "success", "output": {}}]'
# what every workflow run's row of ``runs`` holds in the other kinds' columns (as tocsin writes;
# its scope, its workflow's ``app/wf:<workflow>``, a value: no schedule here declares a limit)
_PLAIN_CONSTANTS = ", 'workflow', '', '{}', 1"


def _plain_pg(url: str, due: datetime, now: datetime, later: datetime) -> tuple[float, float]:
    schema = url.split("search_path%3D", 1)[1]
    with psycopg.connect(PG_URL, options=f"-csearch_path={schema}") as c:
        start = time.perf_counter()
        while True:
            rows = c.execute(
                _PLAIN_DUE.format(m="%s") + " FOR UPDATE SKIP LOCKED", (now, PLAIN_PAGE)
            ).fetchall()
            if not rows:
                break
            sids = [r[0] for r in rows]
            rids = [str(uuid.uuid4()) for _ in rows]
            fids = [str(uuid.uuid4()) for _ in rows]
            got = c.execute(
                "INSERT INTO occurrence_ledger (table_id, trigger_id, identity, run_id,"
                f" created_at) SELECT '', u.s, %s, u.r, %s FROM unnest({_T}, {_T})"
                " AS u(s, r) ON CONFLICT DO NOTHING RETURNING run_id",
                (due.isoformat(), now, sids, rids),
            ).fetchall()
            assert len(got) == len(rows)
            c.execute(
                "INSERT INTO runs (id, kind, table_id, trigger_id, schedule_id, source, status,"
                " attempts, input, action_results, payload, scope, attempt, scheduled_for,"
                " created_at, updated_at) SELECT u.r, 'workflow', '', 'noop', u.s, 'scheduled',"
                " 'pending', 0, '{}', '[]', '{}', 'app/wf:noop', 1, %s, %s, %s"
                f" FROM unnest({_T}, {_T}) AS u(s, r)",
                (due, now, now, sids, rids),
            )
            c.execute(
                "INSERT INTO schedule_fires (id, schedule_id, workflow_id, scheduled_for,"
                " fired_at, run_id, publish_status) SELECT u.f, u.s, 'noop', %s, %s, u.r,"
                f" 'published' FROM unnest({_T}, {_T}, {_T}) AS u(f, s, r)",
                (due, now, fids, sids, rids),
            )
            c.execute(
                "UPDATE workflow_schedules SET next_fire_at = %s, last_fire_id = v.f,"
                f" updated_at = %s FROM unnest({_T}, {_T}) AS v(s, f)"
                " WHERE workflow_schedules.id = v.s",
                (later, now, sids, fids),
            )
            c.commit()
        fired = time.perf_counter() - start
        claim = _PLAIN_CLAIM.format(m="%s", lock=" FOR UPDATE SKIP LOCKED")
        claimed: list[Any] = []
        while True:
            if claimed:
                ids, atts = [r[0] for r in claimed], [r[3] for r in claimed]
                c.execute(
                    "UPDATE runs SET status = 'success', action_results = CAST(%s AS json),"
                    " output = '{}', updated_at = %s, finished_at = %s"
                    f" FROM unnest({_T}, %b::int[]) AS v(id, att)"
                    " WHERE runs.id = v.id AND runs.status = 'running'"
                    " AND runs.attempts = v.att",
                    (_PLAIN_STEPS, now, now, ids, atts),
                )
            c.execute("SET LOCAL enable_bitmapscan = off")  # as tocsin's claim (an ordered scan)
            claimed = c.execute(claim, (now, now, PLAIN_BATCH)).fetchall()
            c.commit()
            if not claimed:
                return fired, time.perf_counter() - start


def _marks(rows: int, columns: int, constants: str = "") -> str:
    return ", ".join(["(" + ", ".join("?" * columns) + constants + ")"] * rows)


def _plain_sqlite(path: str, due: datetime, now: datetime, later: datetime) -> tuple[float, float]:
    c = sqlite3.connect(path, isolation_level=None)
    c.execute("PRAGMA journal_mode = WAL")
    c.execute("PRAGMA synchronous = NORMAL")
    at, due_at, later_at = (x.strftime("%Y-%m-%d %H:%M:%S.%f") for x in (now, due, later))
    try:
        start = time.perf_counter()
        while True:
            c.execute("BEGIN IMMEDIATE")
            rows = c.execute(_PLAIN_DUE.format(m="?"), (at, PLAIN_PAGE)).fetchall()
            if not rows:
                c.execute("COMMIT")
                break
            new = [(r[0], str(uuid.uuid4()), str(uuid.uuid4())) for r in rows]
            got = c.execute(  # multi-row VALUES: faster than executemany on SQLite
                "INSERT INTO occurrence_ledger (table_id, trigger_id, identity, run_id,"
                f" created_at) VALUES {_marks(len(new), 5)} ON CONFLICT DO NOTHING RETURNING 1",
                [v for s, r, _ in new for v in ("", s, due.isoformat(), r, at)],
            ).fetchall()
            assert len(got) == len(rows)
            c.execute(
                "INSERT INTO runs (id, trigger_id, schedule_id, source, status, attempts, input,"
                " action_results, scheduled_for, created_at, updated_at, scope, kind, table_id,"
                " payload, attempt)"
                f" VALUES {_marks(len(new), 12, _PLAIN_CONSTANTS)}",
                [
                    v
                    for s, r, _ in new
                    for v in (
                        *(r, "noop", s, "scheduled", "pending", 0, "{}", "[]", due_at, at, at),
                        "app/wf:noop",
                    )
                ],
            )
            c.execute(
                "INSERT INTO schedule_fires (id, schedule_id, workflow_id, scheduled_for,"
                f" fired_at, run_id, publish_status) VALUES {_marks(len(new), 7)}",
                [v for s, r, f in new for v in (f, s, "noop", due_at, at, r, "published")],
            )
            c.executemany(
                "UPDATE workflow_schedules SET next_fire_at = ?, last_fire_id = ?,"
                " updated_at = ? WHERE id = ?",
                [(later_at, f, at, s) for s, _, f in new],
            )
            c.execute("COMMIT")
        fired = time.perf_counter() - start
        claim = _PLAIN_CLAIM.format(m="?", lock="")
        claimed: list[Any] = []
        while True:
            c.execute("BEGIN IMMEDIATE")
            c.executemany(
                "UPDATE runs SET status = 'success', action_results = ?, output = '{}',"
                " updated_at = ?, finished_at = ? WHERE id = ? AND status = 'running'"
                " AND attempts = ?",
                [(_PLAIN_STEPS, at, at, r[0], r[3]) for r in claimed],
            )
            claimed = c.execute(claim, (at, at, PLAIN_BATCH)).fetchall()
            c.execute("COMMIT")
            if not claimed:
                return fired, time.perf_counter() - start
    finally:
        c.close()


# ── APScheduler 3 ──────────────────────────────────────────────────────────────────────────
DONE = threading.Event()
_COUNT = [0]
_LOCK = threading.Lock()


def aps_job() -> None:
    with _LOCK:
        _COUNT[0] += 1
        if _COUNT[0] == N:
            DONE.set()


def bench_apscheduler(url: str) -> float:
    from apscheduler.executors.pool import ThreadPoolExecutor
    from apscheduler.jobstores.sqlalchemy import SQLAlchemyJobStore
    from apscheduler.schedulers.background import BackgroundScheduler

    logging.getLogger("apscheduler").setLevel(logging.ERROR)
    store = SQLAlchemyJobStore(url=url)
    scheduler = BackgroundScheduler(
        jobstores={"default": store},
        executors={"default": ThreadPoolExecutor(20)},
        job_defaults={"misfire_grace_time": 3600, "coalesce": True},
        timezone="UTC",
    )
    DONE.clear()
    _COUNT[0] = 0
    scheduler.start(paused=True)
    due = datetime.now(UTC) - timedelta(seconds=1)
    for i in range(N):
        scheduler.add_job(aps_job, "date", run_date=due, id=f"job_{i}")
    start = time.perf_counter()
    scheduler.resume()
    if not DONE.wait(timeout=900):
        raise SystemExit(f"APScheduler: {_COUNT[0]} of {N} jobs ran in 900 s")
    while store.get_all_jobs():  # executed jobs are removed from the store: wait for the last
        time.sleep(0.01)
    seconds = time.perf_counter() - start
    scheduler.shutdown(wait=True)
    return seconds


# ── main ───────────────────────────────────────────────────────────────────────────────────
def pg_url() -> tuple[str, str] | None:
    try:
        psycopg.connect(PG_URL, connect_timeout=3).close()
    except psycopg.Error:
        return None
    schema = f"wfbench_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(PG_URL, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    sep = "&" if "?" in PG_URL else "?"
    return schema, f"{PG_URL}{sep}options=-csearch_path%3D{schema}"


def _on_fresh_schema(
    legs: dict[str, tuple[float, float]], name: str, leg: Callable[[str], tuple[float, float]]
) -> None:
    """``legs[name] = leg(url)`` on a fresh PostgreSQL schema, dropped after; nothing when
    PostgreSQL does not answer."""
    pg = pg_url()
    if pg is None:
        return
    schema, url = pg
    try:
        legs[name] = leg(url)
    finally:
        with psycopg.connect(PG_URL, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA {schema} CASCADE")


def one_round(tmp: str) -> dict[str, tuple[float, float]]:
    """Every leg once, on fresh files and schemas under ``tmp``: name → (fired, ran) seconds."""
    legs: dict[str, tuple[float, float]] = {}
    sqlite_url = f"sqlite:///{tmp}/bench.db"
    # the batch leg's SQLite file is the one APScheduler's store uses after it (the 5x target
    # compares the two on one file)
    for pooled, shape, file in ((False, "", "bench.db"), (True, ", worker pool", "pool.db")):
        legs[f"tocsin, SQLite{shape}"] = bench_tocsin(f"sqlite:///{tmp}/{file}", pooled)
        pooled_leg = partial(bench_tocsin, pooled=pooled)
        _on_fresh_schema(legs, f"tocsin, PostgreSQL{shape}", pooled_leg)
    name = "tocsin, {}, scheduler + worker processes"
    legs[name.format("SQLite")] = bench_processes(f"sqlite:///{tmp}/procs.db")
    _on_fresh_schema(legs, name.format("PostgreSQL"), bench_processes)
    legs[plain_name("SQLite")] = bench_plain(f"sqlite:///{tmp}/plain.db")
    _on_fresh_schema(legs, plain_name("PostgreSQL"), bench_plain)
    aps = bench_apscheduler(sqlite_url)
    legs[APS] = (aps, aps)
    return legs


def plain_name(backend: str) -> str:
    driver = "sqlite3" if backend == "SQLite" else "psycopg"
    return f"plain driver calls, {backend} ({driver}, the same rows)"


APS = "APScheduler 3, SQLAlchemyJobStore on the same SQLite file"


def main() -> None:
    where = FILES_DIR or tempfile.gettempdir()
    print(
        f"{N} schedules due at the same instant; {ROUNDS} rounds, medians (range);"
        f" SQLite files under {where}"
    )
    rounds: list[dict[str, tuple[float, float]]] = []
    for number in range(ROUNDS):
        with tempfile.TemporaryDirectory(dir=FILES_DIR) as tmp:
            rounds.append(one_round(tmp))
        done = ", ".join(f"{k.split(' (')[0]} {v[1]:.2f}s" for k, v in rounds[-1].items())
        print(f"round {number + 1}/{ROUNDS}, all runs done: {done}", file=sys.stderr, flush=True)
    fired = {k: statistics.median(r[k][0] for r in rounds) for k in rounds[0]}
    ran = {k: statistics.median(r[k][1] for r in rounds) for k in rounds[0]}
    spread = {k: (min(r[k][1] for r in rounds), max(r[k][1] for r in rounds)) for k in rounds[0]}
    print(f"{'':60} {'all fires recorded':>20} {'all runs done':>15} {'runs done, range':>18}")
    for k in rounds[0]:
        low, high = spread[k]
        print(f"{k:60} {fired[k]:>19.2f}s {ran[k]:>14.2f}s {low:>10.2f}-{high:.2f}s")
    aps = ran[APS]
    print(f"baseline: {baseline()}, {N} date jobs due at once: median {aps:.2f}s until all ran")
    for k in rounds[0]:
        if k == APS:
            continue
        verdict = "meets" if aps / ran[k] >= TARGET else "MISSES"
        backend = "SQLite" if "SQLite" in k else "PostgreSQL"
        own = plain_name(backend)
        plain = ran.get(own) if k != own else None
        beside = f"; {ran[k] / plain:.2f}x the plain driver calls' time" if plain else ""
        per_round = ", ".join(f"{r[APS][1] / r[k][1]:.1f}x" for r in rounds)
        print(
            f"{k}: {aps / fired[k]:.1f}x APScheduler to record the fires, {aps / ran[k]:.1f}x to"
            f" run ({verdict} the {TARGET:g}x target; per round {per_round}){beside}"
        )


def baseline() -> str:
    from importlib.metadata import version

    return (
        f"APScheduler {version('apscheduler')} BackgroundScheduler, SQLAlchemyJobStore"
        f" (SQLAlchemy {version('sqlalchemy')}) on the SQLite file of tocsin's SQLite leg,"
        " ThreadPoolExecutor(20)"
    )


if __name__ == "__main__":
    main()
