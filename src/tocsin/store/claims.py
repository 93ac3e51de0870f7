"""THE candidate claim of the tick (SPEC §6; DESIGN §5; STYLE F2, R5; docs/INTERNALS.md).

A candidate (one predicate, :data:`ELIGIBLE`): live, triggers not SQL NULL, ``next_due_at``
unknown or ``<= now``; claimed a batch at a time in rotation order (``last_ticked_at`` NULLS
FIRST, then id). PostgreSQL: ``FOR NO KEY UPDATE OF tables SKIP LOCKED`` (overlapping ticks take
disjoint tables and never block record writes). SQLite, where SQLAlchemy drops ``FOR UPDATE``
silently (F2): inside ``store.begin()`` (``BEGIN IMMEDIATE``). The ledger key stays the fence.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from functools import cache
from typing import Any

from tocsin.store.bulk import instant_binder, update_rows
from tocsin.store.tx import Tx

# A candidate, the one predicate: LIVE (``ix_tables_due``'s own predicate, migration 0027) and
# one of the DUE arms.
LIVE = "trashed = false AND triggers IS NOT NULL"
DUE = ("next_due_at IS NULL", "next_due_at <= ?")
ELIGIBLE = f"{LIVE} AND ({' OR '.join(DUE)})"
ORDER = "last_ticked_at, id"  # the rotation (SQLite sorts NULL first, as PostgreSQL is told to)


def _sql(tx: Tx, sql: str) -> str:
    """``sql`` in the connection's dialect (PostgreSQL takes ``%s``)."""
    return sql.replace("?", "%s") if tx.is_postgres else sql


def _candidates(
    tx: Tx, at: Any, extra: str = "", extra_params: Sequence[Any] = ()
) -> tuple[str, list[Any]]:
    """The candidates (``AND extra``) as ``SELECT last_ticked_at, id``, with its parameters.
    SQLite: one arm per DUE condition, each a seek of ``ix_tables_due``; PostgreSQL: the
    predicate as it is (why: docs/INTERNALS.md, "The tick")."""
    if tx.is_postgres:
        return f"SELECT last_ticked_at, id FROM tables WHERE {ELIGIBLE}{extra}", [at, *extra_params]
    source = "SELECT last_ticked_at, id FROM tables INDEXED BY ix_tables_due"
    arms = [f"{source} WHERE {LIVE} AND {arm}{extra}" for arm in DUE]
    return " UNION ALL ".join(arms), [*extra_params, at, *extra_params]


def claim_candidate_tables(
    tx: Tx,
    *,
    now: datetime,
    limit: int,
    skip_ids: Sequence[str] = (),
    only_ids: Sequence[str] | None = None,
) -> list[dict[str, Any]]:
    """Lock and return up to ``limit`` candidate tables, least recently ticked first, each
    ``{id, columns, triggers}`` (``columns`` decoded; ``triggers`` the config's JSON text): not
    ``skip_ids`` (what this tick already took), and only ``only_ids`` when given."""
    tx.require_writable()
    at = instant_binder(tx)(now)
    extra, extra_params = "", list(skip_ids)
    if skip_ids:
        extra += f" AND id NOT IN ({', '.join('?' * len(skip_ids))})"
    if only_ids is not None:
        extra += f" AND id IN ({', '.join('?' * len(only_ids)) or 'NULL'})"
        extra_params += only_ids
    if tx.is_postgres:
        sql = (
            f"SELECT id, columns, CAST(triggers AS text) FROM tables WHERE {ELIGIBLE}{extra}"
            f" ORDER BY last_ticked_at NULLS FIRST, id LIMIT ? FOR NO KEY UPDATE OF tables"
            " SKIP LOCKED"
        )
        params = [at, *extra_params]
    else:
        picked, params = _candidates(tx, at, extra, extra_params)
        sql = (
            f"SELECT id, columns, triggers FROM tables WHERE id IN"
            f" (SELECT id FROM ({picked} ORDER BY {ORDER} LIMIT ?)) ORDER BY {ORDER}"
        )
    rows = tx.conn.exec_driver_sql(_sql(tx, sql), (*params, limit)).fetchall()
    read, pg = cache(json.loads), tx.is_postgres  # SQLite: the columns' text, tables share it
    return [{"id": str(i), "columns": c if pg else read(c), "triggers": t} for i, c, t in rows]


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
    at = instant_binder(tx)(now)
    candidates, params = _candidates(tx, at)
    sql = (
        f"SELECT count(*) FROM ({candidates}) AS c"
        " WHERE c.last_ticked_at IS NULL OR c.last_ticked_at < ?"
    )
    return int(tx.conn.exec_driver_sql(_sql(tx, sql), (*params, at)).scalar_one())
