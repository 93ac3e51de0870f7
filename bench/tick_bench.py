"""The tick benchmark and its targets, on SQLite and PostgreSQL.

Run: ``.venv/bin/python bench/tick_bench.py`` (or ``make bench``). Options: ``--tables N``
(default 10,000), ``--records N`` (default 1,000,000), ``--backend sqlite|postgresql|both``,
``--pg-url URL`` (default postgresql://postgres@127.0.0.1:5432/test), ``--rounds N`` (default 3),
``--parts abc,idle,procs`` (default all), ``--idle-tables N`` (default 20,000),
``--processes 1,2,4`` (default 1,2,4; PostgreSQL only).

Each round gets a fresh database: a SQLite file under a temporary directory, a fresh
PostgreSQL schema (dropped at the end).

(a) ``--tables`` tables x 5 clock (interval) triggers, all due: ticks with ``table_limit`` 2000
    until nothing is left; runs created per second, in ``--rounds`` rounds (default 3) on fresh
    databases, each printed, then the medians. Beside it, the honest baseline: the same
    number of rows of the ``runs`` table's shape (same columns and types, primary key only)
    inserted with a plain textual INSERT, 1,000 rows per executemany, values prepared
    beforehand, into the same database from the same process. Target: tick >= 25% of the raw rate.
(b) the last round's store with nothing due: time of one tick (median of 7). Target: <= 50 ms.
(c) one date_column_reached trigger over ``--records`` records (none due), record_limit
    10,000: each tick reads the first page plus 10 more (SPEC §6); records classified per
    second over 3 ticks.

Two more parts (``--parts`` picks among ``abc`` (the three above), ``idle`` and ``procs``):

(b') idle at scale: ``--idle-tables`` tables (default 20,000) x 5 clock (interval) triggers =
     100,000 triggers, none due, on a fresh database: time of one tick (median of 7).
     Target: <= 20 ms. The template table is configured and ticked through the facade (so its
     ``next_due_at`` and trigger states say "next window in 60 s"); the clones copy those rows,
     so no table is a candidate at the measured instants (checked: every tick scans 0 tables).
(c') ``--processes`` (default 1,2,4) tick processes on one PostgreSQL: for each N, a fresh
     schema with ``--tables`` tables x 5 interval triggers, all due (50,000 runs); N processes
     (multiprocessing, spawn) open the facade, wait on a barrier, then each calls
     ``Tocsin.tick(now=..., table_limit=2000)`` until no candidate table is left. Wall time from
     the barrier's release to the last process done; afterwards exactly 50,000 runs and no
     ``(trigger_id, identity)`` twice. Runs/s per N and the ratio to N=1 (target: >= 100%).

Setup is not timed: one table is configured through the facade, the others are clones of its
rows (fresh table ids of the kind ``create_table`` gives, time-ordered UUIDv7s; fresh trigger ids)
inserted in bulk; records are inserted in bulk.
"""

from __future__ import annotations

import argparse
import copy
import json
import multiprocessing
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import psycopg
from sqlalchemy import (
    Column,
    Index,
    MetaData,
    PrimaryKeyConstraint,
    Table,
    func,
    insert,
    select,
    text,
)

from tocsin import Tocsin
from tocsin.core.schedules.identity import definition_digest
from tocsin.engine.ids import uuid7s
from tocsin.settings import Settings
from tocsin.store.schema import (
    ONE_ACTIVE_CLOCK_WHERE,
    records,
    runs,
    tables,
    trigger_definitions,
    trigger_state,
)

NOW = datetime(2026, 8, 27, 5, 2, 13, tzinfo=UTC)
TRIGGERS_PER_TABLE = 5
TABLE_LIMIT = 2000
RECORD_LIMIT = 10_000
BATCH = 1000


def note(*, chatroom: bool = False) -> list[dict[str, Any]]:
    """A notify action; triggers post to their own table's chatroom (no ``chatroom_id``: a
    foreign one is refused). The raw baseline keeps the id it always had."""
    action: dict[str, Any] = {"type": "notify", "message": "x"}
    return [{**action, "chatroom_id": str(uuid.uuid4())} if chatroom else action]


