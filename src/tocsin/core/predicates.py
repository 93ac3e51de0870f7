"""`when` predicates: validation against the table's columns and evaluation over a row (SPEC §3).

A ``when`` is a list of ``{"column", "op", "value"}`` combined with AND (an empty list matches
every row). Evaluation never raises, whatever the cells hold:

- ``eq`` / ``neq``: the cell equals / does not equal ``value``. Numbers compare numerically,
  booleans only equal booleans (``True`` is not ``1``), strings compare exactly, a missing cell
  equals only ``null``.
- ``gt gte lt lte``: both are numbers, or both are strings (lexicographic, so ISO dates order
  correctly); any other pairing is false.
- ``contains``: a string cell contains the string ``value`` (case-sensitive), or a list cell has
  an element equal to ``value``.
- ``in``: the cell equals one element of the list ``value``.
- ``is_empty`` / ``is_not_empty``: the cell is / is not missing, ``null``, blank text, ``[]`` or
  ``{}``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from tocsin import messages
from tocsin.errors import ConfigError

OPS = ("eq", "neq", "gt", "gte", "lt", "lte", "contains", "in", "is_empty", "is_not_empty")
_UNARY = frozenset({"is_empty", "is_not_empty"})
_ORDERING = frozenset({"gt", "gte", "lt", "lte"})
_KEYS = frozenset({"column", "op", "value"})


def validate_when(when: object, columns: Mapping[str, str]) -> list[dict[str, Any]]:
    """The normalised predicate list; ``ConfigError`` code when_column_missing or
    when_predicate_invalid. ``None`` means no predicates."""
    if when is None:
        return []
    if not isinstance(when, list):
        raise _invalid("when must be a list of {column, op, value} objects")
    return [_validate_one(item, columns) for item in when]


def _validate_one(item: object, columns: Mapping[str, str]) -> dict[str, Any]:
    if not isinstance(item, Mapping):
        raise _invalid("each predicate must be an object with column, op and value")
    unknown = sorted(str(k) for k in item if k not in _KEYS)
    if unknown:
        raise _invalid(f"unknown key(s) {', '.join(repr(k) for k in unknown)}")
    op = item.get("op")
    if not isinstance(op, str) or op not in OPS:
        raise _invalid(f"unknown op {op!r}. valid ops: {', '.join(OPS)}")
    column = item.get("column")
    if not isinstance(column, str) or column not in columns:
        detail = messages.with_columns(messages.when_column_missing(column), columns)
        raise ConfigError(detail, code="when_column_missing")
    out: dict[str, Any] = {"column": column, "op": op}
    if op in _UNARY:
        if "value" in item:
            out["value"] = item["value"]
        return out
    if "value" not in item:
        raise _invalid(f"op '{op}' needs a value")
    _check_value(op, item["value"])
    out["value"] = item["value"]
    return out


def _check_value(op: str, value: object) -> None:
    if op == "in":
        if not isinstance(value, list) or not all(_is_scalar(v) for v in value):
            raise _invalid("op 'in' needs a list of scalar values")
    elif op in _ORDERING or op == "contains":
        if not (isinstance(value, str) or _is_number(value)):
            raise _invalid(f"op '{op}' needs a string or number value")
    elif not _is_scalar(value):
        raise _invalid(f"op '{op}' needs a scalar value (string, number, boolean or null)")


def _invalid(reason: str) -> ConfigError:
    return ConfigError(messages.when_predicate_invalid(reason), code="when_predicate_invalid")


def matches(when: object, row: Mapping[str, Any] | None) -> bool:
    """AND over the predicates; never raises. A malformed predicate is false."""
    if not when:
        return True
    if not isinstance(when, list):
        return False
    cells: Mapping[str, Any] = row if isinstance(row, Mapping) else {}
    return all(_holds(p, cells) for p in when)


def _holds(predicate: object, row: Mapping[str, Any]) -> bool:
    if not isinstance(predicate, Mapping):
        return False
    op = predicate.get("op")
    column = predicate.get("column")
    if not isinstance(column, str):
        return False
    test = _TESTS.get(op) if isinstance(op, str) else None
    if test is None:
        return False
    try:
        return test(row.get(column), predicate.get("value"))
    except Exception:  # a cell of an unexpected type must never break a tick
        return False


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _is_scalar(value: object) -> bool:
    return value is None or isinstance(value, str | bool) or _is_number(value)


def _equal(cell: object, value: object) -> bool:
    if _is_number(cell) and _is_number(value):
        return bool(cell == value)
    if isinstance(cell, bool) or isinstance(value, bool):
        return type(cell) is type(value) and cell == value
    if cell is None or value is None:
        return cell is None and value is None
    return isinstance(cell, str) and isinstance(value, str) and cell == value


def _compare(cell: object, value: object, ok: Callable[[Any, Any], bool]) -> bool:
    if _is_number(cell) and _is_number(value):
        return ok(cell, value)
    if isinstance(cell, str) and isinstance(value, str):
        return ok(cell, value)
    return False


def _contains(cell: object, value: object) -> bool:
    if isinstance(cell, str) and isinstance(value, str):
        return value in cell
    if isinstance(cell, list):
        return any(_equal(item, value) for item in cell)
    return False


def _is_empty(cell: object) -> bool:
    if cell is None:
        return True
    if isinstance(cell, str):
        return not cell.strip()
    return isinstance(cell, list | dict) and not cell


_TESTS: dict[str, Callable[[Any, Any], bool]] = {
    "eq": _equal,
    "neq": lambda c, v: not _equal(c, v),
    "gt": lambda c, v: _compare(c, v, lambda a, b: a > b),
    "gte": lambda c, v: _compare(c, v, lambda a, b: a >= b),
    "lt": lambda c, v: _compare(c, v, lambda a, b: a < b),
    "lte": lambda c, v: _compare(c, v, lambda a, b: a <= b),
    "contains": _contains,
    "in": lambda c, v: isinstance(v, list) and any(_equal(c, x) for x in v),
    "is_empty": lambda c, v: _is_empty(c),
    "is_not_empty": lambda c, v: not _is_empty(c),
}

__all__ = ["OPS", "matches", "validate_when"]
