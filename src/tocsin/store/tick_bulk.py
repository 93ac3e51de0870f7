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
import json.scanner
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime
from itertools import chain
from typing import Any

from sqlalchemy import Dialect, false, or_, select

from tocsin.store.state import STATE_FIELDS
from tocsin.store.tables import ONE_ACTIVE_CLOCK_WHERE, runs, tables
from tocsin.store.tx import Tx

IN_CHUNK = 500  # ids per IN (...) list: well under SQLite's bound-parameter limit


def _chunks(ids: Sequence[str]) -> Iterable[list[str]]:
    for start in range(0, len(ids), IN_CHUNK):
        yield list(ids[start : start + IN_CHUNK])


def candidate_table_ids(tx: Tx, *, now: datetime, limit: int) -> list[str]:
    """``claims.claim_candidate_tables``, ids only (no config decoding): the same eligibility,
    rotation order, limit and PostgreSQL ``FOR NO KEY UPDATE SKIP LOCKED``."""
    tx.require_writable()
    stmt = (
        select(tables.c.id)
        .where(
            tables.c.trashed == false(),
            tables.c.triggers.is_not(None),
            or_(tables.c.next_due_at.is_(None), tables.c.next_due_at <= now),
        )
        .order_by(tables.c.last_ticked_at.asc().nulls_first(), tables.c.id)
        .limit(limit)
    )
    if tx.is_postgres:
        stmt = stmt.with_for_update(skip_locked=True, of=tables, key_share=True)
    return [str(i) for i in tx.conn.execute(stmt).scalars()]


# the candidate list of ``claims.claim_candidate_tables``, in SQL
_ELIGIBLE = "trashed = false AND triggers IS NOT NULL AND (next_due_at IS NULL OR next_due_at <= ?)"


def lock_candidate_tables(
    tx: Tx, *, table_ids: Sequence[str], now: datetime
) -> list[dict[str, Any]]:
    """Lock those of ``table_ids`` that are still candidates (and not taken); in input order,
    each as ``{id, columns, triggers}`` (what the evaluator reads) and ``definitions``: trigger
    id → its stored JSON text (see :func:`array_with_texts`).

    Eligibility: the list of ``claims.claim_candidate_tables``; PostgreSQL skips rows another
    transaction holds (``FOR NO KEY UPDATE SKIP LOCKED``: record writes are not blocked).
    """
    tx.require_writable()
    if not tx.is_postgres:  # inside BEGIN IMMEDIATE: the snapshot is the locked database
        return candidate_tables_snapshot(tx, table_ids=table_ids, now=now)
    sql = (  # psycopg decodes the columns; the triggers come as their stored text
        "SELECT id, columns, CAST(triggers AS text) FROM tables WHERE id = ANY(%s) AND "
        + _ELIGIBLE.replace("?", "%s")
        + " FOR NO KEY UPDATE OF tables SKIP LOCKED"
    )
    found: dict[str, dict[str, Any]] = {}
    for tid, columns, config in tx.conn.exec_driver_sql(sql, (list(table_ids), _naive(now))):
        triggers, texts = array_with_texts(config)
        found[str(tid)] = {
            "id": str(tid),
            "columns": columns,
            "triggers": triggers,
            "definitions": texts,
        }
    return [found[i] for i in table_ids if i in found]


def candidate_tables_snapshot(
    tx: Tx, *, table_ids: Sequence[str], now: datetime
) -> list[dict[str, Any]]:
    """SQLite: those of ``table_ids`` that are candidates in this transaction's snapshot, as
    :func:`lock_candidate_tables` gives them (a read transaction may call it: the pipelined
    tick reads here and writes under the lock, see ``engine.tick_pipeline``)."""
    at = _instants(tx)(now)
    found: dict[str, dict[str, Any]] = {}
    for chunk in _chunks(table_ids):
        marks = ", ".join("?" * len(chunk))
        # unary + keeps the planner off ix_tables_candidates (trashed, …): by the key only
        eligible = _ELIGIBLE.replace("trashed", "+trashed").replace("next_due_at", "+next_due_at")
        sql = f"SELECT id, columns, triggers FROM tables WHERE id IN ({marks}) AND {eligible}"
        for tid, columns, config in tx.conn.exec_driver_sql(sql, (*chunk, at)).fetchall():
            triggers, texts = array_with_texts(config)
            found[str(tid)] = {
                "id": str(tid),
                "columns": json.loads(columns),
                "triggers": triggers,
                "definitions": texts,
            }
    return [found[i] for i in table_ids if i in found]