def clock_triggers() -> list[dict[str, Any]]:
    every = [60 * (i + 1) for i in range(TRIGGERS_PER_TABLE)]
    return [
        {"on": "schedule", "schedule": {"type": "interval", "every_seconds": s}, "actions": note()}
        for s in every
    ]


def insert_batched(t: Tocsin, table: Table, rows: list[dict[str, Any]]) -> None:
    with t.store.engine.begin() as conn:
        for k in range(0, len(rows), BATCH):
            conn.execute(insert(table), rows[k : k + BATCH])


def clone_tables(t: Tocsin, n_tables: int, *, ticked_at: datetime | None = None) -> None:
    """One table configured through the facade, ``n_tables - 1`` clones inserted in bulk.

    The clones copy the template's rows as they are, ``next_due_at`` included: right after
    ``set_triggers`` that is NULL (every clone is a candidate, all due). With ``ticked_at`` the
    template is ticked there first, so the clones copy the consumed windows and a future
    ``next_due_at`` (none is a candidate until the next window).
    """
    tid = t.create_table("chatroom", str(uuid.uuid4()), "T0", {"Due": "datetime"}, now=NOW)["id"]
    t.set_triggers(tid, clock_triggers(), now=NOW)
    if ticked_at is not None:
        report = t.tick(now=ticked_at, table_limit=1)
        assert report["runs_created"] == TRIGGERS_PER_TABLE, report
    with t.store.engine.connect() as conn:
        table_row = dict(conn.execute(select(tables).where(tables.c.id == tid)).mappings().one())
        states = [
            dict(r)
            for r in conn.execute(
                select(trigger_state).where(trigger_state.c.table_id == tid)
            ).mappings()
        ]
    table_rows, state_rows, definitions = [], [], []
    table_ids = uuid7s(NOW, n_tables - 1)  # the ids create_table would give them at NOW
    for i in range(1, n_tables):
        new_tid = table_ids[i - 1]
        ids = {s["trigger_id"]: f"trg_{uuid.uuid4().hex[:20]}" for s in states}
        config = copy.deepcopy(table_row["triggers"])
        hashes = {}
        for trig in config:
            trig["id"] = ids[trig["id"]]
            hashes[trig["id"]] = definition_digest(trig)  # what saving the config stores
            definitions.append({"hash": hashes[trig["id"]], "definition": trig})
        table_rows.append({**table_row, "id": new_tid, "name": f"T{i}", "triggers": config})
        state_rows += [
            {
                **s,
                "trigger_id": ids[s["trigger_id"]],
                "table_id": new_tid,
                "definition_hash": hashes[ids[s["trigger_id"]]],
            }
            for s in states
        ]
    insert_batched(t, tables, table_rows)
    insert_batched(t, trigger_state, state_rows)
    insert_batched(t, trigger_definitions, definitions)


def raw_insert_rate(t: Tocsin, n_rows: int, *, with_indexes: bool = False) -> float:
    """Rows/s of a plain batched INSERT of ``n_rows`` runs-shaped rows into this database.

    The table has the columns and types of ``runs`` and a primary key (no secondary index;
    ``with_indexes``: also copies of the three indexes of ``runs``, the partial unique one
    included); values are prepared beforehand (JSON already serialized, naive UTC instants) and
    sent with one textual INSERT per 1,000-row executemany: the database's and driver's cost.
    """
    name = "bench_raw_runs_idx" if with_indexes else "bench_raw_runs"
    raw = Table(
        name,
        MetaData(),
        *(Column(c.name, c.type, nullable=c.nullable) for c in runs.c),
        PrimaryKeyConstraint("id"),
    )
    if with_indexes:
        Index(f"{name}_tc", raw.c.table_id, raw.c.created_at)
        Index(f"{name}_su", raw.c.status, raw.c.updated_at)
        where = text(ONE_ACTIVE_CLOCK_WHERE)
        Index(
            f"{name}_uq", raw.c.trigger_id, unique=True, postgresql_where=where, sqlite_where=where
        )
    raw.create(t.store.engine)
    at = (NOW + timedelta(seconds=1)).replace(tzinfo=None)
    schedule = {"type": "interval", "every_seconds": 60}  # as large as a tick's frozen definition
    action = {"id": "act_0123456789ab", **note(chatroom=True)[0]}
    definition = json.dumps(
        {"id": "trg_0123456789ab", "on": "schedule", "schedule": schedule, "actions": [action]}
    )
    ids = uuid7s(NOW, n_rows)  # the tick's run ids are of this kind
    rows = [
        {
            "id": ids[k],
            "table_id": str(uuid.uuid4()),
            "scope": f"chatroom:{uuid.uuid4()}",  # the run's scope, as the tick writes it
            "trigger_id": f"trg_{uuid.uuid4().hex[:20]}",
            "definition": definition,
            "identity": "2026-08-27T05:02:13Z",
            "at": at,
        }
        for k in range(n_rows)
    ]
    stmt = text(
        f"INSERT INTO {name} (id, kind, table_id, scope, trigger_id, source, clock, status,"
        " attempts, action_results, payload, definition, identity, scheduled_for, created_at,"
        " updated_at) VALUES (:id, 'actions', :table_id, :scope, :trigger_id, 'schedule', true,"
        " 'pending', 0, '[]', '{}', :definition, :identity, :at, :at, :at)"
    )
    t0 = time.perf_counter()
    with t.store.engine.begin() as conn:
        for k in range(0, n_rows, BATCH):
            conn.execute(stmt, rows[k : k + BATCH])
    return n_rows / (time.perf_counter() - t0)


