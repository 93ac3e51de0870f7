"""What differs per dialect beyond SQLAlchemy's compiler (STYLE F3).

- :func:`upsert_insert`: the dialect-specific ``INSERT`` that carries ``ON CONFLICT``.
- :func:`ordered_scans_only`: a PostgreSQL claim walks its ordered index (``SET LOCAL``);
  :func:`keyed_access_only` also rules out reading whole tables and hashing them.

``sqlalchemy.insert`` has no ON CONFLICT clause; PostgreSQL's and SQLite's own ``insert``
constructs do, with the same method names, and both compile ``… ON CONFLICT … DO NOTHING
RETURNING …``.
"""

from __future__ import annotations

from sqlalchemy import Table
from sqlalchemy.dialects import postgresql, sqlite

from tocsin.store.tx import Tx


def upsert_insert(tx: Tx, table: Table) -> postgresql.Insert | sqlite.Insert:
    """An INSERT into ``table`` that supports ``on_conflict_do_nothing`` / ``…_do_update``."""
    if tx.is_postgres:
        return postgresql.insert(table)
    return sqlite.insert(table)


def ordered_scans_only(tx: Tx) -> None:
    """PostgreSQL, for the rest of this transaction: no bitmap scans, so a claim ``WHERE status
    = 'pending' ORDER BY … LIMIT n`` walks its ordered index and stops after ``n`` rows.

    A burst of runs the statistics have not seen yet is estimated at a few rows, and the planner
    bitmap-scans every pending run and sorts them all for each claim. ``SET LOCAL`` ends with
    the transaction: nothing outside it, nor any other connection, is affected."""
    # EXPLAIN ANALYZE, 2026-12-05, PostgreSQL 15, a fresh schema (never analyzed), 10,000 pending
    # workflow runs, the one claim's statement for 1,000 runs (``runs.drain.GROUP_BATCH``;
    # bench/plan_switches.py):
    #   no switch: the visit's first probe (``wrap``) is a Bitmap Heap Scan of all 10,000 pending
    #     runs and a sort for one row, the UPDATE a bitmap scan of runs: 15.8 ms (18.1 ms with
    #     9,000 left)
    #   enable_bitmapscan = off: every probe an Index Scan of ix_runs_pending_scope that stops at
    #     its LIMIT: 12.3 ms (12.3 ms)
    tx.conn.exec_driver_sql("SET LOCAL enable_bitmapscan = off")


_KEYED_ONLY = (
    "SELECT set_config('enable_seqscan', 'off', true),"
    " set_config('enable_bitmapscan', 'off', true),"
    " set_config('enable_hashjoin', 'off', true),"
    " set_config('enable_mergejoin', 'off', true)"
)


def keyed_access_only(tx: Tx) -> None:
    """PostgreSQL, for the rest of this transaction: no sequential or bitmap scans, no hash or
    merge joins (one statement; ``set_config(…, true)`` is ``SET LOCAL``).

    For a transaction whose every read is a page of an ordered index or a lookup by key (the
    tick's schedule pass: the due claim, the overlap fence, the ledger, the updates by id) over
    a burst of rows the statistics have not seen yet."""
    # EXPLAIN ANALYZE, 2026-12-04, PostgreSQL 15, a fresh schema (never analyzed), 10,000 due
    # schedules (bench/plan_switches.py), first page / after 5 pages of 1,000 fired:
    #   the advance ``UPDATE workflow_schedules … FROM unnest(…) WHERE id = v.sid`` (1,000 ids):
    #     without the switches a Hash Join over a Seq Scan of all 10,000 schedules, 9.0 / 8.4 ms
    #     (the scan grows with the table, not the page); with them a Nested Loop on
    #     pk_workflow_schedules, 8.1 / 7.1 ms
    #   the overlap fence (1,000 schedule ids among 5,000 pending runs): a Bitmap Heap Scan,
    #     1.4 ms, against an index scan, 1.1 ms
    #   the due claim ``ORDER BY next_fire_at, id LIMIT 1000``: an Index Scan of
    #     ix_workflow_schedules_due that stops at 1,000 either way, 0.7 / 0.6 ms (on 2026-12-03
    #     it was a Bitmap Heap Scan and a Sort of 5,000 without the switches, 8.2 ms)
    tx.conn.exec_driver_sql(_KEYED_ONLY)


__all__ = ["keyed_access_only", "ordered_scans_only", "upsert_insert"]
