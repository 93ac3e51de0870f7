"""Many rows per statement, values straight to the driver (STYLE F3, R5): the rows travel in a
CTE ``v``, a multi-row ``VALUES`` list on SQLite, ``unnest`` of one array per column on
PostgreSQL. Instants go through THE instant conversion of the store, ``UTCDateTime``."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime
from functools import cache, lru_cache
from itertools import chain
from operator import itemgetter
from typing import Any

from tocsin.store.coltypes import UTCDateTime
from tocsin.store.tx import Tx

ROWS_PER_STATEMENT = 1000  # SQLite: rows per statement at most (fewer for many columns)
SQLITE_PARAMETERS = 32766  # SQLite: bound parameters per statement at most
FETCH_ROWS = 256  # driver rows fetched at a time (driver_rows)
Column = tuple[str, str]  # (name in v, PostgreSQL type: text | timestamp)


def instant_binder(tx: Tx) -> Callable[[datetime | None], Any]:
    """``UTCDateTime``'s bind side for this connection's dialect (naive UTC; SQLite: its text
    format), memoized per call site: a batch's windows and due instants repeat. The processor is
    made once per dialect class (SQLAlchemy's type adaptation took ~10 us: most of what a one-run
    finish spends in Python)."""
    dialect = tx.conn.dialect
    bind = _BINDS.get(type(dialect))
    if bind is None:
        made = UTCDateTime().dialect_impl(dialect).bind_processor(dialect)
        assert made is not None  # a TypeDecorator's, always
        bind = _BINDS[type(dialect)] = made
    return lru_cache(maxsize=None)(bind)


_BINDS: dict[type[Any], Callable[[datetime | None], Any]] = {}


def instant_reader() -> Callable[[Any], datetime | None]:
    """``UTCDateTime``'s result side for raw driver rows (PostgreSQL gives naive datetimes,
    SQLite its text format), memoized per call site."""

    @cache
    def read(value: Any) -> datetime | None:
        if value is None:
            return None
        at = value if isinstance(value, datetime) else datetime.fromisoformat(value)
        return at.replace(tzinfo=UTC)

    return read


def with_rows(
    tx: Tx, columns: Sequence[Column], body: str, rows: Sequence[tuple[Any, ...]]
) -> list[tuple[Any, ...]]:
    """``WITH v(columns) AS (rows) <body>`` (:func:`with_columns`, given the rows one at a time);
    what RETURNING gave back."""
    if not rows:
        return []
    # a column at a time (no iterator per row, as zip(*rows) makes)
    return with_columns(
        tx, columns, body, [list(map(itemgetter(k), rows)) for k in range(len(columns))]
    )


def with_columns(
    tx: Tx, columns: Sequence[Column], body: str, values: Sequence[list[Any]]
) -> list[tuple[Any, ...]]:
    """``WITH v(columns) AS (rows) <body>``, the rows given a column at a time; what RETURNING
    gave back. A column holding one value in every row (a batch's instant, status…) goes once,
    as a scalar (at least one column stays per row, for the row count); the others, PostgreSQL:
    ``unnest`` of one typed array per column (psycopg adapts a list, in binary), one statement
    whatever the number of rows; SQLite: a multi-row ``VALUES`` list of those columns alone, per
    chunk of rows under its bound-parameter limit (one statement per chunk: its indexes opened
    once, not once per row as an executemany's)."""
    count = len(values[0]) if values else 0
    if not count:
        return []
    same = [count > 1 and column.count(column[0]) == count for column in values]
    if all(same):
        same[0] = False
    names = ", ".join(name for name, _ in columns)
    if not tx.is_postgres:
        return _sqlite_with_columns(tx, names, body, values, same)
    picks, scalars, arrays = [], [], []  # arrays: (name, SQL making it, its parameter)
    for (name, kind), column, one in zip(columns, values, same, strict=True):
        picks.append(f"CAST(%b AS {kind})" if one else f"u.{name}")
        if one:
            scalars.append(column[0])
            continue
        arrays.append((name, f"CAST(%b AS {kind}[])", column))
    source = f"SELECT {', '.join(picks)} FROM unnest({', '.join(a[1] for a in arrays)})"
    sql = f"WITH v({names}) AS ({source} AS u({', '.join(a[0] for a in arrays)})) {body}"
    return list(driver_rows(tx.conn.exec_driver_sql(sql, (*scalars, *(a[2] for a in arrays)))))


def _sqlite_with_columns(
    tx: Tx, names: str, body: str, values: Sequence[list[Any]], same: list[bool]
) -> list[tuple[Any, ...]]:
    """SQLite's :func:`with_columns`: ``WITH v(names) AS (SELECT ?, column1, … FROM (VALUES
    (…), …)) <body>``, the scalars bound once (``?`` in the SELECT), the other columns in the
    ``VALUES`` rows (``column1``…, SQLite's names for them)."""
    picks: list[str] = []
    scalars: list[Any] = []
    varying: list[list[Any]] = []
    for column, one in zip(values, same, strict=True):
        if one:
            picks.append("?")
            scalars.append(column[0])
        else:
            varying.append(column)
            picks.append(f"column{len(varying)}")
    select_ = f"WITH v({names}) AS (SELECT {', '.join(picks)} FROM (VALUES "
    row_sql = "(" + ", ".join("?" * len(varying)) + ")"
    step = min(ROWS_PER_STATEMENT, (SQLITE_PARAMETERS - len(scalars)) // len(varying))
    count = len(varying[0])
    out: list[tuple[Any, ...]] = []
    for start in range(0, count, step):
        rows = zip(*(c[start : start + step] for c in varying), strict=True)
        params = (*scalars, *chain.from_iterable(rows))
        source = ", ".join([row_sql] * min(step, count - start))
        sql = f"{select_}{source})) {body}"
        out += driver_rows(tx.conn.exec_driver_sql(sql, params))
    return out


def driver_rows(result: Any) -> Iterator[tuple[Any, ...]]:
    """A raw statement's rows as the driver's plain tuples (no SQLAlchemy ``Row`` built per
    row), :data:`FETCH_ROWS` at a time; none for a statement without RETURNING; the result is
    closed once read."""
    try:
        while result.returns_rows and (part := result.cursor.fetchmany(FETCH_ROWS)):
            yield from part
    finally:
        result.close()


def update_rows(
    tx: Tx, columns: Sequence[Column], body: str, rows: Sequence[tuple[Any, ...]], single: str
) -> int | None:
    """Many rows updated: PostgreSQL ``body`` (``UPDATE … FROM v``); SQLite ``single`` (``?1``… in
    ``columns`` order) per row, faster there than ``… FROM``: the rows changed, summed."""
    tx.require_writable()
    if not tx.is_postgres:
        return int(tx.conn.exec_driver_sql(single, list(rows)).rowcount) if rows else 0
    with_rows(tx, columns, body, rows)
    return None
