"""Compound triggers: a tree of time and event triggers under AND / OR (SPEC §13).

The tree is built in Python (``AllOf(Cron("0 9 * * *", timezone="Europe/Berlin"),
TableUpdated(table_id))``) or read from JSON (``{"all": [{"cron": …, "timezone": …},
{"event": "table_updated", "table_id": …}]}``); both give the same frozen nodes. Every leaf has a
*path* (``"0"``, ``"1.0"`` …: child indexes from the root), the key of its latch.

Validation happens here, at definition time: an empty AND / OR, an unknown event, a missing or
extra key, a bad cron, an unknown zone, a bad ``repeated`` / ``missing`` all raise
:class:`~tocsin.errors.ConfigError` with the texts of :mod:`tocsin.messages`. ``AND`` over two or
more time triggers is valid but :func:`and_of_times` finds it, so the definition can warn.

Pure: no I/O, no clock. Evaluating a tree is :mod:`tocsin.core.schedules.tree_eval`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from tocsin import messages
from tocsin.core.time import cron
from tocsin.core.time.zones import is_known_zone
from tocsin.errors import ConfigError

CODE = "trigger_invalid"
Repeated = Literal["first", "both"]
Missing = Literal["skip", "shift"]
#: event kind → the key naming its subject
EVENT_SUBJECTS: dict[str, str] = {
    "table_updated": "table_id",
    "workflow_succeeded": "workflow_id",
    "schedule_succeeded": "schedule_id",
    "definition_changed": "workflow_id",
}
MAX_DEPTH = 8
MAX_LEAVES = 64
MAX_SUBJECT = 64


def _fail(text: str) -> ConfigError:
    return ConfigError(text, code=CODE)


@dataclass(frozen=True, slots=True)
class Cron:
    """A time trigger: satisfied only at the instants of ``expression`` in ``timezone``.

    ``repeated="both"`` (default) fires a repeated wall time twice, ``"first"`` once; a wall
    time skipped by a spring-forward gap never fires, unless ``missing="shift"``: then it fires
    at the first valid instant after the gap. ``timezone=None`` takes the schedule's zone.
    """

    expression: str
    timezone: str | None = None
    repeated: Repeated = "both"
    missing: Missing = "skip"

    def __post_init__(self) -> None:
        if not isinstance(self.expression, str):
            raise _fail(messages.trigger_cron_not_string(self.expression))
        cron.parse(self.expression, dialect="extended")  # raises CronError (a ConfigError)
        object.__setattr__(self, "expression", " ".join(self.expression.split()))
        if self.timezone is not None and not is_known_zone(self.timezone):
            raise ConfigError(messages.schedule_timezone_unknown(self.timezone), code="tz")
        if self.repeated not in ("first", "both"):
            raise _fail(messages.trigger_repeated_invalid(self.repeated))
        if self.missing not in ("skip", "shift"):
            raise _fail(messages.trigger_missing_invalid(self.missing))


@dataclass(frozen=True, slots=True)
class Event:
    """An event trigger: satisfied from its event until the whole tree fires."""

    kind: str
    subject: str

    def __post_init__(self) -> None:
        if self.kind not in EVENT_SUBJECTS:
            raise _fail(messages.trigger_event_unknown(self.kind, sorted(EVENT_SUBJECTS)))
        key = EVENT_SUBJECTS[self.kind]
        ok = isinstance(self.subject, str) and 0 < len(self.subject) <= MAX_SUBJECT
        if not ok or not self.subject.isprintable():
            raise _fail(messages.trigger_subject_invalid(self.kind, key, self.subject))


def TableUpdated(table_id: str) -> Event:
    """A record of the table was created, updated, trashed or restored."""
    return Event("table_updated", table_id)


def WorkflowSucceeded(workflow_id: str) -> Event:
    """A run of the workflow succeeded."""
    return Event("workflow_succeeded", workflow_id)


def ScheduleSucceeded(schedule_id: str) -> Event:
    """A run fired by the schedule succeeded."""
    return Event("schedule_succeeded", schedule_id)


def DefinitionChanged(workflow_id: str) -> Event:
    """The workflow's definition hash changed at a sync."""
    return Event("definition_changed", workflow_id)


@dataclass(frozen=True, slots=True, init=False)
class Compound:
    """``AllOf`` (``op="all"``) or ``AnyOf`` (``op="any"``) over at least one child."""

    op: Literal["all", "any"]
    children: tuple[Node, ...]

    def __init__(self, op: Literal["all", "any"], children: tuple[Node, ...]) -> None:
        if not children:
            raise _fail(messages.trigger_compound_empty(op))
        for child in children:
            if not isinstance(child, Cron | Event | Compound):
                raise _fail(messages.trigger_node_invalid(child))
        object.__setattr__(self, "op", op)
        object.__setattr__(self, "children", tuple(children))


Node = Cron | Event | Compound


def AllOf(*children: Node) -> Compound:
    """AND: satisfied when every child is."""
    return Compound("all", children)


def AnyOf(*children: Node) -> Compound:
    """OR: satisfied when any child is."""
    return Compound("any", children)