def bench_all_due(t: Tocsin, n_tables: int) -> tuple[int, float, int]:
    """(a): runs created, seconds, ticks."""
    at = NOW + timedelta(seconds=1)
    created, ticks = 0, 0
    t0 = time.perf_counter()
    while True:
        r = t.tick(now=at, table_limit=TABLE_LIMIT)
        ticks += 1
        created += r["runs_created"]
        if r["tables_scanned"] == 0:
            break
    return created, time.perf_counter() - t0, ticks


def bench_idle(t: Tocsin) -> tuple[float, float]:
    """(b): median and max seconds of a tick with nothing due (windows 60 s apart)."""
    times = []
    for k in range(7):
        t0 = time.perf_counter()
        r = t.tick(now=NOW + timedelta(seconds=2 + k), table_limit=TABLE_LIMIT)
        times.append(time.perf_counter() - t0)
        assert r["runs_created"] == 0 and r["tables_scanned"] == 0, r
    return statistics.median(times), max(times)


def bench_date(t: Tocsin, n_records: int) -> tuple[int, float]:
    """(c): records classified and seconds, over (up to) 3 ticks of a 1-table date trigger."""
    tid = t.create_table("chatroom", str(uuid.uuid4()), "Big", {"Due": "datetime"}, now=NOW)["id"]
    rows = [
        {
            "id": str(uuid.uuid4()),
            "table_id": tid,
            "data": {"Due": "2027-01-01T00:00"},
            "trashed": False,
            "created_at": NOW - timedelta(microseconds=n_records - i),
            "updated_at": NOW,
        }
        for i in range(n_records)
    ]
    insert_batched(t, records, rows)
    del rows
    trig = {"on": "schedule", "schedule": {"type": "date_column_reached", "column": "Due"}}
    t.set_triggers(tid, [{**trig, "actions": note()}], now=NOW)
    per_tick = min(n_records, RECORD_LIMIT * 11)  # first page + 10 more, none due
    ticks = 3 if n_records > 3 * per_tick else 1  # within one lap (a closed lap idles)
    n, t0 = 0, time.perf_counter()
    for k in range(ticks):
        r = t.tick(now=NOW + timedelta(seconds=10 + k), table_limit=1, record_limit=RECORD_LIMIT)
        assert r["tables_scanned"] == 1 and r["runs_created"] == 0, r
        n += per_tick
    return n, time.perf_counter() - t0


def all_due_round(t: Tocsin, n_tables: int) -> tuple[float, float, float, int]:
    """One round of (a) on a fresh store: (tick runs/s, raw rows/s, raw-with-indexes rows/s,
    ticks)."""
    clone_tables(t, n_tables)
    created, secs, ticks = bench_all_due(t, n_tables)
    assert created == n_tables * TRIGGERS_PER_TABLE, created
    raw = raw_insert_rate(t, created)
    raw_idx = raw_insert_rate(t, created, with_indexes=True)
    return created / secs, raw, raw_idx, ticks


