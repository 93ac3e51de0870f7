"""JSON columns as their stored text (the workflow store, STYLE R5): a value read from one JSON
column is written to another as is, and a JSON column read raw is decoded once."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

JSONText = bytes
"""A JSON column's value kept as its stored text (UTF-8): read from one JSON column to be written
to another as is (a schedule's input becoming its run's), without a decode and a re-encode.
``bytes``: no JSON value is (the writer tells the two apart), and, unlike an instance of a class
defined in Python (a ``str`` subclass was), the collector does not track it: the rows holding
it (a page of 1,000 due schedules, their pending runs) stay untracked while the page is fired,
not walked and promoted through the collector's generations."""


def stored_text(text: str) -> JSONText:
    """A JSON column's stored text, to be handed over as is (:data:`JSONText`)."""
    return text.encode()


_FRESH: dict[str, Callable[[], Any]] = {"[]": list, "{}": dict}  # as common as they are cheap


def json_text(value: object) -> str | None:
    """What a JSON column is written as: None (SQL NULL), a :data:`JSONText` as it is, else the
    value's JSON text."""
    if value is None:
        return None
    if type(value) is bytes:  # JSONText
        return value.decode()
    if not value and type(value) in (list, tuple, dict):  # a new run's receipts, an empty input
        return "{}" if type(value) is dict else "[]"
    return json.dumps(value)


def json_value(text: str | None) -> Any:
    """A JSON column's text read raw (SQLite; PostgreSQL cast to text) as its value: a fresh
    object each time (``[]``/``{}`` made without the parser)."""
    if text is None:
        return None
    fresh = _FRESH.get(text)
    return fresh() if fresh is not None else json.loads(text)


__all__ = ["JSONText", "json_text", "json_value", "stored_text"]
