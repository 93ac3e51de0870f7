"""Coarse writes for the pipelined tick (SPEC §6; DESIGN §5; ``engine.tick_pipeline``).

The writes of a batch of clock tables (``tick_bulk``'s claims, runs, consumed windows, next due
instants, rotation stamps) as a few big statements without ``RETURNING``: on SQLite values bound
inline (``… FROM (VALUES …)``, 1,000 rows per statement), which SQLite executes in one
``sqlite3_step`` during which Python's ``sqlite3`` releases the GIL; on PostgreSQL one
statement per write over ``unnest`` of one array per column. Statements are built (and their
values converted) by :func:`prepare_clock_writes` on the planning thread, ahead of time;
:func:`apply`, on the writing thread, only executes them.

Where the tick must know what a write did, the statement's change count is compared with its
number of rows: the ledger claims (``ON CONFLICT DO NOTHING``: an identity claimed before is
not inserted) and the runs (the one-active-run index refuses a run). :func:`apply` returns
False at the first difference; the caller rolls the batch back and gives its tables to the
precise path (``tick_bulk`` with ``RETURNING``), which knows what to do with a
lost claim or a refused run.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from functools import lru_cache
from itertools import chain
from typing import Any

from tocsin.store.tables import ONE_ACTIVE_CLOCK_WHERE
from tocsin.store.tick_bulk import ROWS_PER_STATEMENT, Claim, ClockRun, instants_of, json_text
from tocsin.store.tx import Tx

# (sql, parameters, expected change count or None)
Statement = tuple[str, tuple[Any, ...], int | None]

# The rows come in ``({values}) AS v`` with columns column1, column2, …: on SQLite a VALUES
# list (its own column names), on PostgreSQL ``unnest`` over one array per column.
_CLAIM = (
    "INSERT INTO occurrence_ledger (trigger_id, identity, table_id, run_id, created_at)"
    " SELECT column1, column2, column3, column4, column5 FROM ({values}) AS v WHERE true"
    " ON CONFLICT (table_id, trigger_id, identity) DO NOTHING"
)
_RUN = (
    "INSERT INTO runs (id, table_id, trigger_id, record_id, source, clock, status, attempts,"
    " error, action_results, payload, definition, identity, scheduled_for, created_at,"
    " updated_at) SELECT column1, column2, column3, NULL, 'schedule', true, 'pending', 0, NULL,"
    " '[]', '{{}}', {definition}, column5, column6, column7, column7 FROM ({values}) AS v"
    f" WHERE true ON CONFLICT (trigger_id) WHERE {ONE_ACTIVE_CLOCK_WHERE} DO NOTHING"
)
_CONSUME = (  # monotonic: a window is consumed only after the last one consumed
    "UPDATE trigger_state SET last_consumed = v.column2, next_due_at = v.column3,"
    " updated_at = v.column4 FROM ({values}) AS v WHERE trigger_state.trigger_id = v.column1"
    " AND (trigger_state.last_consumed IS NULL OR trigger_state.last_consumed < v.column2)"
)
_NEXT_DUE = (
    "UPDATE trigger_state SET next_due_at = v.column2 FROM ({values}) AS v"
    " WHERE trigger_state.trigger_id = v.column1"
)
_FINISH = (
    "UPDATE tables SET next_due_at = v.column2, last_ticked_at = v.column3 FROM ({values}) AS v"
    " WHERE tables.id = v.column1"
)
T, S = "text", "timestamp"  # PostgreSQL array types of the columns
_KINDS = {
    _CLAIM: (T, T, T, T, S),
    _RUN: (T, T, T, T, T, S, S),
    _CONSUME: (T, S, S, S),
    _NEXT_DUE: (T, S),
    _FINISH: (T, S, S),
}


@lru_cache(maxsize=64)
def _sql(template: str, rows: int, postgres: bool) -> str:
    kinds = _KINDS[template]
    if postgres:
        arrays = ", ".join(f"CAST(%b AS {kind}[])" for kind in kinds)
        names = ", ".join(f"column{k + 1}" for k in range(len(kinds)))
        values = f"SELECT * FROM unnest({arrays}) AS u({names})"
        return template.format(values=values, definition="CAST(column4 AS json)")
    row = "(" + ", ".join("?" * len(kinds)) + ")"
    return template.format(values="VALUES " + ", ".join([row] * rows), definition="column4")


def _statements(
    tx: Tx, template: str, rows: Sequence[tuple[Any, ...]], counted: bool
) -> list[Statement]:
    """SQLite: a statement per ``ROWS_PER_STATEMENT`` rows, values flattened; PostgreSQL: one
    statement, one array per column."""
    if not rows:
        return []
    if tx.is_postgres:
        arrays = tuple(list(column) for column in zip(*rows, strict=True))
        return [(_sql(template, len(rows), True), arrays, len(rows) if counted else None)]
    out: list[Statement] = []
    for start in range(0, len(rows), ROWS_PER_STATEMENT):
        chunk = rows[start : start + ROWS_PER_STATEMENT]
        params = tuple(chain.from_iterable(chunk))
        out.append((_sql(template, len(chunk), False), params, len(chunk) if counted else None))
    return out


def prepare_clock_writes(
    tx: Tx,
    *,
    claims: Sequence[Claim],
    runs: Sequence[ClockRun],
    consumed: Sequence[tuple[str, datetime, datetime | None]],
    next_dues: Sequence[tuple[str, datetime | None]],
    tables: Sequence[tuple[str, datetime]],
    now: datetime,
) -> list[Statement]:
    """The statements of a batch's writes at ``now`` (what ``tick_bulk.claim_occurrences``,
    ``insert_clock_runs``, ``consume_windows``, ``set_next_dues`` and ``finish_tables`` write),
    values converted as the column types would; ``tx`` gives the dialect, nothing is read."""
    at = instants_of(tx.conn.dialect)
    stamp = at(now)

    def maybe(value: datetime | None) -> Any:
        return None if value is None else at(value)

    run_rows = [
        (rid, tab, tid, json_text(definition), ident, at(window), stamp)
        for rid, tab, tid, definition, ident, window in runs
    ]
    return [
        *_statements(tx, _CLAIM, [(*c, stamp) for c in claims], True),
        *_statements(tx, _RUN, run_rows, True),
        *_statements(tx, _CONSUME, [(t, at(w), maybe(n), stamp) for t, w, n in consumed], False),
        *_statements(tx, _NEXT_DUE, [(t, maybe(n)) for t, n in next_dues], False),
        *_statements(tx, _FINISH, [(t, at(n), stamp) for t, n in tables], False),
    ]


def apply(tx: Tx, statements: Sequence[Statement]) -> bool:
    """Execute prepared statements in order; False at the first whose change count differs from
    the one expected (the caller rolls back to its savepoint)."""
    tx.require_writable()
    for sql, params, expected in statements:
        changed = tx.conn.exec_driver_sql(sql, params).rowcount
        if expected is not None and changed != expected:
            return False
    return True


def data_version(tx: Tx) -> int:
    """SQLite: ``PRAGMA data_version`` of this transaction's connection. It changes when, and
    only when, another connection (of any process) commits to the database."""
    return int(tx.conn.exec_driver_sql("PRAGMA data_version").scalar_one())


__all__ = ["Statement", "apply", "data_version", "prepare_clock_writes"]