# the (C) scanner json.loads uses: scan(text, index) -> (value, end), StopIteration when none
# (typeshed types make_scanner's argument as the scanner class, not the decoder it takes)
_scan_json: Callable[[str, int], tuple[Any, int]] = json.scanner.make_scanner(
    json.JSONDecoder()  # type: ignore[arg-type]
)
_SPACE = re.compile(r"[ \t\n\r]*")  # JSON's whitespace


def _skip_space(text: str, at: int) -> int:
    """The index of the first non-whitespace character at or after ``at``."""
    found = _SPACE.match(text, at)
    return at if found is None else found.end()


def array_with_texts(text: str) -> tuple[Any, dict[str, str]]:
    """The decoded JSON ``text`` and, when it is an array, the stored text of each element that
    is an object with a string ``id`` (trigger id → its JSON text: a run's frozen definition,
    copied instead of re-encoded). Decoding is ``json.loads``'s, element by element."""
    at = _skip_space(text, 0)
    if not text.startswith("[", at):
        return json.loads(text), {}
    items: list[Any] = []
    texts: dict[str, str] = {}
    at = _skip_space(text, at + 1)
    closed = text.startswith("]", at)
    while not closed:
        try:
            item, end = _scan_json(text, at)
        except StopIteration:
            return json.loads(text), {}  # raises the decoder's own error
        items.append(item)
        if type(item) is dict and type(item.get("id")) is str:
            texts[item["id"]] = text[at:end]
        at = _skip_space(text, end)
        closed = text.startswith("]", at)
        if not closed:
            if not text.startswith(",", at):
                return json.loads(text), {}
            at = _skip_space(text, at + 1)
    if _skip_space(text, at + 1) != len(text):
        return json.loads(text), {}
    return items, texts


def active_clock_trigger_ids(tx: Tx, *, trigger_ids: Sequence[str]) -> set[str]:
    """``runs.active_trigger_ids``, probing the partial unique index once per id.

    A plain ``trigger_id IN (…) AND <predicate>`` lets the planner (PostgreSQL with stale
    statistics, SQLite) scan every active run by status for each batch: quadratic as runs pile
    up. PostgreSQL: a LATERAL probe per id; SQLite: ``INDEXED BY`` the partial index.
    """
    if tx.is_postgres:
        body = (
            "SELECT v.tid FROM v CROSS JOIN LATERAL (SELECT 1 FROM runs"
            f" WHERE runs.trigger_id = v.tid AND {ONE_ACTIVE_CLOCK_WHERE} LIMIT 1) AS a"
        )
    else:
        body = (
            "SELECT v.tid FROM v WHERE EXISTS (SELECT 1 FROM runs INDEXED BY"
            " uq_runs_one_active_clock WHERE runs.trigger_id = v.tid"
            f" AND {ONE_ACTIVE_CLOCK_WHERE})"
        )
    rows = [(i,) for i in trigger_ids]
    return {str(r[0]) for r in _with_rows(tx, (("tid", "text"),), body, rows)}


_STATE_COLUMNS = ", ".join(STATE_FIELDS)


