"""A compound trigger (SPEC §13) in words, for the Studio schedule pages.

Pure: it reads the ``trigger`` view of ``t.schedules.get(id)`` (``service.schedule_views``:
the JSON tree where each time leaf carries ``next`` and each event leaf ``latched_since``) and
gives the template nested blocks, one per node:

- ``{"kind": "all" | "any", "label": "ALL of:" | "ANY of:", "children": [...]}``
- ``{"kind": "time", "words", "cron", "timezone", "dst": [two sentences], "next"}``
- ``{"kind": "event", "words", "subject", "name", "href", "latched_since"}``: a table by its
  name (the view's ``name``), by its id when it has none; the link goes to the id's page
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

from tocsin.core.schedules.tree import EVENT_SUBJECTS

from .words import cron_words

GROUPS = {"all": "ALL of:", "any": "ANY of:"}
#: event kind → (words before the subject, words after it, where the subject's page is)
EVENTS = {
    "table_updated": ("table", "updated", "/tables/{}"),
    "workflow_succeeded": ("workflow", "succeeded", "/workflows/{}"),
    "schedule_succeeded": ("schedule", "succeeded", "/workflows/schedules/{}"),
    "definition_changed": ("definition of", "changed", "/workflows/{}"),
}
REPEATED = {
    "both": "A wall time that occurs twice (clocks going back) fires twice.",
    "first": "A wall time that occurs twice (clocks going back) fires once, the first time.",
}
MISSING = {
    "skip": "A wall time skipped by clocks going forward never fires.",
    "shift": "A wall time skipped by clocks going forward fires at the first valid instant "
    "after the gap.",
}


def tree_blocks(node: Mapping[str, Any]) -> dict[str, Any]:
    """One node of the view's ``tree`` (and its children) as a block for the template."""
    for op, label in GROUPS.items():
        if op in node:
            return {"kind": op, "label": label, "children": [tree_blocks(c) for c in node[op]]}
    if "cron" in node:
        return _time(node)
    if "event" in node:
        return _event(node)
    return {"kind": "unknown", "words": "a trigger Studio cannot read"}


def _time(node: Mapping[str, Any]) -> dict[str, Any]:
    expression = str(node["cron"])
    return {
        "kind": "time",
        "words": cron_words(expression, dialect="extended"),
        "cron": expression,
        "timezone": node.get("timezone") or "UTC",
        "dst": [
            REPEATED.get(str(node.get("repeated")), ""),
            MISSING.get(str(node.get("missing")), ""),
        ],
        "next": node.get("next"),
    }


def _event(node: Mapping[str, Any]) -> dict[str, Any]:
    kind = str(node["event"])
    before, after, page = EVENTS.get(kind, (kind, "", "{}"))
    subject = str(node.get(EVENT_SUBJECTS.get(kind, ""), ""))
    name = str(node.get("name") or subject)
    return {
        "kind": "event",
        "before": before,
        "after": after,
        "subject": subject,
        "name": name,
        "words": f"{before} {name} {after}",
        "href": page.format(quote(subject, safe="")) if kind in EVENTS else None,
        "latched_since": node.get("latched_since"),
    }


def tree_summary(description: object) -> str:
    """The schedules list's compact reading: the view's description without its outer
    parentheses (``(at … and table 't' was updated)`` → ``at … and table 't' was updated``)."""
    text = str(description or "")
    if text.startswith("(") and text.endswith(")") and _balanced(text[1:-1]):
        return text[1:-1]
    return text


def _balanced(text: str) -> bool:
    depth = 0
    for char in text:
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth < 0:
            return False
    return depth == 0


__all__ = ["tree_blocks", "tree_summary"]
