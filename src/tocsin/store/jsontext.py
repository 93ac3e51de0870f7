"""JSON columns as their stored text (the workflow store, STYLE R5): a value read from one JSON
column is written to another as is, and a JSON column read raw is decoded once."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any


class JSONText(str):
    """A JSON column's value kept as its stored text: read from one JSON column to be written to
    another as is (a schedule's input becoming its run's), without a decode and a re-encode."""

    __slots__ = ()


_FRESH: dict[str, Callable[[], Any]] = {"[]": list, "{}": dict}  # as common as they are cheap


def json_text(value: object) -> str | None:
    """What a JSON column is written as: None (SQL NULL), a :class:`JSONText` as it is, else the
    value's JSON text."""
    if value is None:
        return None
    if type(value) is JSONText:
        return value
    if not value and type(value) in (list, dict):  # a new run's receipts, an empty input
        return "[]" if type(value) is list else "{}"
    return json.dumps(value)


def json_value(text: str | None) -> Any:
    """A JSON column's text read raw (SQLite; PostgreSQL cast to text) as its value: a fresh
    object each time (``[]``/``{}`` made without the parser)."""
    if text is None:
        return None
    fresh = _FRESH.get(text)
    return fresh() if fresh is not None else json.loads(text)


__all__ = ["JSONText", "json_text", "json_value"]
