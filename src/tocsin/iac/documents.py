"""Trigger documents: the JSON Lines format of ``tocsin export | plan | apply`` (SPEC §11).

One trigger per line: ``"table"`` (the table's name within the scope given on the command line;
ids differ between environments) plus the trigger exactly as ``PUT …/triggers`` takes it, ``id``
optional. Columns are named as in the table, so they are portable as they are. A line holding
only ``"table"`` declares the table managed without triggers (all of its triggers plan as
delete). Blank lines are ignored.

Export writes the normalized config in one canonical key order (``table, id, name, on, when,
schedule, actions``; ``type`` first in a schedule, ``id, type`` first in an action, other keys
sorted), so exporting twice gives identical bytes on every backend.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from tocsin import messages
from tocsin.errors import ValidationError

TRIGGER_ORDER = ("id", "name", "on", "when", "schedule", "actions")


def _sorted(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _sorted(value[k]) for k in sorted(value)}
    if isinstance(value, list):
        return [_sorted(v) for v in value]
    return value


def _leading(item: Mapping[str, Any], first: tuple[str, ...]) -> dict[str, Any]:
    out = {k: _sorted(item[k]) for k in first if k in item}
    out.update({k: _sorted(item[k]) for k in sorted(item) if k not in first})
    return out


def canonical(table: str, trigger: Mapping[str, Any]) -> dict[str, Any]:
    """One document: ``table`` then the trigger's keys in the canonical order."""
    out: dict[str, Any] = {"table": table}
    for key in (*TRIGGER_ORDER, *sorted(k for k in trigger if k not in TRIGGER_ORDER)):
        if key not in trigger:
            continue
        value = trigger[key]
        if key == "schedule" and isinstance(value, Mapping):
            value = _leading(value, ("type",))
        elif key == "actions" and isinstance(value, list):
            value = [_leading(a, ("id", "type")) if isinstance(a, Mapping) else a for a in value]
        else:
            value = _sorted(value)
        out[key] = value
    return out


def dumps(documents: Iterable[Mapping[str, Any]]) -> str:
    """JSON Lines: one compact document per line, keys in the order given, UTF-8 as is."""
    lines = (json.dumps(d, ensure_ascii=False, separators=(",", ":")) for d in documents)
    return "".join(f"{line}\n" for line in lines)


def loads(text: str) -> list[dict[str, Any]]:
    """Parse JSON Lines; 400 naming the first line that is not one JSON object. Lines end at
    ``\n`` only (``str.splitlines`` would also split inside strings holding U+0085 or
    U+2028, which the dump writes as they are)."""
    out: list[dict[str, Any]] = []
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except ValueError as exc:
            raise ValidationError(messages.iac_line_invalid(number, str(exc))) from None
        if not isinstance(value, dict):
            raise ValidationError(messages.iac_line_invalid(number, type(value).__name__))
        out.append(value)
    return out


@dataclass
class TableDocuments:
    """The documents of one table, in document order (``table`` removed)."""

    name: str
    triggers: list[dict[str, Any]] = field(default_factory=list)


def group(documents: object) -> list[TableDocuments]:
    """Documents grouped by table name, tables in order of first appearance; 400 for a
    document that is not an object with a non-empty string ``table``."""
    if not isinstance(documents, list):
        raise ValidationError(messages.IAC_DOCUMENTS_NOT_LIST)
    tables: dict[str, TableDocuments] = {}
    for number, document in enumerate(documents, start=1):
        if not isinstance(document, Mapping):
            reason = "each document must be a JSON object"
            raise ValidationError(messages.iac_document_invalid(number, reason))
        name = document.get("table")
        if not isinstance(name, str) or not name.strip():
            reason = "'table' must be the name of a table of the scope"
            raise ValidationError(messages.iac_document_invalid(number, reason))
        entry = tables.setdefault(name, TableDocuments(name))
        trigger = {k: v for k, v in document.items() if k != "table"}
        if trigger:
            entry.triggers.append(trigger)
    return list(tables.values())


__all__ = ["TRIGGER_ORDER", "TableDocuments", "canonical", "dumps", "group", "loads"]
