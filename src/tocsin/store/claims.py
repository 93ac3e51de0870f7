"""THE candidate claim of the tick (SPEC §6; DESIGN §5; STYLE F2, R5).

A candidate (one predicate, :data:`ELIGIBLE`): live, triggers not SQL NULL, ``next_due_at``
unknown or ``<= now``. The tick lists candidate ids in rotation order (``last_ticked_at`` NULLS
FIRST, then id: every table is reached in turn), then claims a batch at a time, re-checking the
predicate. PostgreSQL: ``FOR NO KEY UPDATE OF tables SKIP LOCKED`` (overlapping ticks never block
each other, nor record writes, and get disjoint tables). SQLite: SQLAlchemy drops ``FOR UPDATE
SKIP LOCKED`` silently (F2): claim inside ``store.begin()`` (``BEGIN IMMEDIATE``), so a second
tick waits for the first. The ledger key stays the fence on both (``ledger.claim_occurrences``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from tocsin.store.bulk import instant_binder, update_rows
from tocsin.store.tx import Tx

ELIGIBLE = (
    "+trashed = false AND triggers IS NOT NULL AND (+next_due_at IS NULL OR +next_due_at <= ?)"
)
# the due arm as two seeks of ix_tables_next_due: with the whole predicate SQLite walked every live
# table through ix_tables_candidates (trashed, …) to skip the sort (idle tick, 20,000 tables:
# ~30 ms against 0.1 ms)
DUE = (
    "id IN (SELECT id FROM tables WHERE next_due_at IS NULL"
    " UNION ALL SELECT id FROM tables WHERE next_due_at <= ?)"
)
IN_CHUNK = 500  # ids per IN (...) list on SQLite: well under its bound-parameter limit


def _sql(tx: Tx, sql: str) -> str:
    """``sql`` in the connection's dialect: PostgreSQL takes ``%s`` and has no unary ``+`` trick
    (on SQLite it keeps the planner off ``ix_tables_candidates`` when the ids are known)."""
    return sql.replace("+", "").replace("?", "%s") if tx.is_postgres else sql


def candidate_table_ids(tx: Tx, *, now: datetime, limit: int) -> list[str]:
    """Up to ``limit`` candidate ids, least recently ticked first (a plain read, no lock)."""
    nulls_first = " NULLS FIRST" if tx.is_postgres else ""  # SQLite sorts NULL first
    order = f" ORDER BY last_ticked_at{nulls_first}, id LIMIT ?"
    sql = f"SELECT id FROM tables WHERE {DUE} AND {ELIGIBLE}{order}"
    at = instant_binder(tx)(now)
    params = (at, at, limit)
    return [str(r[0]) for r in tx.conn.exec_driver_sql(_sql(tx, sql), params).fetchall()]


def claim_candidate_tables(
    tx: Tx, *, table_ids: Sequence[str], now: datetime
) -> list[dict[str, Any]]:
    """Lock those of ``table_ids`` that are still candidates and not taken by another tick; in
    input order, each ``{id, columns, triggers}`` (the configs decoded)."""
    tx.require_writable()
    at = instant_binder(tx)(now)
    found: dict[str, dict[str, Any]] = {}
    if tx.is_postgres:
        sql = _sql(tx, f"SELECT id, columns, triggers FROM tables WHERE id = ANY(?) AND {ELIGIBLE}")
        rows = tx.conn.exec_driver_sql(
            sql + " FOR NO KEY UPDATE OF tables SKIP LOCKED", (list(table_ids), at)
        ).fetchall()
    else:
        rows = []
        for start in range(0, len(table_ids), IN_CHUNK):
            chunk = table_ids[start : start + IN_CHUNK]
            marks = ", ".join("?" * len(chunk))
            sql = f"SELECT id, columns, triggers FROM tables WHERE id IN ({marks}) AND {ELIGIBLE}"
            rows += tx.conn.exec_driver_sql(sql, (*chunk, at)).fetchall()
    decoded: dict[str, Any] = {}  # SQLite: tables share their columns' text
    for tid, columns, config in rows:
        if not tx.is_postgres:
            columns = decoded.get(columns) or decoded.setdefault(columns, json.loads(columns))
            config = json.loads(config)
        found[str(tid)] = {"id": str(tid), "columns": columns, "triggers": config}
    return [found[i] for i in table_ids if i in found]


def finish_tables(tx: Tx, *, values: Sequence[tuple[str, datetime]], now: datetime) -> None:
    """``(table_id, next_due_at)`` pairs: each claimed table's next due instant, and
    ``last_ticked_at`` stamped ``now`` (the rotation moves on)."""
    bind = instant_binder(tx)
    stamp = bind(now)
    update_rows(
        tx,
        (("tid", "text"), ("n", "timestamp"), ("t", "timestamp")),
        "UPDATE tables SET next_due_at = v.n, last_ticked_at = v.t FROM v WHERE tables.id = v.tid",
        [(tid, bind(n), stamp) for tid, n in values],
        "UPDATE tables SET next_due_at = ?2, last_ticked_at = ?3 WHERE id = ?1",
    )


def count_backlog(tx: Tx, *, now: datetime) -> int:
    """How many candidate tables no tick at ``now`` has reached yet (``last_ticked_at`` unset or
    earlier): the work a tick period left behind."""
    sql = (
        f"SELECT count(*) FROM tables WHERE {DUE} AND {ELIGIBLE}"
        " AND (last_ticked_at IS NULL OR last_ticked_at < ?)"
    )
    at = instant_binder(tx)(now)
    return int(tx.conn.exec_driver_sql(_sql(tx, sql), (at, at, at)).scalar_one())


__all__ = [
    "ELIGIBLE",
    "candidate_table_ids",
    "claim_candidate_tables",
    "count_backlog",
    "finish_tables",
]