def leaves(node: Node, path: str = "") -> Iterator[tuple[str, Cron | Event]]:
    """``(path, leaf)`` of every leaf, depth first; the root leaf's path is ``""``."""
    if isinstance(node, Compound):
        for index, child in enumerate(node.children):
            yield from leaves(child, f"{path}.{index}" if path else str(index))
    else:
        yield path, node


def check_shape(node: Node, depth: int = 1) -> None:
    """Bound the depth and the number of leaves (a tree is stored and evaluated every tick)."""
    if depth > MAX_DEPTH:
        raise _fail(messages.trigger_too_deep(MAX_DEPTH))
    if isinstance(node, Compound):
        for child in node.children:
            check_shape(child, depth + 1)
    if depth == 1 and sum(1 for _ in leaves(node)) > MAX_LEAVES:
        raise _fail(messages.trigger_too_many_leaves(MAX_LEAVES))


def and_of_times(node: Node) -> bool:
    """True when some AND has two or more time triggers as direct children (SPEC §13 warns)."""
    if not isinstance(node, Compound):
        return False
    times = sum(isinstance(c, Cron) for c in node.children)
    return (node.op == "all" and times >= 2) or any(and_of_times(c) for c in node.children)


def with_zone(node: Node, zone: str) -> Node:
    """The tree with every time trigger lacking a zone given ``zone``."""
    if isinstance(node, Cron):
        if node.timezone is not None:
            return node
        return Cron(node.expression, timezone=zone, repeated=node.repeated, missing=node.missing)
    if isinstance(node, Event):
        return node
    return Compound(node.op, tuple(with_zone(c, zone) for c in node.children))


def to_json(node: Node) -> dict[str, Any]:
    """The JSON form (the one :func:`from_json` reads); defaults are written out."""
    if isinstance(node, Cron):
        out: dict[str, Any] = {"cron": node.expression, "timezone": node.timezone}
        return {**out, "repeated": node.repeated, "missing": node.missing}
    if isinstance(node, Event):
        return {"event": node.kind, EVENT_SUBJECTS[node.kind]: node.subject}
    return {node.op: [to_json(c) for c in node.children]}


_CRON_KEYS = ("cron", "timezone", "repeated", "missing")


def from_json(raw: object, depth: int = 1) -> Node:
    """Read and validate a JSON tree (raises ConfigError with the path of the bad node)."""
    if depth > MAX_DEPTH:
        raise _fail(messages.trigger_too_deep(MAX_DEPTH))
    if not isinstance(raw, Mapping):
        raise _fail(messages.trigger_node_invalid(raw))
    keys = sorted(str(k) for k in raw)
    if "all" in raw or "any" in raw:
        op: Literal["all", "any"] = "all" if "all" in raw else "any"
        if keys != [op]:
            raise _fail(messages.trigger_keys_unknown(op, keys, [op]))
        children = raw[op]
        if not isinstance(children, list):
            raise _fail(messages.trigger_children_not_list(op))
        node: Node = Compound(op, tuple(from_json(c, depth + 1) for c in children))
    elif "cron" in raw:
        _only(raw, "cron", list(_CRON_KEYS))
        args = {k: raw[k] for k in ("timezone", "repeated", "missing") if k in raw}
        node = Cron(raw["cron"], **args)
    elif "event" in raw:
        kind = raw["event"]
        if not isinstance(kind, str) or kind not in EVENT_SUBJECTS:
            raise _fail(messages.trigger_event_unknown(kind, sorted(EVENT_SUBJECTS)))
        key = EVENT_SUBJECTS[kind]
        _only(raw, "event", ["event", key])
        node = Event(kind, raw.get(key))  # type: ignore[arg-type]
    else:
        raise _fail(messages.trigger_node_invalid(raw))
    if depth == 1:
        check_shape(node)
    return node


def subscription_keys(raw: object) -> str | None:
    """The events a stored JSON tree listens to, as `` kind:subject kind:subject `` (each
    surrounded by spaces, so a writer can test ``LIKE '% kind:subject %'``); None for none."""
    found: set[str] = set()
    stack = [raw]
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            stack.extend(node)
        elif isinstance(node, Mapping):
            kind = node.get("event")
            if isinstance(kind, str) and kind in EVENT_SUBJECTS:
                found.add(f"{kind}:{node.get(EVENT_SUBJECTS[kind])}")
            stack.extend(node.get(op) for op in ("all", "any") if op in node)
    return " " + " ".join(sorted(found)) + " " if found else None


def _only(raw: Mapping[str, Any], kind: str, allowed: list[str]) -> None:
    extra = sorted(str(k) for k in raw if k not in allowed)
    if extra:
        raise _fail(messages.trigger_keys_unknown(kind, extra, allowed))


__all__ = [
    "EVENT_SUBJECTS",
    "AllOf",
    "AnyOf",
    "Compound",
    "Cron",
    "DefinitionChanged",
    "Event",
    "Missing",
    "Node",
    "Repeated",
    "ScheduleSucceeded",
    "TableUpdated",
    "WorkflowSucceeded",
    "and_of_times",
    "check_shape",
    "from_json",
    "leaves",
    "subscription_keys",
    "to_json",
    "with_zone",
]
