"""A scope's tables by name, and the export of their triggers (SPEC §11). Pure.

Documents name tables by name within one scope; a name must denote exactly one live table of
that scope (a trashed table is not addressable, two live tables sharing a name are ambiguous).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from tocsin import messages
from tocsin.core.config.exposure import without_grants
from tocsin.core.model import Table
from tocsin.errors import ValidationError
from tocsin.iac.documents import canonical


def resolve(
    tables: Sequence[Table], names: Iterable[str], *, scope: str, scope_id: str
) -> dict[str, Table]:
    """``{name: table}`` for each name (400 when unknown or ambiguous), in the order given."""
    out: dict[str, Table] = {}
    for name in names:
        found = [t for t in tables if t.name == name]
        if not found:
            raise ValidationError(messages.iac_table_unknown(name, scope, scope_id))
        if len(found) > 1:
            raise ValidationError(messages.iac_table_ambiguous(name, len(found)))
        out[name] = found[0]
    return out


def stored_config(table: Table) -> list[Any]:
    """A table's stored triggers config as authors see it (``[]`` when none): without the token
    ids of ``core.config.exposure``, which are not the author's and differ between environments."""
    triggers = without_grants(table.triggers)
    return list(triggers) if isinstance(triggers, list) else []


def export_documents(
    tables: Sequence[Table],
    names: Sequence[str] | None,
    *,
    scope: str,
    scope_id: str,
) -> list[dict[str, Any]]:
    """The documents of ``names`` (every live table with triggers when None), tables in the
    given order (else the scope's), triggers in config order, keys canonical."""
    if names is None:
        with_triggers = [t for t in tables if stored_config(t)]
        names = list(dict.fromkeys(t.name for t in with_triggers))
    chosen = resolve(tables, names, scope=scope, scope_id=scope_id)
    return [
        canonical(name, trigger)
        for name, table in chosen.items()
        for trigger in stored_config(table)
        if isinstance(trigger, Mapping)
    ]


__all__ = ["export_documents", "resolve", "stored_config"]
