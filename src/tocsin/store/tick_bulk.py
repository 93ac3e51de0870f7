"""Set-based statements of the tick's clock path (SPEC §6; DESIGN §5; STYLE F3, R5).

The per-trigger statements (``claims``, ``ledger``, ``runs``, ``state``) one row at a time cost
a round trip each; for a batch of candidate tables the tick reads and writes with these instead:
one locking read of the tables, one read of their trigger states, then multi-row writes
(SQLAlchemy's insertmanyvalues / executemany with bound parameters). The rules are the same:

- tables: the candidate list of ``claims`` (live, triggers not NULL, ``next_due_at`` unknown or
  ``<= now``), ``FOR NO KEY UPDATE SKIP LOCKED`` on PostgreSQL; SQLite: inside
  ``store.begin_immediate()``
- ledger claims: ``INSERT … ON CONFLICT DO NOTHING RETURNING`` (an identity already claimed is
  not returned, never an error)
- clock runs: ``ON CONFLICT (trigger_id) WHERE <uq_runs_one_active_clock predicate> DO NOTHING
  RETURNING id``: a refused run is not returned (the caller releases its claim)
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import false, or_, select

from tocsin.store.records import table_dict
from tocsin.store.state import state_dict
from tocsin.store.tables import ONE_ACTIVE_CLOCK_WHERE, runs, tables
from tocsin.store.tables import trigger_state as states_t
from tocsin.store.tx import Tx

IN_CHUNK = 500  # ids per IN (...) list: well under SQLite's bound-parameter limit


def _chunks(ids: Sequence[str]) -> Iterable[list[str]]:
    for start in range(0, len(ids), IN_CHUNK):
        yield list(ids[start : start + IN_CHUNK])


def lock_candidate_tables(
    tx: Tx, *, table_ids: Sequence[str], now: datetime
) -> list[dict[str, Any]]:
    """Lock those of ``table_ids`` that are still candidates (and not taken); in input order.

    Eligibility: the list of ``claims.claim_candidate_tables``; PostgreSQL skips rows another
    transaction holds (``FOR NO KEY UPDATE SKIP LOCKED``: record writes are not blocked).
    """
    tx.require_writable()
    found: dict[str, dict[str, Any]] = {}
    for chunk in _chunks(table_ids):
        stmt = select(tables).where(
            tables.c.id.in_(chunk),
            tables.c.trashed == false(),
            tables.c.triggers.is_not(None),
            or_(tables.c.next_due_at.is_(None), tables.c.next_due_at <= now),
        )
        if tx.is_postgres:
            stmt = stmt.with_for_update(skip_locked=True, of=tables, key_share=True)
        found.update((str(r["id"]), table_dict(r)) for r in tx.conn.execute(stmt).mappings())
    return [found[i] for i in table_ids if i in found]


def states_of_tables(tx: Tx, *, table_ids: Sequence[str]) -> dict[str, dict[str, dict[str, Any]]]:
    """Every state row (retired ones included) of ``table_ids``: table id → trigger id → state."""
    out: dict[str, dict[str, dict[str, Any]]] = {str(i): {} for i in table_ids}
    for chunk in _chunks(table_ids):
        stmt = select(states_t).where(states_t.c.table_id.in_(chunk))
        for row in tx.conn.execute(stmt).mappings():
            out.setdefault(str(row["table_id"]), {})[str(row["trigger_id"])] = state_dict(row)
    return out


# --- raw multi-row statements: one round trip per chunk, values converted once ----------------
# SQLAlchemy's per-parameter processing dominated the bulk writes; these send the same values
# (converted by the columns' own bind processors: naive UTC instants, JSON text) straight to
# the driver.
ROWS_PER_STATEMENT = 1000  # x at most 8 parameters: under SQLite's and PostgreSQL's limits


def _instants(tx: Tx) -> Any:
    """The UTCDateTime bind processor of this dialect (naive UTC; SQLite: its text format)."""
    proc = runs.c.created_at.type.bind_processor(tx.conn.dialect)
    return proc if proc is not None else (lambda v: v)


def _execute_values(
    tx: Tx, sql: str, row_sql: str, rows: Sequence[tuple[Any, ...]], tail: str = ""
) -> list[tuple[Any, ...]]:
    """``sql`` + one ``row_sql`` per row (``?`` placeholders) + ``tail``, per chunk of rows;
    the rows any RETURNING gave back."""
    mark = "?" if not tx.is_postgres else "%s"
    out: list[tuple[Any, ...]] = []
    for start in range(0, len(rows), ROWS_PER_STATEMENT):
        chunk = rows[start : start + ROWS_PER_STATEMENT]
        values = ", ".join([row_sql.replace("?", mark)] * len(chunk))
        params = tuple(v for row in chunk for v in row)
        result = tx.conn.exec_driver_sql(sql.format(values=values) + tail, params)
        if result.returns_rows:
            out.extend(tuple(r) for r in result.fetchall())
    return out


def claim_occurrences(tx: Tx, *, rows: Sequence[Mapping[str, Any]]) -> set[tuple[str, str]]:
    """Claim many occurrences (``trigger_id, identity, table_id, run_id, created_at`` each);
    returns the ``(trigger_id, identity)`` pairs this transaction got."""
    tx.require_writable()
    at = _instants(tx)
    values = [
        (r["trigger_id"], r["identity"], r["table_id"], r["run_id"], at(r["created_at"]))
        for r in rows
    ]
    sql = "INSERT INTO occurrence_ledger (trigger_id, identity, table_id, run_id, created_at) "
    tail = " ON CONFLICT (trigger_id, identity) DO NOTHING RETURNING trigger_id, identity"
    got = _execute_values(tx, sql + "VALUES {values}", "(?, ?, ?, ?, ?)", values, tail)
    return {(str(r[0]), str(r[1])) for r in got}


_RUN_COLUMNS = (
    "id, table_id, trigger_id, record_id, source, clock, status, attempts, error, action_results,"
    " payload, definition, identity, scheduled_for, created_at, updated_at"
)
_RUN_ROW = "(?, ?, ?, NULL, 'schedule', true, 'pending', 0, NULL, '[]', ?, ?, ?, ?, ?, ?)"


def insert_clock_runs(tx: Tx, *, rows: Sequence[Mapping[str, Any]]) -> set[str]:
    """Insert many pending clock runs (``id, table_id, trigger_id, payload, definition,
    identity, scheduled_for, created_at`` each; ``updated_at`` = ``created_at``); returns the
    ids inserted.

    A run whose trigger already has an active clock run is refused by the partial unique
    index (``ON CONFLICT … DO NOTHING``) and left out of the result.
    """
    tx.require_writable()
    at = _instants(tx)
    values = []
    for r in rows:
        created = at(r["created_at"])
        payload, definition = json.dumps(r["payload"]), json.dumps(r["definition"])
        ids = (r["id"], r["table_id"], r["trigger_id"])
        values.append(
            (*ids, payload, definition, r["identity"], at(r["scheduled_for"]), created, created)
        )
    sql = f"INSERT INTO runs ({_RUN_COLUMNS}) VALUES {{values}}"
    tail = f" ON CONFLICT (trigger_id) WHERE {ONE_ACTIVE_CLOCK_WHERE} DO NOTHING RETURNING id"
    return {str(r[0]) for r in _execute_values(tx, sql, _RUN_ROW, values, tail)}


def _update_from_values(
    tx: Tx,
    *,
    table: str,
    columns: Sequence[tuple[str, bool]],
    sets: str,
    where: str,
    rows: Sequence[tuple[Any, ...]],
) -> None:
    """``UPDATE table SET sets FROM (VALUES rows) v WHERE table.<first column> = v.<it>``:
    ``columns`` are ``(name, is_instant)``; PostgreSQL casts the instants."""
    names = ", ".join(name for name, _ in columns)
    cast = "CAST(? AS timestamp)" if tx.is_postgres else "?"
    row_sql = "(" + ", ".join(cast if instant else "?" for _, instant in columns) + ")"
    key = columns[0][0]
    sql = (
        f"WITH v({names}) AS (VALUES {{values}}) UPDATE {table} SET {sets} FROM v"
        f" WHERE {table}.{key} = v.{key}{where}"
    )
    _execute_values(tx, sql, row_sql, rows)


def consume_windows(
    tx: Tx, *, values: Sequence[tuple[str, datetime, datetime | None]], now: datetime
) -> None:
    """``state.consume_window`` for many ``(trigger_id, window, next_due_at)``.

    Eligibility (per row): ``last_consumed`` is null or earlier than the window (monotonic).
    """
    tx.require_writable()
    at = _instants(tx)
    stamp = at(now)
    _update_from_values(
        tx,
        table="trigger_state",
        columns=(("trigger_id", False), ("w", True), ("n", True), ("t", True)),
        sets="last_consumed = v.w, next_due_at = v.n, updated_at = v.t",
        where=" AND (trigger_state.last_consumed IS NULL OR trigger_state.last_consumed < v.w)",
        rows=[(tid, at(w), None if n is None else at(n), stamp) for tid, w, n in values],
    )


def set_next_dues(tx: Tx, *, values: Sequence[tuple[str, datetime | None]]) -> None:
    """``(trigger_id, next_due_at)`` pairs: record when each trigger may next be due."""
    tx.require_writable()
    at = _instants(tx)
    _update_from_values(
        tx,
        table="trigger_state",
        columns=(("trigger_id", False), ("n", True)),
        sets="next_due_at = v.n",
        where="",
        rows=[(tid, None if n is None else at(n)) for tid, n in values],
    )


def finish_tables(tx: Tx, *, values: Sequence[tuple[str, datetime]], now: datetime) -> None:
    """``(table_id, next_due_at)`` pairs: each table's next due instant, and ``last_ticked_at``
    stamped ``now`` (the rotation moves on)."""
    tx.require_writable()
    at = _instants(tx)
    stamp = at(now)
    _update_from_values(
        tx,
        table="tables",
        columns=(("id", False), ("n", True), ("t", True)),
        sets="next_due_at = v.n, last_ticked_at = v.t",
        where="",
        rows=[(tid, at(n), stamp) for tid, n in values],
    )


__all__ = [
    "claim_occurrences",
    "consume_windows",
    "finish_tables",
    "insert_clock_runs",
    "lock_candidate_tables",
    "set_next_dues",
    "states_of_tables",
]
