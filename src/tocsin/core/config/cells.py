"""Record cells and table columns: what a value must be to be stored (SPEC §2). Pure.

- :func:`validate_columns`: a table's ``{name: type}`` with the SPEC §2 types;
- :func:`cell_ok` / :func:`validate_cells`: a record's data against its columns' types;
- :func:`is_plain_json`: a value both backends store and give back unchanged.

Each raises ``ValidationError`` with the SPEC text naming the column.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from datetime import date
from typing import Any

from tocsin import messages
from tocsin.core.time.instants import classify_cell, ignored_offset
from tocsin.errors import ValidationError

COLUMN_TYPES = ("text", "number", "boolean", "date", "datetime", "select", "json")
_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", re.ASCII)
# Nesting bound of stored JSON values (the API refuses deeper bodies too).
MAX_JSON_DEPTH = 64


def is_plain_json(value: object, depth: int = 0) -> bool:
    """True for a value both backends store and give back unchanged: strings, finite numbers,
    booleans, null, lists and string-keyed objects, at most ``MAX_JSON_DEPTH`` levels deep.

    (``json.dumps`` alone lets NaN, tuples and int keys through; PostgreSQL then refuses NaN
    with a 500 and SQLite stores what it cannot give back.)
    """
    if value is None or isinstance(value, str | bool | int):
        return True
    if isinstance(value, float):
        return math.isfinite(value)
    if depth >= MAX_JSON_DEPTH:
        return False
    if isinstance(value, list):
        return all(is_plain_json(item, depth + 1) for item in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and is_plain_json(v, depth + 1) for k, v in value.items())
    return False


def validate_columns(columns: object) -> dict[str, str]:
    """``{name: type}`` with types from SPEC §2."""
    if not isinstance(columns, Mapping):
        raise ValidationError(messages.COLUMNS_NOT_OBJECT)
    out: dict[str, str] = {}
    for name, kind in columns.items():
        if not isinstance(name, str) or not name.strip():
            raise ValidationError(messages.column_name_invalid(name))
        if kind not in COLUMN_TYPES:
            raise ValidationError(messages.column_type_invalid(name, kind))
        out[name] = str(kind)
    return out


def _is_date(value: object) -> bool:
    if not isinstance(value, str) or _DATE.fullmatch(value) is None:
        return False
    try:
        date.fromisoformat(value)
    except ValueError:
        return False
    return True


def cell_ok(column_type: str, value: object) -> bool:
    """Does ``value`` fit a column of ``column_type``? ``None`` (an empty cell) always does."""
    if value is None:
        return True
    if column_type in ("text", "select"):
        return isinstance(value, str)
    if column_type == "number":
        if isinstance(value, bool) or not isinstance(value, int | float):
            return False
        return not isinstance(value, float) or math.isfinite(value)
    if column_type == "boolean":
        return isinstance(value, bool)
    if column_type == "date":
        return _is_date(value)
    if column_type == "datetime":
        return classify_cell(value)[0] == "ok"
    return is_plain_json(value)


def validate_cells(columns: Mapping[str, str], data: object) -> dict[str, Any]:
    """A record's (partial) data checked against the column types (SPEC §2)."""
    if not isinstance(data, Mapping):
        raise ValidationError(messages.RECORD_DATA_NOT_OBJECT)
    for name, value in data.items():
        if name not in columns:
            raise ValidationError(messages.column_unknown(name))
        if not cell_ok(columns[name], value):
            raise ValidationError(messages.cell_invalid(name, columns[name]))
    return dict(data)


def offset_warnings(columns: Mapping[str, str], data: Mapping[str, Any]) -> list[str]:
    """One warning per datetime cell of ``data`` written with an offset the naive-UTC rule
    ignores (SPEC §4.1): the write is accepted, the caller is told."""
    out = []
    for name, value in data.items():
        if columns.get(name) == "datetime" and (offset := ignored_offset(value)) is not None:
            out.append(messages.datetime_offset_ignored(str(name), str(value), offset))
    return out


__all__ = [
    "COLUMN_TYPES",
    "MAX_JSON_DEPTH",
    "cell_ok",
    "is_plain_json",
    "offset_warnings",
    "validate_cells",
    "validate_columns",
]