def run_backend(name: str, fresh: Callable[[], Any], args: argparse.Namespace) -> None:
    """(a) ``args.rounds`` times, each on a fresh database (the median is reported: one drain
    takes seconds, and a shared machine's noise moves single figures by several percent), then
    (b) and (c) on the last one."""
    n_tables, n_records = args.tables, args.records
    rounds: list[tuple[float, float, float, int]] = []
    for k in range(args.rounds):
        with fresh() as url:
            t = Tocsin.open(url, settings=Settings(database_url=url))
            try:
                rounds.append(all_due_round(t, n_tables))
                rate, raw, raw_idx, ticks = rounds[-1]
                print(
                    f"[{name}] (a) round {k + 1}: {n_tables * TRIGGERS_PER_TABLE:,} runs in "
                    f"{ticks} ticks at {rate:,.0f} runs/s | raw batched INSERT {raw:,.0f} rows/s "
                    f"| ratio {rate / raw:.1%} | raw into a copy of runs with its three indexes "
                    f"{raw_idx:,.0f} rows/s",
                    flush=True,
                )
                if k + 1 < args.rounds:
                    continue
                rate = statistics.median(r[0] for r in rounds)
                raw = statistics.median(r[1] for r in rounds)
                ratio = statistics.median(r[0] / r[1] for r in rounds)
                print(
                    f"[{name}] (a) all due, median of {len(rounds)} rounds: {rate:,.0f} runs/s | "
                    f"raw batched INSERT of the same number of rows: {raw:,.0f} rows/s | "
                    f"ratio {ratio:.1%} (target >= 25%)",
                    flush=True,
                )
                med, worst = bench_idle(t)
                print(
                    f"[{name}] (b) nothing due: tick {med * 1000:.1f} ms median, "
                    f"{worst * 1000:.1f} ms max of 7 (target <= 50 ms)",
                    flush=True,
                )
                n, secs = bench_date(t, n_records)
                print(
                    f"[{name}] (c) date trigger over {n_records:,} records: {n:,} classified in "
                    f"{secs:.2f}s = {n / secs:,.0f} records/s",
                    flush=True,
                )
            finally:
                t.store.dispose()


def bench_idle_at_scale(name: str, fresh: Callable[[], Any], n_tables: int) -> None:
    """(b'): an idle tick with ``n_tables`` x 5 clock triggers, none due."""
    with fresh() as url:
        t = Tocsin.open(url, settings=Settings(database_url=url))
        try:
            clone_tables(t, n_tables, ticked_at=NOW)  # next windows at NOW + 60 s
            with t.store.engine.connect() as conn:
                n_states = conn.execute(select(func.count()).select_from(trigger_state))
                assert n_states.scalar_one() == n_tables * TRIGGERS_PER_TABLE
            assert t.tick_backlog(now=NOW + timedelta(seconds=8)) == 0
            med, worst = bench_idle(t)
            print(
                f"[{name}] (b') nothing due, {n_tables:,} tables x {TRIGGERS_PER_TABLE} clock "
                f"triggers = {n_tables * TRIGGERS_PER_TABLE:,}: tick {med * 1000:.1f} ms median, "
                f"{worst * 1000:.1f} ms max of 7 (target <= 20 ms)",
                flush=True,
            )
        finally:
            t.store.dispose()


def _tick_process(url: str, barrier: Any, at: datetime, out: Any) -> None:
    """(c') one tick process: open, wait for the others, tick until no candidate is left."""
    t = Tocsin.open(url, settings=Settings(database_url=url))
    try:
        created = ticks = 0
        barrier.wait()
        while True:
            report = t.tick(now=at, table_limit=TABLE_LIMIT)
            created, ticks = created + report["runs_created"], ticks + 1
            if report["tables_scanned"] == 0:
                # nothing claimed: done, unless other processes still hold candidates
                if t.tick_backlog(now=at) == 0:
                    break
                time.sleep(0.005)
        out.put((created, ticks, time.perf_counter()))
    finally:
        t.store.dispose()


