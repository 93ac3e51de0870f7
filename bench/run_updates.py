"""What a workflow run's writes cost on PostgreSQL, by the indexes they touch.

A run is inserted pending, claimed (``pending -> running``: status, attempts, started_at,
updated_at) and finished (``running -> success``: status, steps, output, updated_at,
ended_at). Both updates change ``status`` and ``updated_at``, which ``workflow_runs``' indexes
name (``ix_workflow_runs_status``, and the predicate of ``ix_workflow_runs_schedule``), so
neither can be a HOT update: each writes a new entry into every index of the table. This
script times the three writes, 500 rows per statement and a commit each as tocsin's batches
do, with plain psycopg calls on 10,000 runs, under three schemas:

- ``as tocsin had it``: ``workflow_runs`` as ``Tocsin.open`` created it before migration 0035
  moved the workflow runs into ``runs`` (its four indexes; made here, :data:`_WORKFLOW_RUNS`);
- ``HOT-able``: the same columns with only the indexes no update changes (the primary key and
  ``(workflow_id, created_at)``) at ``fillfactor`` 40, so the new row versions fit in their
  page; it cannot find pending runs, fence a schedule or sweep stale runs, so
- ``HOT-able + queue and leases``: that table plus what would find them instead, a pending
  queue row per run (inserted with it, deleted by the claim, which inserts a lease row that
  the finish deletes; both narrow tables indexed by schedule for the overlap fence).

It prints the seconds of each write, their total, and how many updates PostgreSQL made HOT.

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

_INSERT = (
    "INSERT INTO {t} (id, workflow_id, schedule_id, trigger, status, attempts, input, steps,"
    " created_at, updated_at) SELECT u.id, 'noop', 'sch_' || u.id, 'scheduled', 'pending', 0,"
    " '{{}}', '[]', now(), now() FROM unnest(CAST(%s AS text[])) AS u(id)"
)
_CLAIM = (
    "UPDATE {t} SET status = 'running', attempts = attempts + 1, started_at = now(),"
    " updated_at = now() WHERE id = ANY(%s)"
)
_FINISH = (
    "UPDATE {t} SET status = 'success', steps = CAST(%s AS json), output = '{{}}',"
    " updated_at = now(), ended_at = now() WHERE id = ANY(%s) AND status = 'running'"
)
# the queue and leases variant: what finds pending runs, running runs and a schedule's active ones
_ENQUEUE = (
    "INSERT INTO run_queue (run_id, workflow_id, schedule_id, queued_at) SELECT u.id, 'noop',"
    " 'sch_' || u.id, now() FROM unnest(CAST(%s AS text[])) AS u(id)"
)
_LEASE = (
    "WITH p AS (DELETE FROM run_queue WHERE run_id = ANY(%s) RETURNING run_id, schedule_id)"
    " INSERT INTO run_leases (run_id, schedule_id) SELECT run_id, schedule_id FROM p"
)
_RELEASE = "DELETE FROM run_leases WHERE run_id = ANY(%s)"
# ``workflow_runs`` before 0035 (its columns and four indexes): what the variants are measured by
_WORKFLOW_RUNS = (
    "CREATE TABLE workflow_runs (id varchar(36) PRIMARY KEY, workflow_id varchar(64) NOT NULL,"
    " schedule_id varchar(64), trigger varchar(16) NOT NULL, status varchar(16) NOT NULL,"
    " attempts integer NOT NULL DEFAULT 0, input json, output json, error text,"
    " steps json NOT NULL, initial_state json, request_context json, suspend_payload json,"
    " resume_data json, scheduled_for timestamp, created_at timestamp NOT NULL,"
    " updated_at timestamp NOT NULL, started_at timestamp, ended_at timestamp,"
    " attempt integer NOT NULL DEFAULT 1, next_attempt_at timestamp, alert json)",
    "CREATE INDEX ix_workflow_runs_status ON workflow_runs (status, updated_at, id)",
    "CREATE INDEX ix_workflow_runs_workflow ON workflow_runs (workflow_id, created_at)",
    "CREATE INDEX ix_workflow_runs_schedule ON workflow_runs (schedule_id, status)"
    " WHERE status IN ('pending', 'running')",
)
_QUEUE_TABLES = (
    "CREATE TABLE run_queue (run_id text PRIMARY KEY, workflow_id text, schedule_id text,"
    " queued_at timestamp)",
    "CREATE INDEX ix_run_queue_order ON run_queue (queued_at, run_id)",
    "CREATE INDEX ix_run_queue_schedule ON run_queue (schedule_id)",
    "CREATE TABLE run_leases (run_id text PRIMARY KEY, schedule_id text)",
    "CREATE INDEX ix_run_leases_schedule ON run_leases (schedule_id)",
)


def timed(conn: psycopg.Connection, table: str, queued: bool) -> tuple[float, ...]:
    """Seconds of the inserts, the claims and the finishes (500 runs a statement, a commit per
    batch), and how many of the 2 x N updates were HOT out of how many."""
    ids = [str(uuid.uuid4()) for _ in range(N)]
    batches = [ids[i : i + BATCH] for i in range(0, len(ids), BATCH)]
    seconds = []
    for writes in (
        [(_INSERT.format(t=table), ()), *([(_ENQUEUE, ())] if queued else [])],
        [*([(_LEASE, ())] if queued else []), (_CLAIM.format(t=table), ())],
        [(_FINISH.format(t=table), (STEPS,)), *([(_RELEASE, ())] if queued else [])],
    ):
        start = time.perf_counter()
        for batch in batches:
            for sql, args in writes:
                conn.execute(sql, (*args, batch))
            conn.commit()
        seconds.append(time.perf_counter() - start)
    conn.execute("SELECT pg_stat_force_next_flush()")
    conn.commit()
    hot, all_ = conn.execute(
        "SELECT n_tup_hot_upd, n_tup_upd FROM pg_stat_user_tables"
        " WHERE relname = %s AND schemaname = current_schema()",
        (table,),
    ).fetchone() or (0, 0)
    return (*seconds, int(hot), int(all_))


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
            for sql in _WORKFLOW_RUNS:
                conn.execute(sql)
            for name in ("hot_runs", "queued_runs"):
                conn.execute(
                    f"CREATE TABLE {name} (LIKE workflow_runs INCLUDING DEFAULTS)"
                    " WITH (fillfactor = 40)"
                )
                conn.execute(f"ALTER TABLE {name} ADD PRIMARY KEY (id)")
                conn.execute(f"CREATE INDEX ix_{name}_workflow ON {name} (workflow_id, created_at)")
            for sql in _QUEUE_TABLES:
                conn.execute(sql)
            conn.commit()
            print(f"{N} workflow runs inserted, claimed, finished, {BATCH} a statement (psycopg)")
            print(f"{'':44} {'inserts':>8} {'claims':>8} {'finishes':>9} {'total':>7} {'HOT':>15}")
            for label, table, queued in (
                ("as tocsin had it (4 indexes)", "workflow_runs", False),
                ("HOT-able (2 indexes, fillfactor 40)", "hot_runs", False),
                ("HOT-able + queue and leases", "queued_runs", True),
            ):
                inserted, claimed, finished, hot, all_ = timed(conn, table, queued)
                total = inserted + claimed + finished
                print(
                    f"{label:44} {inserted:>7.3f}s {claimed:>7.3f}s {finished:>8.3f}s"
                    f" {total:>6.3f}s {hot:>6} of {all_}"
                )
    finally:
        with psycopg.connect(PG_URL, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA {schema} CASCADE")


if __name__ == "__main__":
    main()
