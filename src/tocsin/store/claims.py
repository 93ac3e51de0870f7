"""THE candidate claim of the tick (SPEC §6; DESIGN §5; STYLE F2, R5).

A candidate (one predicate, :data:`ELIGIBLE`): live, triggers not SQL NULL, ``next_due_at``
unknown or ``<= now``. The tick claims a batch at a time in rotation order (``last_ticked_at``
NULLS FIRST, then id: every table is reached in turn), in the batch's transaction. PostgreSQL:
``FOR NO KEY UPDATE OF tables SKIP LOCKED`` (overlapping ticks never block each other, nor record
writes, and take disjoint tables). SQLite: SQLAlchemy drops ``FOR UPDATE SKIP LOCKED`` silently
(F2): claim inside ``store.begin()`` (``BEGIN IMMEDIATE``), so a second tick waits for the
first. The ledger key stays the fence on both (``ledger.claim_occurrences``).
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
# SQLite: the due arm as two seeks of ix_tables_next_due: with the whole predicate SQLite walked
# every live table through ix_tables_candidates (trashed, …) to skip the sort (idle tick, 20,000
# tables: ~30 ms against 0.1 ms)
DUE_SQLITE = (
    "id IN (SELECT id FROM tables WHERE next_due_at IS NULL"
    " UNION ALL SELECT id FROM tables WHERE next_due_at <= ?)"
)
# PostgreSQL: no self-referencing subquery. A row another tick updated after this statement's
# snapshot is re-checked by EvalPlanQual, which re-runs such a subquery whole for every re-checked
# row: two concurrent ticks took 20-30 s instead of 2 (50,000 due runs); a BitmapOr of the two
# index conditions answers the idle tick as fast.
DUE_POSTGRES = "(next_due_at IS NULL OR next_due_at <= ?)"


def _due(tx: Tx) -> str:
    return DUE_POSTGRES if tx.is_postgres else DUE_SQLITE


def _sql(tx: Tx, sql: str) -> str:
    """``sql`` in the connection's dialect: PostgreSQL takes ``%s`` and has no unary ``+`` trick
    (on SQLite it keeps the planner off ``ix_tables_candidates`` when the ids are known)."""
    return sql.replace("+", "").replace("?", "%s") if tx.is_postgres else sql


def claim_candidate_tables(
    tx: Tx,
    *,
    now: datetime,
    limit: int,
    skip_ids: Sequence[str] = (),
    only_ids: Sequence[str] | None = None,
) -> list[dict[str, Any]]:
    """Lock and return up to ``limit`` candidate tables, least recently ticked first, each
    ``{id, columns, triggers}`` (``columns`` decoded; ``triggers`` the stored config's JSON
    text, decoded by the tick one table at a time): not ``skip_ids`` (what this tick already
    took), and only ``only_ids`` when given. PostgreSQL skips the tables another tick holds."""
    tx.require_writable()
    at = instant_binder(tx)(now)
    where, params = f"{_due(tx)} AND {ELIGIBLE}", [at, at]
    for ids, test in ((skip_ids, "NOT IN"), (only_ids, "IN")):
        if ids is not None and (ids or test == "IN"):
            where += f" AND id {test} ({', '.join('?' * len(ids)) or 'NULL'})"
            params += ids
    nulls = " NULLS FIRST" if tx.is_postgres else ""  # SQLite sorts NULL first
    config = "CAST(triggers AS text)" if tx.is_postgres else "triggers"
    sql = f"SELECT id, columns, {config} FROM tables WHERE {where}"
    sql += f" ORDER BY last_ticked_at{nulls}, id LIMIT ?"
    if tx.is_postgres:  # NO KEY UPDATE: record writes (their FK KEY SHARE) never wait for a tick
        sql += " FOR NO KEY UPDATE OF tables SKIP LOCKED"
    rows = tx.conn.exec_driver_sql(_sql(tx, sql), (*params, limit)).fetchall()
    decoded: dict[str, Any] = {}  # SQLite: tables share their columns' text
    found = []
    for tid, columns, text in rows:
        if not tx.is_postgres:
            columns = decoded.get(columns) or decoded.setdefault(columns, json.loads(columns))
        found.append({"id": str(tid), "columns": columns, "triggers": text})
    return found


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
        f"SELECT count(*) FROM tables WHERE {_due(tx)} AND {ELIGIBLE}"
        " AND (last_ticked_at IS NULL OR last_ticked_at < ?)"
    )
    at = instant_binder(tx)(now)
    return int(tx.conn.exec_driver_sql(_sql(tx, sql), (at, at, at)).scalar_one())


__all__ = [
    "ELIGIBLE",
    "claim_candidate_tables",
    "count_backlog",
    "finish_tables",
]