def states_of_tables(tx: Tx, *, table_ids: Sequence[str]) -> dict[str, dict[str, dict[str, Any]]]:
    """Every state row (retired ones included) of ``table_ids``: table id → trigger id → state
    (the dicts of ``state.state_dict``)."""
    out: dict[str, dict[str, dict[str, Any]]] = {str(i): {} for i in table_ids}
    if tx.is_postgres:
        sql = f"SELECT {_STATE_COLUMNS} FROM trigger_state WHERE table_id = ANY(%s)"
        rows = tx.conn.exec_driver_sql(sql, (list(table_ids),)).fetchall()
        batches: Iterable[Sequence[Any]] = [rows]
    else:
        batches = (
            tx.conn.exec_driver_sql(
                f"SELECT {_STATE_COLUMNS} FROM trigger_state"
                f" WHERE table_id IN ({', '.join('?' * len(chunk))})",
                tuple(chunk),
            ).fetchall()
            for chunk in _chunks(table_ids)
        )
    instant = _instant_reader(tx)
    for rows in batches:
        for tid, tab, kind, anchor, last, cur_at, cur_id, sh, retired, nxt, upd in rows:
            out.setdefault(str(tab), {})[str(tid)] = {
                "trigger_id": str(tid),
                "table_id": str(tab),
                "kind": kind,
                "anchor": instant(anchor),
                "last_consumed": instant(last),
                "cursor_created_at": instant(cur_at),
                "cursor_id": cur_id,
                "schedule_hash": sh,
                "retired": bool(retired),
                "next_due_at": instant(nxt),
                "updated_at": instant(upd),
            }
    return out


def _naive(value: datetime) -> datetime:
    """An aware instant as the naive UTC the store keeps (``UTCDateTime``)."""
    return value.astimezone(UTC).replace(tzinfo=None)


def _instant_reader(tx: Tx) -> Callable[[Any], datetime | None]:
    """Stored instant → aware UTC datetime (``UTCDateTime``'s result side, without its
    per-value dispatch): PostgreSQL gives naive datetimes, SQLite its text format."""
    seen: dict[Any, datetime] = {}

    def read(value: Any) -> datetime | None:
        if value is None:
            return None
        out = seen.get(value)
        if out is None:
            dt = value if isinstance(value, datetime) else datetime.fromisoformat(value)
            out = seen[value] = dt.replace(tzinfo=UTC)
        return out

    return read


# --- raw multi-row statements: one round trip per chunk, values converted once ----------------
# SQLAlchemy's per-parameter processing dominated the bulk writes; these send the same values
# (instants through the column type's own bind processor: naive UTC, SQLite's text format; JSON
# as text) straight to the driver. The rows travel in a CTE ``v``: on SQLite a multi-row
# VALUES list, on PostgreSQL ``unnest`` over one array per column (a short query text for any
# number of rows).
ROWS_PER_STATEMENT = 1000  # SQLite: x at most 9 parameters, under its limit of 32766

Column = tuple[str, str]  # (name in v, PostgreSQL type: text | timestamp)


def _instants(tx: Tx) -> Any:
    return instants_of(tx.conn.dialect)


def instants_of(dialect: Dialect) -> Callable[[datetime], Any]:
    """The UTCDateTime bind processor of ``dialect`` (naive UTC; SQLite: its text format),
    memoized per call site: a batch's windows and due instants repeat (aligned windows)."""
    # the dialect's own DATETIME (SQLite: fixed text with micros)
    proc = runs.c.created_at.type.dialect_impl(dialect).bind_processor(dialect)
    seen: dict[datetime, Any] = {}

    def convert(value: datetime) -> Any:
        out = seen.get(value)
        if out is None:
            out = seen[value] = value if proc is None else proc(value)
        return out

    return convert


