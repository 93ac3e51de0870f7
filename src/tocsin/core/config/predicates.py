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

A predicate may instead test the *previous* value of an update (SPEC §13):
``{"column": "Status", "was": "Open"}`` holds when the cell equalled ``was`` (a scalar, ``eq``'s
equality) before the write; it is allowed only on ``on: "updated"`` triggers, and is false
wherever no previous row is known.
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
_WAS_KEYS = frozenset({"column", "was"})


def validate_when(
    when: object, columns: Mapping[str, str], *, previous: bool = False
) -> list[dict[str, Any]]:
    """The normalised predicate list; ``ConfigError`` code when_column_missing or
    when_predicate_invalid. ``None`` means no predicates. ``previous``: the trigger sees the
    row before the write (``on: "updated"``), so ``was`` predicates are allowed."""
    if when is None:
        return []
    if not isinstance(when, list):
        raise _invalid(messages.WHEN_NOT_LIST)
    return [_validate_one(item, columns, previous) for item in when]


def _validate_was(
    item: Mapping[str, Any], columns: Mapping[str, str], previous: bool
) -> dict[str, Any]:
    unknown = sorted(str(k) for k in item if k not in _WAS_KEYS)
    if unknown:
        raise _invalid(messages.was_keys_unknown(unknown))
    if not previous:
        raise _invalid(messages.WAS_ONLY_ON_UPDATED)
    column = item.get("column")
    if not isinstance(column, str) or column not in columns:
        raise ConfigError(messages.when_column_missing(column), code="when_column_missing")
    if not _is_scalar(item["was"]):
        raise _invalid(messages.WAS_NOT_SCALAR)
    return {"column": column, "was": item["was"]}


def _validate_one(item: object, columns: Mapping[str, str], previous: bool) -> dict[str, Any]:
    if not isinstance(item, Mapping):
        raise _invalid(messages.PREDICATE_NOT_OBJECT)
    if "was" in item:
        return _validate_was(item, columns, previous)
    unknown = sorted(str(k) for k in item if k not in _KEYS)
    if unknown:
        raise _invalid(messages.predicate_keys_unknown(unknown))
    op = item.get("op")
    if not isinstance(op, str) or op not in OPS:
        raise _invalid(messages.op_unknown(op, OPS))
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
        raise _invalid(messages.op_needs_value(op))
    _check_value(op, item["value"])
    out["value"] = item["value"]
    return out


def _check_value(op: str, value: object) -> None:
    if op == "in":
        if not isinstance(value, list) or not all(_is_scalar(v) for v in value):
            raise _invalid(messages.OP_IN_NOT_LIST)
    elif op in _ORDERING or op == "contains":
        if not (isinstance(value, str) or _is_number(value)):
            raise _invalid(messages.op_needs_string_or_number(op))
    elif not _is_scalar(value):
        raise _invalid(messages.op_needs_scalar(op))


def _invalid(reason: str) -> ConfigError:
    return ConfigError(messages.when_predicate_invalid(reason), code="when_predicate_invalid")


def matches(
    when: object, row: Mapping[str, Any] | None, previous: Mapping[str, Any] | None = None
) -> bool:
    """AND over the predicates; never raises. A malformed predicate is false; a ``was``
    predicate without a ``previous`` row is false."""
    if not when:
        return True
    if not isinstance(when, list):
        return False
    cells: Mapping[str, Any] = row if isinstance(row, Mapping) else {}
    return all(_holds(p, cells, previous) for p in when)


def _holds(
    predicate: object, row: Mapping[str, Any], previous: Mapping[str, Any] | None = None
) -> bool:
    if not isinstance(predicate, Mapping):
        return False
    if "was" in predicate:
        column = predicate.get("column")
        if not isinstance(previous, Mapping) or not isinstance(column, str):
            return False
        return _equal(previous.get(column), predicate["was"])
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


def same_value(a: object, b: object) -> bool:
    """Did a cell keep its value? Numbers compare numerically, everything else by type and
    value (``True`` is not ``1``, ``"1"`` is not ``1``)."""
    if _is_number(a) and _is_number(b):
        return bool(a == b)
    return type(a) is type(b) and a == b


def validate_changed(on: object, changed: object, columns: Mapping[str, str]) -> list[str] | None:
    """A row-event trigger's ``changed``: on ``updated`` only, a non-empty list of distinct
    column names; the trigger fires only when one of their values changed (§13)."""
    if changed is None:
        return None
    if on != "updated":
        raise ConfigError(messages.CHANGED_ONLY_ON_UPDATED, code="changed_invalid")
    if not isinstance(changed, list) or not changed:
        raise ConfigError(messages.CHANGED_NOT_LIST, code="changed_invalid")
    for column in changed:
        if not isinstance(column, str) or column not in columns:
            raise ConfigError(
                messages.changed_column_missing(column), code="changed_column_missing"
            )
    if len(set(changed)) != len(changed):
        raise ConfigError(messages.CHANGED_DUPLICATE, code="changed_invalid")
    return list(changed)


__all__ = ["OPS", "matches", "same_value", "validate_changed", "validate_when"]
