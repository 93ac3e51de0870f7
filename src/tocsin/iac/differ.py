"""The differ: authored trigger documents against the stored configs (SPEC §11). Pure.

Both sides are compared in the omit-when-default normal form (``core.config.adoption.comparable``),
so an explicit ``offset_minutes: 0`` or ``timezone: "UTC"`` plans as noop, never as a perpetual
update. Per table named in the documents:

- a document with an ``id`` is the stored trigger of that id: ``noop`` or ``update`` (or
  ``create`` when the table has no such trigger: it is saved under that id);
- a document without ``id`` structurally equal to a stored trigger no other document names is
  that trigger, **adopted** (``noop``, the entry shows the adopted id); otherwise ``create``;
- a stored trigger no document names or adopts: ``delete``.

Tables no document names are not looked at. Nothing here validates a trigger: the service runs
apply's own check (the one every triggers save runs) on each changed table's config and hands it
to :func:`mark_refused`, which turns each entry of a trigger that check refuses (a boolean
``offset_minutes``, a kind change under one id, the 101st trigger of a table, …) into
``invalid``, with the text ``PUT …/triggers`` answers, its table and trigger named.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from tocsin import messages
from tocsin.core.config.adoption import adopt_action_ids, comparable, match_triggers
from tocsin.errors import PermissionDenied, ValidationError
from tocsin.iac.documents import TableDocuments

Entry = dict[str, Any]


@dataclass
class TableDocumentPlan:
    """One table's plan: its entries, and the config that carries it out (document order, the
    ids of matched and adopted triggers filled in). ``created`` maps an entry's position to the
    position of its trigger in ``config`` (to report the ids a save assigns)."""

    name: str
    entries: list[Entry] = field(default_factory=list)
    config: list[dict[str, Any]] = field(default_factory=list)
    created: dict[int, int] = field(default_factory=dict)

    @property
    def changed(self) -> bool:
        return any(e["action"] != "noop" for e in self.entries)


def diff(before: object, after: object, path: str = "") -> list[dict[str, Any]]:
    """The leaf changes from ``before`` to ``after``: ``{"path", "before"?, "after"?}`` (a side
    is absent where the key is); objects recurse by key, equal-length lists by index."""
    if before == after:
        return []
    if isinstance(before, Mapping) and isinstance(after, Mapping):
        out: list[dict[str, Any]] = []
        for key in [*before, *(k for k in after if k not in before)]:
            sub = f"{path}.{key}" if path else str(key)
            if key not in after:
                out.append({"path": sub, "before": before[key]})
            elif key not in before:
                out.append({"path": sub, "after": after[key]})
            else:
                out.extend(diff(before[key], after[key], sub))
        return out
    if isinstance(before, list) and isinstance(after, list) and len(before) == len(after):
        changes: list[dict[str, Any]] = []
        for index, (b, a) in enumerate(zip(before, after, strict=True)):
            changes.extend(diff(b, a, f"{path}[{index}]"))
        return changes
    return [{"path": path, "before": before, "after": after}]


def _entry(table: str, trigger_id: object, name: object, action: str, changes: list[Any]) -> Entry:
    return {
        "table": table,
        "trigger_id": trigger_id if isinstance(trigger_id, str) and trigger_id else None,
        "name": name if isinstance(name, str) else None,
        "action": action,
        "changes": changes,
    }


def _shown(trigger: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in comparable(trigger).items() if k != "id"}


def plan_table(documents: TableDocuments, stored: Sequence[object]) -> TableDocumentPlan:
    """The plan of one table: ``documents`` against its ``stored`` triggers config."""
    plan = TableDocumentPlan(documents.name)
    matches = match_triggers(documents.triggers, stored)
    used = {m.stored for m in matches if m.stored is not None}
    for match in matches:
        authored = documents.triggers[match.index]
        twin = stored[match.stored] if match.stored is not None else None
        if isinstance(twin, Mapping):
            trigger = {**authored, "id": twin["id"]}
            if "actions" in trigger:
                trigger["actions"] = adopt_action_ids(trigger["actions"], twin.get("actions"))
            changes = diff(comparable(twin), comparable(trigger))
            entry = _entry(plan.name, twin["id"], trigger.get("name"), "update", changes)
            if not changes:
                entry["action"] = "noop"
            if match.adopted:
                entry["adopted"] = True
        else:
            trigger = dict(authored)
            changes = diff({}, _shown(trigger))
            entry = _entry(plan.name, trigger.get("id"), trigger.get("name"), "create", changes)
            plan.created[len(plan.entries)] = len(plan.config)
        plan.entries.append(entry)
        plan.config.append(trigger)
    for index, old in enumerate(stored):
        if index not in used and isinstance(old, Mapping):
            changes = diff(_shown(old), {})
            plan.entries.append(
                _entry(plan.name, old.get("id"), old.get("name"), "delete", changes)
            )
    return plan


REFUSALS = (ValidationError, PermissionDenied)
Check = Callable[[list[dict[str, Any]]], object]
"""A table's triggers config through the checks of a save: raises ``ValidationError`` (or
``PermissionDenied``: an action beyond the saving token's reach)."""


def mark_refused(plan: TableDocumentPlan, check: Check) -> None:
    """Mark each entry whose trigger ``check`` refuses: ``"action": "invalid"`` and ``detail``.

    ``check`` runs on the whole config first (one call when it passes). When it refuses, each
    trigger, in document order, is checked with the ones before it that passed, so every refused
    document is named, each with its own text: a bad trigger, the second of two equal ids, the
    triggers past the table's limit. Raises the whole config's refusal when no single trigger
    explains it.
    """
    try:
        check(plan.config)
        return
    except REFUSALS as whole:
        refusal = whole
    passed: list[dict[str, Any]] = []
    marked = False
    for index, trigger in enumerate(plan.config):
        try:
            check([*passed, trigger])
        except REFUSALS as exc:
            entry = plan.entries[index]  # entries start with the config's triggers, in order
            who = messages.iac_trigger_label(trigger.get("id"), trigger.get("name"), index + 1)
            entry["action"] = "invalid"
            entry["detail"] = messages.iac_trigger_refused(plan.name, who, exc.detail)
            marked = True
        else:
            passed.append(trigger)
    if not marked:
        raise refusal


__all__ = ["Check", "Entry", "TableDocumentPlan", "diff", "mark_refused", "plan_table"]
