"""The plans the planner switches of ``tocsin.store.dialects`` fix, by EXPLAIN ANALYZE.

A fresh PostgreSQL schema (never analyzed, as after a burst), bench/workflow_bench.py's 10,000
due schedules: the schedule pass's statements (the due claim, the overlap fence, the advance by
id) before and after 5 pages fired, with and without ``keyed_access_only``'s switches; then every
schedule fired into 10,000 pending runs: the one claim of the run queue (the statement of
``store.runs.claim_scoped_runs`` as a worker without a pool sends it: up to ``GROUP_BATCH`` runs of
the workflow ``noop``), with and without ``ordered_scans_only``'s switch.

Run: ``PYTHONPATH=src .venv/bin/python bench/plan_switches.py`` (``BENCH_PG_URL``, default
``postgresql://postgres@127.0.0.1:5432/test``). Prints each plan, one line per node.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Sequence
from datetime import timedelta
from typing import Any

import psycopg
from sqlalchemy.dialects import postgresql

import workflow_bench as wb
from tocsin import Tocsin
from tocsin.runs.drain import GROUP_BATCH
from tocsin.settings import Settings
from tocsin.store.runs import _claim_next
from tocsin.store.schema import runs

PG = os.environ.get("BENCH_PG_URL", "postgresql://postgres@127.0.0.1:5432/test")
KEYED = (
    "SELECT set_config('enable_seqscan', 'off', true),"
    " set_config('enable_bitmapscan', 'off', true),"
    " set_config('enable_hashjoin', 'off', true), set_config('enable_mergejoin', 'off', true)"
)
CLAIM = (
    "SELECT id FROM workflow_schedules WHERE paused_at IS NULL AND next_fire_at IS NOT NULL"
    " AND next_fire_at <= %s AND trigger_tree IS NULL ORDER BY next_fire_at, id LIMIT 1000"
    " FOR UPDATE SKIP LOCKED"
)
FENCE = (
    "SELECT schedule_id FROM runs WHERE schedule_id = ANY(CAST(%b AS text[]))"
    " AND kind = 'workflow' AND status IN ('pending', 'running') AND source <> 'backfill'"
)
ADVANCE = (
    "WITH v(sid, n) AS (SELECT * FROM unnest(CAST(%b AS text[]), CAST(%b AS timestamp[])))"
    " UPDATE workflow_schedules SET next_fire_at = v.n FROM v WHERE workflow_schedules.id = v.sid"
)


def claim_statement(now: Any) -> tuple[str, dict[str, Any]]:
    """The one claim's UPDATE (``store.runs._claim_next``, returning the ids) as driver text, with
    the parameters ``claim_scoped_runs`` sends for a claim of ``GROUP_BATCH`` runs of ``noop``."""
    statement = _claim_next(True, (runs.c.id,), False)
    compiled = statement.compile(dialect=postgresql.dialect(paramstyle="pyformat"))
    n = GROUP_BATCH
    params = {"now": now, "limit": n, "scopes": n, "after": "", "room": "{}", "cap": n}
    params |= {"visit": n, "own": "[]", "actions": 1, "workflows": '["noop"]', "wf": 1}
    params |= {"limits": "{}"}
    return str(compiled), compiled.construct_params(params)


def explain(
    conn: psycopg.Connection[Any],
    label: str,
    setup: Sequence[str],
    sql: str,
    params: tuple[Any, ...] | dict[str, Any],
) -> None:
    with conn.transaction(force_rollback=True):
        for statement in setup:
            conn.execute(statement)
        plan = conn.execute("EXPLAIN (ANALYZE, COSTS OFF) " + sql, params).fetchall()
    print(f"--- {label}")
    for (line,) in plan:
        print("   ", line[:150])


def main() -> None:
    schema = f"plans_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(PG, autocommit=True) as c:
        c.execute(f"CREATE SCHEMA {schema}")
    url = PG.replace("postgresql://", "postgresql+psycopg://", 1)
    url += ("&" if "?" in url else "?") + f"options=-csearch_path%3D{schema}"
    try:
        t = Tocsin.open(url, settings=Settings(database_url=url), workflows=[wb.NOOP])
        wb.seed(t)
        now = wb.DUE + timedelta(seconds=1)
        naive = now.replace(tzinfo=None)
        ids = [f"sch_{i:06d}" for i in range(5000, 6000)]
        nexts = [naive + timedelta(days=1)] * len(ids)
        with psycopg.connect(PG, options=f"-csearch_path={schema}") as conn:
            for stage in ("10,000 due", "after 5 pages fired"):
                if stage != "10,000 due":
                    for _ in range(5):
                        t.fire_schedules(now=now, limit=1000)
                print(f"===== schedule pass, {stage}")
                for setup, name in (([], "no switch"), ([KEYED], "keyed_access_only")):
                    explain(conn, f"due claim, {name}", setup, CLAIM, (naive,))
                    explain(conn, f"overlap fence, {name}", setup, FENCE, (ids,))
                    explain(conn, f"advance, {name}", setup, ADVANCE, (ids, nexts))
            while t.tick(now=now)["schedules_fired"]:
                pass
            claim, params = claim_statement(naive)
            for stage in ("10,000 pending", "after 2 claims"):
                if stage != "10,000 pending":
                    t.work(now=now, limit=1000)
                print(f"===== the one claim, {stage}")
                explain(conn, "no switch", [], claim, params)
                switch = ["SET LOCAL enable_bitmapscan = off"]
                explain(conn, "ordered_scans_only", switch, claim, params)
        t.close()
    finally:
        with psycopg.connect(PG, autocommit=True) as c:
            c.execute(f"DROP SCHEMA {schema} CASCADE")


if __name__ == "__main__":
    main()
