"""What callers see of workflow schedules (SPEC §12) and of a compound trigger (SPEC §13): the
row as plain dicts, the tree with its latches, in words."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from tocsin import messages
from tocsin.core.model import ScheduleFire, WorkflowSchedule
from tocsin.core.schedules import tree_eval as compound_eval
from tocsin.core.schedules.tree import EVENT_SUBJECTS, Cron, Event, Node, from_json, to_json
from tocsin.core.time.cron import explain, parse
from tocsin.engine.schedule_rows import load_latches, subjects_of

EVENT_WORDS = {
    "table_updated": "table {} was updated",
    "workflow_succeeded": "a run of workflow {} succeeded",
    "schedule_succeeded": "a run of schedule {} succeeded",
    "definition_changed": "the definition of workflow {} changed",
}


Names = Mapping[str, str]  # table id → its name
NO_NAMES: Names = {}

SCHEDULE_FIELDS = (
    "id",
    "workflow_id",
    "cron",
    "timezone",
    "next_fire_at",
    "paused",
    "paused_at",
    "source",
    "overlap",
    "catch_up",
    "max_catch_up",
    "input_data",
    "initial_state",
    "request_context",
    "metadata",
    "created_at",
    "updated_at",
)


def table_ids(raw: object) -> set[str]:
    """The ids of the tables a stored tree listens to (none when it no longer reads)."""
    try:
        return {subject for kind, subject in subjects_of(raw) if kind == "table_updated"}
    except ValueError:  # ConfigError too
        return set()


def subject_name(node: Event, names: Names) -> str | None:
    """The name of an event's subject when it is a table with a known name."""
    return names.get(node.subject) if node.kind == "table_updated" else None


def describe(node: Node, names: Names = NO_NAMES) -> str:
    """The tree in words: ``at 09:00 … in Europe/Berlin, if table 'Orders' was updated`` — a
    table by its name (``names``), by its id when it has none (gone)."""
    if isinstance(node, Cron):
        text = explain(parse(node.expression, dialect="extended"))
        return f"{text} ({node.timezone})"
    if isinstance(node, Event):
        return EVENT_WORDS[node.kind].format(f"'{subject_name(node, names) or node.subject}'")
    word = " and " if node.op == "all" else " or "
    return "(" + word.join(describe(c, names) for c in node.children) + ")"


def trigger_view(row: WorkflowSchedule, now: datetime, names: Names = NO_NAMES) -> dict[str, Any]:
    """``{"tree", "description", "satisfied_now", "next_instant"}``: the JSON tree where each
    event leaf carries ``latched_since`` (None: not latched) and ``name`` (its table's name, or
    None), and each time leaf ``next``."""
    tree = from_json(row.trigger_tree)
    latches = load_latches(row.latches)
    return {
        "tree": _annotate(tree, to_json(tree), latches, now, "", names),
        "description": describe(tree, names),
        "satisfied_now": bool(latches) and compound_eval.satisfied(tree, latches, ()),
        "next_instant": compound_eval.next_instant(tree, now),
    }


def _annotate(
    node: Node,
    raw: dict[str, Any],
    latches: Mapping[str, datetime],
    now: datetime,
    path: str,
    names: Names,
) -> dict[str, Any]:
    if isinstance(node, Cron):
        return {**raw, "path": path, "next": compound_eval.next_of(node, now)}
    if isinstance(node, Event):
        name = subject_name(node, names)
        return {**raw, "path": path, "name": name, "latched_since": latches.get(path)}
    children = [
        _annotate(c, r, latches, now, f"{path}.{i}" if path else str(i), names)
        for i, (c, r) in enumerate(zip(node.children, raw[node.op], strict=True))
    ]
    return {node.op: children}


def public_schedule(
    row: WorkflowSchedule, last_fire: ScheduleFire | None, names: Names = NO_NAMES
) -> dict[str, Any]:
    """A schedule row as callers see it; ``names``: the names of the tables its tree reads."""
    out = {name: getattr(row, name) for name in SCHEDULE_FIELDS}
    tree = row.trigger_tree
    if tree is None:
        out["description"] = explain(parse(row.cron, dialect="extended"))
    else:
        out["cron"] = None
        try:
            out["description"] = describe(from_json(tree), names)
        except ValueError as exc:  # a stored tree that no longer reads (ConfigError too)
            out["description"] = messages.trigger_unreadable(exc)
    out["last_fire"] = last_fire.as_dict() if last_fire is not None else None
    return out


__all__ = [
    "EVENT_SUBJECTS",
    "Names",
    "describe",
    "public_schedule",
    "table_ids",
    "trigger_view",
]
