"""What a workflow run's two updates cost on PostgreSQL, by the indexes they touch (issue 12).

A run is claimed (``pending -> running``: status, attempts, started_at, updated_at) and finished
(``running -> success``: status, steps, output, updated_at, ended_at). Both change ``status``
and ``updated_at``, which ``workflow_runs``' indexes name (``ix_workflow_runs_status``, and the
predicate of ``ix_workflow_runs_schedule``), so neither can be a HOT update: each writes a new
entry into every index of the table. This script times both updates, 500 rows per statement as
tocsin's batch does, with plain psycopg calls on 10,000 rows of two tables:

- ``as tocsin has it``: ``workflow_runs`` as ``Tocsin.open`` creates it (its four indexes);
- ``HOT-able``: the same columns with only the indexes no update changes (the primary key and
  ``(workflow_id, created_at)``) and ``fillfactor`` 40, so the new row versions fit in their page.

It prints the seconds of each and how many updates PostgreSQL made HOT. The gap is what a schema
keeping the pending queue, the running leases and the overlap fence in narrow tables of their own
(inserted and deleted, never updated in place) could win; tocsin does not have that schema.

Environment: ``BENCH_PG_URL`` (default ``postgresql://postgres@127.0.0.1:5432/test``).
Run: ``.venv/bin/python bench/run_updates.py``.
"""

from __future__ import annotations

import os
import time
import uuid

import psycopg

from tocsin.service import Tocsin
from tocsin.settings import Settings

PG_URL = os.environ.get("BENCH_PG_URL", "postgresql://postgres@127.0.0.1:5432/test")
N, BATCH = 10_000, 500
STEPS = '[{"id": "noop", "status": "success", "output": {}}]'

_FILL = (
    "INSERT INTO {t} (id, workflow_id, schedule_id, trigger, status, attempts, input, steps,"
    " created_at, updated_at) SELECT gen_random_uuid()::text, 'noop', 'sch_' || i, 'scheduled',"
    " 'pending', 0, '{{}}', '[]', now(), now() FROM generate_series(1, %s) AS i"
)
_CLAIM = (
    "UPDATE {t} SET status = 'running', attempts = attempts + 1, started_at = now(),"
    " updated_at = now() WHERE id = ANY(%s)"
)
_FINISH = (
    "UPDATE {t} SET status = 'success', steps = CAST(%s AS json), output = '{{}}',"
    " updated_at = now(), ended_at = now() WHERE id = ANY(%s) AND status = 'running'"
)


def timed(conn: psycopg.Connection, table: str) -> tuple[float, float, int, int]:
    """Seconds of the claims and of the finishes (500 rows a statement, a commit each), and how
    many of the 2 x N updates were HOT out of how many."""
    conn.execute(_FILL.format(t=table), (N,))
    conn.commit()
    ids = [r[0] for r in conn.execute(f"SELECT id FROM {table} ORDER BY id").fetchall()]
    batches = [ids[i : i + BATCH] for i in range(0, len(ids), BATCH)]
    start = time.perf_counter()
    for batch in batches:
        conn.execute(_CLAIM.format(t=table), (batch,))
        conn.commit()
    claimed = time.perf_counter() - start
    start = time.perf_counter()
    for batch in batches:
        conn.execute(_FINISH.format(t=table), (STEPS, batch))
        conn.commit()
    finished = time.perf_counter() - start
    conn.execute("SELECT pg_stat_force_next_flush()")
    conn.commit()
    hot, all_ = conn.execute(
        "SELECT n_tup_hot_upd, n_tup_upd FROM pg_stat_user_tables"
        " WHERE relname = %s AND schemaname = current_schema()",
        (table,),
    ).fetchone() or (0, 0)
    return claimed, finished, int(hot), int(all_)


def main() -> None:
    try:
        psycopg.connect(PG_URL, connect_timeout=3).close()
    except psycopg.Error as exc:
        raise SystemExit(f"run_updates: needs PostgreSQL at {PG_URL} ({exc})") from None
    schema = f"runupd_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(PG_URL, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    sep = "&" if "?" in PG_URL else "?"
    url = f"{PG_URL}{sep}options=-csearch_path%3D{schema}"
    try:
        Tocsin.open(url, settings=Settings(database_url=url)).close()  # tocsin's own tables
        with psycopg.connect(PG_URL, options=f"-csearch_path={schema}") as conn:
            conn.execute(
                "CREATE TABLE hot_runs (LIKE workflow_runs INCLUDING DEFAULTS)"
                " WITH (fillfactor = 40)"
            )
            conn.execute("ALTER TABLE hot_runs ADD PRIMARY KEY (id)")
            conn.execute("CREATE INDEX ix_hot_runs_workflow ON hot_runs (workflow_id, created_at)")
            conn.commit()
            print(f"{N} workflow runs, claimed then finished {BATCH} per statement (plain psycopg)")
            print(f"{'':40} {'claims':>8} {'finishes':>9} {'HOT updates':>14}")
            for name, table in (
                ("as tocsin has it (4 indexes)", "workflow_runs"),
                ("HOT-able (2 indexes, fillfactor 40)", "hot_runs"),
            ):
                claimed, finished, hot, all_ = timed(conn, table)
                print(f"{name:40} {claimed:>7.3f}s {finished:>8.3f}s {hot:>7} of {all_}")
    finally:
        with psycopg.connect(PG_URL, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA {schema} CASCADE")


if __name__ == "__main__":
    main()