def _with_rows(
    tx: Tx, columns: Sequence[Column], body: str, rows: Sequence[tuple[Any, ...]]
) -> list[tuple[Any, ...]]:
    """``WITH v(columns) AS (rows) <body>``, per chunk of rows; what RETURNING gave back."""
    names = ", ".join(name for name, _ in columns)
    out: list[tuple[Any, ...]] = []
    size = ROWS_PER_STATEMENT if not tx.is_postgres else max(len(rows), 1)
    for start in range(0, len(rows), size):
        chunk = rows[start : start + size]
        if tx.is_postgres:
            arrays = ", ".join(f"CAST(%b AS {kind}[])" for _, kind in columns)
            source = f"SELECT * FROM unnest({arrays})"
            params: tuple[Any, ...] = tuple(list(col) for col in zip(*chunk, strict=True))
        else:
            row_sql = "(" + ", ".join("?" for _ in columns) + ")"
            source = "VALUES " + ", ".join([row_sql] * len(chunk))
            params = tuple(chain.from_iterable(chunk))
        sql = f"WITH v({names}) AS ({source}) {body}"
        result = tx.conn.exec_driver_sql(sql, params)
        if result.returns_rows:
            out.extend(tuple(r) for r in result.fetchall())
    return out


def _update_rows(
    tx: Tx, columns: Sequence[Column], body: str, rows: Sequence[tuple[Any, ...]], sqlite: str
) -> None:
    """An update of many rows: on PostgreSQL ``body`` (``UPDATE … FROM v``) over ``unnest``; on
    SQLite the single-row statement ``sqlite`` (qmark parameters in the order of ``columns``)
    prepared once and executed per row: a keyed lookup each, measured faster there than its
    ``UPDATE … FROM`` over a VALUES list."""
    if tx.is_postgres:
        _with_rows(tx, columns, body, rows)
    elif rows:
        tx.conn.exec_driver_sql(sqlite, list(rows))


Claim = tuple[str, str, str, str]  # (trigger_id, identity, table_id, run_id)


def claim_occurrences(tx: Tx, *, rows: Sequence[Claim], now: datetime) -> set[tuple[str, str]]:
    """Claim many occurrences at ``now``; returns the ``(trigger_id, identity)`` pairs this
    transaction got."""
    tx.require_writable()
    stamp = _instants(tx)(now)
    values = [(*r, stamp) for r in rows]
    columns = (("tid", "text"), ("ident", "text"), ("tab", "text"), ("rid", "text"))
    body = (
        "INSERT INTO occurrence_ledger (trigger_id, identity, table_id, run_id, created_at)"
        " SELECT tid, ident, tab, rid, ca FROM v WHERE true"
        " ON CONFLICT (table_id, trigger_id, identity) DO NOTHING RETURNING trigger_id, identity"
    )
    got = _with_rows(tx, (*columns, ("ca", "timestamp")), body, values)
    return {(str(r[0]), str(r[1])) for r in got}


_RUN_INSERT = (
    "INSERT INTO runs (id, table_id, trigger_id, record_id, source, clock, status, attempts,"
    " error, action_results, payload, definition, identity, scheduled_for, created_at,"
    " updated_at) SELECT rid, tab, tid, NULL, 'schedule', true, 'pending', 0, NULL, '[]',"
    " '{{}}', {definition}, ident, sf, ca, ca FROM v WHERE true"
    f" ON CONFLICT (trigger_id) WHERE {ONE_ACTIVE_CLOCK_WHERE} DO NOTHING RETURNING id"
)
_RUN_COLUMNS: tuple[Column, ...] = (
    *(("rid", "text"), ("tab", "text"), ("tid", "text"), ("definition", "text")),
    *(("ident", "text"), ("sf", "timestamp"), ("ca", "timestamp")),
)


# (id, table_id, trigger_id, definition, identity, scheduled_for)
# definition: the trigger (encoded here), or its stored JSON text (``array_with_texts``)
ClockRun = tuple[str, str, str, Mapping[str, Any] | str, str, datetime]
_ENCODE = json.JSONEncoder(check_circular=False).encode  # json.dumps' output, plain JSON


def json_text(value: Mapping[str, Any] | str) -> str:
    """A JSON column's value as stored: text given as is (already JSON), a mapping encoded."""
    return value if isinstance(value, str) else _ENCODE(value)


