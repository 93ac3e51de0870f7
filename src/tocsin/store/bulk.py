"""Many rows per statement, values straight to the driver (STYLE F3, R5): the rows travel in a
CTE ``v``, a multi-row ``VALUES`` list on SQLite, ``unnest`` of one array per column on
PostgreSQL. Instants go through THE instant conversion of the store, ``UTCDateTime``."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import UTC, datetime
from functools import cache, lru_cache
from itertools import chain
from operator import itemgetter
from typing import Any

from tocsin.store.schema import UTCDateTime
from tocsin.store.tx import Tx

ROWS_PER_STATEMENT = 1000  # SQLite: x at most 9 parameters, under its limit of 32766
FETCH_ROWS = 256  # driver rows fetched at a time (driver_rows)
Column = tuple[str, str]  # (name in v, PostgreSQL type: text | timestamp)


def instant_binder(tx: Tx) -> Callable[[datetime | None], Any]:
    """``UTCDateTime``'s bind side for this connection's dialect (naive UTC; SQLite: its text
    format), memoized per call site: a batch's windows and due instants repeat."""
    dialect = tx.conn.dialect
    bind = UTCDateTime().dialect_impl(dialect).bind_processor(dialect)
    assert bind is not None  # a TypeDecorator's, always
    return lru_cache(maxsize=None)(bind)


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


def column_values(
    items: Sequence[Mapping[str, Any]],
    names: Sequence[str],
    convert: Mapping[str, Callable[[Any], Any]],
) -> list[list[Any]]:
    """The values of ``items`` under ``names``, one list per name, each converted by
    ``convert[name]`` when given: a column at a time (``map``: no Python frame per cell)."""
    cells = [(name, map(itemgetter(name), items)) for name in names]
    return [list(map(convert[n], c) if n in convert else c) for n, c in cells]


def with_rows(
    tx: Tx, columns: Sequence[Column], body: str, rows: Sequence[tuple[Any, ...]]
) -> list[tuple[Any, ...]]:
    """``WITH v(columns) AS (rows) <body>``, per chunk of rows; what RETURNING gave back."""
    if tx.is_postgres:  # one statement, one array per column: a short text for any number
        arrays = [list(c) for c in zip(*rows, strict=True)]
        return with_columns(tx, columns, body, arrays) if rows else []
    names = ", ".join(name for name, _ in columns)
    row_sql = "(" + ", ".join("?" for _ in columns) + ")"
    out: list[tuple[Any, ...]] = []
    for start in range(0, len(rows), ROWS_PER_STATEMENT):
        chunk = rows[start : start + ROWS_PER_STATEMENT]
        source = "VALUES " + ", ".join([row_sql] * len(chunk))
        params = tuple(chain.from_iterable(chunk))
        out += driver_rows(tx.conn.exec_driver_sql(f"WITH v({names}) AS ({source}) {body}", params))
    return out


def with_columns(
    tx: Tx, columns: Sequence[Column], body: str, values: Sequence[list[Any]]
) -> list[tuple[Any, ...]]:
    """:func:`with_rows` given the rows a column at a time (one list per column, as
    :func:`column_values` makes them). PostgreSQL: ``unnest`` of one array per column, except
    that a column holding one value in every row (a batch's instant, status…) sends it once, as
    a scalar (at least one array stays, for the number of rows)."""
    if not tx.is_postgres:
        return with_rows(tx, columns, body, list(zip(*values, strict=True)))
    count = len(values[0])
    same = [count > 1 and column.count(column[0]) == count for column in values]
    if all(same):
        same[0] = False
    picks, scalars, unnested, kinds = [], [], [], []
    for (name, kind), column, one in zip(columns, values, same, strict=True):
        if one:
            picks.append(f"CAST(%b AS {kind})")
            scalars.append(column[0])
            continue
        picks.append(f"u.{name}")
        sql, param = text_array(column) if kind == "text" else (f"CAST(%b AS {kind}[])", column)
        kinds.append(sql)
        unnested.append(param)
    casts = ", ".join(kinds)
    names = ", ".join(name for name, _ in columns)
    unnamed = [name for (name, _), one in zip(columns, same, strict=True) if not one]
    source = f"SELECT {', '.join(picks)} FROM unnest({casts}) AS u({', '.join(unnamed)})"
    sql = f"WITH v({names}) AS ({source}) {body}"
    return list(driver_rows(tx.conn.exec_driver_sql(sql, (*scalars, *unnested))))


# a text column of many rows travels as one text, its values joined by the unit separator and
# NULL written as the record separator, split by the server (``string_to_array``): psycopg dumps
# a list element by element in Python (~0.25 ms per 1,000 ids, ten such columns a page of
# fires), a text in one call; a column whose values hold either character, or whose one value
# is empty (an empty text splits into no element), goes as an array as before
_SEP, _NULL = "\x1f", "\x1e"
_SPLIT = "string_to_array(CAST(%b AS text), chr(31), chr(30))"


def text_array(column: list[Any]) -> tuple[str, Any]:
    """A PostgreSQL text array of ``column``'s values (texts and None): the SQL that makes it
    from one ``%b`` parameter, and that parameter (the values joined, or the list itself)."""
    joined = _joined(column)
    return ("CAST(%b AS text[])", column) if joined is None else (_SPLIT, joined)


def _joined(column: list[Any]) -> str | None:
    """``column`` (texts and None) as one text for :data:`_SPLIT`, or None when it cannot
    travel so (a value that is not a text, holds a separator, or a lone empty text)."""
    nulls = column.count(None)
    cells = [_NULL if v is None else v for v in column] if nulls else column
    try:
        joined = _SEP.join(cells)
    except TypeError:  # a value that is not a text
        return None
    if not joined or joined.count(_SEP) != len(column) - 1 or joined.count(_NULL) != nulls:
        return None
    return joined


def driver_rows(result: Any) -> Iterator[tuple[Any, ...]]:
    """A raw statement's rows as the driver's plain tuples (no ``Row`` each: the collector stops
    tracking a tuple of plain values), :data:`FETCH_ROWS` at a time; none for a statement
    without RETURNING; the result is closed once read."""
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