def bench_processes(base: str, n_tables: int, counts: list[int]) -> None:
    """(c'): N tick processes on one PostgreSQL, each N on a fresh schema."""
    ctx = multiprocessing.get_context("spawn")
    at = NOW + timedelta(seconds=1)
    expected = n_tables * TRIGGERS_PER_TABLE
    rates: dict[int, float] = {}
    for n in counts:
        with pg_schema(base) as url:
            t = Tocsin.open(url, settings=Settings(database_url=url))
            try:
                clone_tables(t, n_tables)
                barrier, out = ctx.Barrier(n + 1), ctx.Queue()
                procs = [
                    ctx.Process(target=_tick_process, args=(url, barrier, at, out))
                    for _ in range(n)
                ]
                for p in procs:
                    p.start()
                barrier.wait(timeout=120)
                t0 = time.perf_counter()
                results = [out.get(timeout=600) for _ in procs]
                for p in procs:
                    p.join(60)
                assert all(p.exitcode == 0 for p in procs), [p.exitcode for p in procs]
                secs = max(r[2] for r in results) - t0
                with t.store.engine.connect() as conn:
                    total = conn.execute(text("SELECT count(*) FROM runs")).scalar_one()
                    twice = conn.execute(
                        text(
                            "SELECT count(*) FROM (SELECT trigger_id, identity FROM runs"
                            " GROUP BY trigger_id, identity HAVING count(*) > 1) d"
                        )
                    ).scalar_one()
                assert total == expected and twice == 0, (total, twice)
                assert sum(r[0] for r in results) == expected, results
            finally:
                t.store.dispose()
        rates[n] = expected / secs
        # the ratio needs the one-process figure (``--processes`` starting with 1)
        ratio = (
            f" | ratio to 1 process {rates[n] / rates[1]:.0%} (target >= 100%)"
            if counts[0] == 1
            else ""
        )
        print(
            f"[postgresql] (c') {n} tick process{'es' if n > 1 else ''}: {expected:,} runs in "
            f"{secs:.2f}s = {rates[n]:,.0f} runs/s{ratio} | ticks per process "
            f"{[r[1] for r in results]} | "
            f"{total:,} runs, no identity twice",
            flush=True,
        )


@contextmanager
def sqlite_file() -> Iterator[str]:
    with tempfile.TemporaryDirectory() as tmp:
        yield f"sqlite:///{Path(tmp) / 'tick_bench.db'}"


@contextmanager
def pg_schema(base: str) -> Iterator[str]:
    schema = "tick_bench_" + uuid.uuid4().hex[:8]
    with psycopg.connect(base, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    try:
        yield f"{base}?options=-csearch_path%3D{schema}"
    finally:
        with psycopg.connect(base, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA {schema} CASCADE")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tables", type=int, default=10_000)
    ap.add_argument("--records", type=int, default=1_000_000)
    ap.add_argument("--backend", choices=("sqlite", "postgresql", "both"), default="both")
    ap.add_argument("--pg-url", default="postgresql://postgres@127.0.0.1:5432/test")
    ap.add_argument("--rounds", type=int, default=3, help="rounds of (a), median reported")
    ap.add_argument("--parts", default="abc,idle,procs", help="which of abc, idle, procs")
    ap.add_argument("--idle-tables", type=int, default=20_000, help="tables of (b')")
    ap.add_argument("--processes", default="1,2,4", help="tick process counts of (c')")
    args = ap.parse_args()
    parts = {p.strip() for p in args.parts.split(",") if p.strip()}
    if not parts <= {"abc", "idle", "procs"}:
        ap.error(f"--parts: unknown {sorted(parts - {'abc', 'idle', 'procs'})}")
    counts = [int(n) for n in args.processes.split(",")]
    if args.backend in ("sqlite", "both"):
        if "abc" in parts:
            run_backend("sqlite", sqlite_file, args)
        if "idle" in parts:
            bench_idle_at_scale("sqlite", sqlite_file, args.idle_tables)
    if args.backend in ("postgresql", "both"):
        if "abc" in parts:
            run_backend("postgresql", lambda: pg_schema(args.pg_url), args)
        if "idle" in parts:
            bench_idle_at_scale("postgresql", lambda: pg_schema(args.pg_url), args.idle_tables)
        if "procs" in parts:
            bench_processes(args.pg_url, args.tables, counts)
    return 0


if __name__ == "__main__":
    sys.exit(main())
