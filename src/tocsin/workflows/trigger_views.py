"""What callers see of a compound trigger (SPEC §13): the tree with its latches, in words."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from tocsin.core import compound_eval
from tocsin.core.compound import EVENT_SUBJECTS, Cron, Event, Node, from_json, to_json
from tocsin.core.cron import explain, parse
from tocsin.workflows.compound import load_latches

EVENT_WORDS = {
    "table_updated": "table {} was updated",
    "workflow_succeeded": "a run of workflow {} succeeded",
    "schedule_succeeded": "a run of schedule {} succeeded",
    "definition_changed": "the definition of workflow {} changed",
}


def describe(node: Node) -> str:
    """The tree in words: ``at 09:00 … in Europe/Berlin, if table t was updated``."""
    if isinstance(node, Cron):
        text = explain(parse(node.expression, dialect="extended"))
        return f"{text} ({node.timezone})"
    if isinstance(node, Event):
        return EVENT_WORDS[node.kind].format(f"'{node.subject}'")
    word = " and " if node.op == "all" else " or "
    return "(" + word.join(describe(c) for c in node.children) + ")"


def trigger_view(row: Mapping[str, Any], now: datetime) -> dict[str, Any]:
    """``{"tree", "description", "satisfied_now", "next_instant"}``: the JSON tree where each
    event leaf carries ``latched_since`` (None: not latched) and each time leaf ``next``."""
    tree = from_json(row["trigger_tree"])
    latches = load_latches(row.get("latches"))
    return {
        "tree": _annotate(tree, to_json(tree), latches, now, ""),
        "description": describe(tree),
        "satisfied_now": bool(latches) and compound_eval.satisfied(tree, latches, ()),
        "next_instant": compound_eval.next_instant(tree, now),
    }


def _annotate(
    node: Node, raw: dict[str, Any], latches: Mapping[str, datetime], now: datetime, path: str
) -> dict[str, Any]:
    if isinstance(node, Cron):
        return {**raw, "path": path, "next": compound_eval.next_of(node, now)}
    if isinstance(node, Event):
        return {**raw, "path": path, "latched_since": latches.get(path)}
    children = [
        _annotate(c, r, latches, now, f"{path}.{i}" if path else str(i))
        for i, (c, r) in enumerate(zip(node.children, raw[node.op], strict=True))
    ]
    return {node.op: children}


__all__ = ["EVENT_SUBJECTS", "describe", "trigger_view"]