def insert_clock_runs(tx: Tx, *, rows: Sequence[ClockRun], now: datetime) -> set[str]:
    """Insert many pending clock runs created at ``now`` (payload ``{}``, the frozen trigger
    ``definition``); returns the ids inserted.

    A run whose trigger already has an active clock run is refused by the partial unique
    index (``ON CONFLICT … DO NOTHING``) and left out of the result.
    """
    tx.require_writable()
    at = _instants(tx)
    stamp = at(now)
    values = [
        (run_id, table_id, trigger_id, json_text(definition), ident, at(window), stamp)
        for run_id, table_id, trigger_id, definition, ident, window in rows
    ]
    definition = "CAST(definition AS json)" if tx.is_postgres else "definition"
    body = _RUN_INSERT.format(definition=definition)
    return {str(r[0]) for r in _with_rows(tx, _RUN_COLUMNS, body, values)}


def consume_windows(
    tx: Tx, *, values: Sequence[tuple[str, datetime, datetime | None]], now: datetime
) -> None:
    """``state.consume_window`` for many ``(trigger_id, window, next_due_at)``.

    Eligibility (per row): ``last_consumed`` is null or earlier than the window (monotonic).
    """
    tx.require_writable()
    at = _instants(tx)
    stamp = at(now)
    body = (
        "UPDATE trigger_state SET last_consumed = v.w, next_due_at = v.n, updated_at = v.t"
        " FROM v WHERE trigger_state.trigger_id = v.tid"
        " AND (trigger_state.last_consumed IS NULL OR trigger_state.last_consumed < v.w)"
    )
    columns = (("tid", "text"), ("w", "timestamp"), ("n", "timestamp"), ("t", "timestamp"))
    rows = [(tid, at(w), None if n is None else at(n), stamp) for tid, w, n in values]
    single = (
        "UPDATE trigger_state SET last_consumed = ?2, next_due_at = ?3, updated_at = ?4"
        " WHERE trigger_id = ?1 AND (last_consumed IS NULL OR last_consumed < ?2)"
    )
    _update_rows(tx, columns, body, rows, single)


def set_next_dues(tx: Tx, *, values: Sequence[tuple[str, datetime | None]]) -> None:
    """``(trigger_id, next_due_at)`` pairs: record when each trigger may next be due."""
    tx.require_writable()
    at = _instants(tx)
    body = (
        "UPDATE trigger_state SET next_due_at = v.n FROM v WHERE trigger_state.trigger_id = v.tid"
    )
    rows = [(tid, None if n is None else at(n)) for tid, n in values]
    single = "UPDATE trigger_state SET next_due_at = ?2 WHERE trigger_id = ?1"
    _update_rows(tx, (("tid", "text"), ("n", "timestamp")), body, rows, single)


def finish_tables(tx: Tx, *, values: Sequence[tuple[str, datetime]], now: datetime) -> None:
    """``(table_id, next_due_at)`` pairs: each table's next due instant, and ``last_ticked_at``
    stamped ``now`` (the rotation moves on)."""
    tx.require_writable()
    at = _instants(tx)
    stamp = at(now)
    body = (
        "UPDATE tables SET next_due_at = v.n, last_ticked_at = v.t FROM v WHERE tables.id = v.tid"
    )
    columns = (("tid", "text"), ("n", "timestamp"), ("t", "timestamp"))
    single = "UPDATE tables SET next_due_at = ?2, last_ticked_at = ?3 WHERE id = ?1"
    _update_rows(tx, columns, body, [(tid, at(n), stamp) for tid, n in values], single)


__all__ = [
    "active_clock_trigger_ids",
    "array_with_texts",
    "candidate_table_ids",
    "candidate_tables_snapshot",
    "claim_occurrences",
    "consume_windows",
    "finish_tables",
    "insert_clock_runs",
    "instants_of",
    "json_text",
    "lock_candidate_tables",
    "set_next_dues",
    "states_of_tables",
]
