"""Schedule documents: imperative workflow schedules as code (SPEC §11, §12, §13). Pure.

One imperative schedule per line: ``"workflow"`` (the workflow id, as in code: portable as it
is) plus the schedule as ``POST /api/schedules`` takes it (snake_case keys), ``id`` optional::

    {"workflow":"daily-report","id":"sch_…","trigger":{"all":[{"cron":"0 9 * * *"},
     {"event":"table_updated","table_id":"…"}]},"timezone":"Europe/Berlin","input_data":{…}}

``cron`` or ``trigger`` (the JSON tree of SPEC §13, the same as the API's and the CLI's). A line
holding only ``"workflow"`` declares the workflow managed without imperative schedules (all of
them plan as delete). Declared schedules (``wf_…``, source ``declared``) belong to code: export
leaves them out, a document naming one is refused.

Both sides are compared in one normal form (:func:`body`), computed from what would be stored:

- ``timezone`` is always written (the default is the host's zone: not portable);
- in a tree, a time trigger's ``timezone`` equal to the schedule's, ``repeated: "both"`` and
  ``missing: "skip"`` are left out (``from_json`` fills them back in);
- ``overlap: "skip"``, ``catch_up: "latest"``, ``max_catch_up: 100`` and null payloads are left
  out.

So an explicit default plans as noop, and export → plan is byte-stable.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from tocsin.core.schedules.tree import EVENT_SUBJECTS
from tocsin.iac.differ import Entry, diff

PAYLOAD = ("input_data", "initial_state", "request_context", "metadata")
DEFAULTS: dict[str, Any] = {"overlap": "skip", "catch_up": "latest", "max_catch_up": 100}
#: the keys a schedule document may hold, in export order
ORDER = ("workflow", "id", "cron", "trigger", "timezone", *DEFAULTS, *PAYLOAD)
LEAF_DEFAULTS = {"repeated": "both", "missing": "skip"}


def _tree(node: Any, zone: str) -> Any:
    """A stored JSON tree in the normal form (keys in ``from_json`` order)."""
    if not isinstance(node, Mapping):
        return node
    for op in ("all", "any"):
        if op in node and isinstance(node[op], list):
            return {op: [_tree(child, zone) for child in node[op]]}
    if "cron" in node:
        out: dict[str, Any] = {"cron": node["cron"]}
        if node.get("timezone") not in (None, zone):
            out["timezone"] = node["timezone"]
        for key, default in LEAF_DEFAULTS.items():
            if node.get(key, default) != default:
                out[key] = node[key]
        return out
    kind = node.get("event")
    subject = EVENT_SUBJECTS.get(kind) if isinstance(kind, str) else None
    if subject is not None:
        return {"event": kind, subject: node.get(subject)}
    return dict(node)


def body(schedule: Mapping[str, Any]) -> dict[str, Any]:
    """The normal form of a stored row or a ``DeclaredSchedule`` (as a mapping: ``cron``,
    ``timezone``, the tree under ``trigger_tree`` or ``trigger``, payloads, options)."""
    zone = str(schedule["timezone"])
    tree = schedule.get("trigger_tree", schedule.get("trigger"))
    out: dict[str, Any] = {}
    if tree is None:
        out["cron"] = schedule["cron"]
    else:
        out["trigger"] = _tree(tree, zone)
    out["timezone"] = zone
    for key, default in DEFAULTS.items():
        if schedule.get(key, default) != default:
            out[key] = schedule[key]
    for key in PAYLOAD:
        if schedule.get(key) is not None:
            out[key] = _sorted(schedule[key])
    return out


def _sorted(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _sorted(value[k]) for k in sorted(value)}
    if isinstance(value, list):
        return [_sorted(v) for v in value]
    return value


def canonical(workflow: str, schedule_id: str | None, normal: Mapping[str, Any]) -> dict[str, Any]:
    """One document: ``workflow``, ``id``, then the normal form in :data:`ORDER`."""
    out: dict[str, Any] = {"workflow": workflow}
    if schedule_id is not None:
        out["id"] = schedule_id
    out.update({k: normal[k] for k in ORDER if k in normal})
    return out


@dataclass
class Authored:
    """One schedule document: its number in the bundle, its id (None when left out) and its
    normal form (computed by the service, which validates it like ``POST /api/schedules``)."""

    number: int
    schedule_id: str | None
    normal: dict[str, Any]
    notes: list[str] = field(default_factory=list)


@dataclass
class WorkflowPlan:
    """One workflow's plan; ``creates`` / ``updates`` / ``deletes`` carry it out."""

    workflow: str
    entries: list[Entry] = field(default_factory=list)
    creates: list[tuple[int, Authored]] = field(default_factory=list)  # (entry index, doc)
    updates: list[tuple[str, Authored]] = field(default_factory=list)  # (stored id, doc)
    deletes: list[str] = field(default_factory=list)


def _entry(workflow: str, sid: str | None, action: str, changes: list[Any]) -> Entry:
    return {"workflow": workflow, "schedule_id": sid, "action": action, "changes": changes}


def plan_workflow(
    workflow: str, authored: Sequence[Authored], stored: Sequence[Mapping[str, Any]]
) -> WorkflowPlan:
    """``authored`` against the workflow's ``stored`` imperative rows (id order): by id first,
    then a document without id adopts the first equal row no other document names."""
    plan = WorkflowPlan(workflow)
    by_id = {str(row["id"]): row for row in stored}
    named = {a.schedule_id for a in authored if a.schedule_id is not None}
    used: set[str] = set(named) & set(by_id)
    for doc in authored:
        twin = by_id.get(doc.schedule_id) if doc.schedule_id is not None else None
        adopted = False
        if doc.schedule_id is None:
            twin = next(
                (r for r in stored if str(r["id"]) not in used and body(r) == doc.normal), None
            )
            adopted = twin is not None
        if twin is None:
            entry = _entry(workflow, doc.schedule_id, "create", diff({}, doc.normal))
            plan.creates.append((len(plan.entries), doc))
        else:
            sid = str(twin["id"])
            used.add(sid)
            changes = diff(body(twin), doc.normal)
            entry = _entry(workflow, sid, "update" if changes else "noop", changes)
            if adopted:
                entry["adopted"] = True
            if changes:
                plan.updates.append((sid, doc))
        if doc.notes:
            entry["warnings"] = list(doc.notes)
        plan.entries.append(entry)
    for row in stored:
        sid = str(row["id"])
        if sid not in used:
            plan.entries.append(_entry(workflow, sid, "delete", diff(body(row), {})))
            plan.deletes.append(sid)
    return plan


__all__ = [
    "ORDER",
    "PAYLOAD",
    "Authored",
    "WorkflowPlan",
    "body",
    "canonical",
    "plan_workflow",
]
