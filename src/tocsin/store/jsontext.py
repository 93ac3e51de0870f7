"""JSON columns read and written raw, as their text (the workflow store's driver statements,
which bypass SQLAlchemy's JSON type): one encode per value written, one decode per text read."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import Any

_FRESH: dict[str, Callable[[], Any]] = {"[]": list, "{}": dict}  # as common as they are cheap
_ENCODE = json.JSONEncoder(check_circular=False).encode  # json.dumps' text, without its cycle check


def json_text(value: object) -> str | None:
    """What a JSON column is written as: None (SQL NULL), else the value's JSON text."""
    if value is None:
        return None
    if not value and type(value) in (list, tuple, dict):  # a new run's receipts, an empty input
        return "{}" if type(value) is dict else "[]"
    return _ENCODE(value)


def json_value(text: str | None) -> Any:
    """A JSON column's text read raw (SQLite; PostgreSQL cast to text) as its value: a fresh
    object each time (``[]``/``{}`` made without the parser)."""
    if text is None:
        return None
    fresh = _FRESH.get(text)
    return fresh() if fresh is not None else json.loads(text)


def json_values_at(values: list[Any], at: Iterable[int]) -> None:
    """:func:`json_value` of ``values[i]`` for each ``i`` of ``at``, in place (a row's JSON
    columns): a NULL is left as it is, without a call."""
    for i in at:
        text = values[i]
        if text is not None:
            fresh = _FRESH.get(text)
            values[i] = fresh() if fresh is not None else json.loads(text)


__all__ = ["json_text", "json_value", "json_values_at"]
