"""A workflow schedule row as the values of the one decision
(:mod:`tocsin.core.schedules.decide`), and when it fires next (SPEC §12, §13).

A plain cron schedule is the tree of one ``Cron`` leaf under the strict DST policy (a wall time
that does not exist never fires; a repeated one fires once, on its first occurrence); a schedule
with a trigger tree is its tree. Both decide through :func:`tocsin.core.schedules.decide.decide`.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from tocsin.core.model import DueSchedule, WorkflowSchedule
from tocsin.core.schedules import tree_eval
from tocsin.core.schedules.decide import State, Timing, cron_trigger, next_due
from tocsin.core.schedules.timeline import timeline
from tocsin.core.schedules.tree import Node, from_json


def trigger_of(row: DueSchedule) -> Node:
    """The schedule's tree: its stored trigger tree, or its cron's one leaf (raises
    ``ConfigError`` / ``ValueError`` when the stored timing no longer reads)."""
    tree = row.trigger_tree
    if tree is not None:
        return from_json(tree)
    return cron_trigger(row.cron, row.timezone)


def schedule_of(row: DueSchedule, trigger: Node | None = None) -> Timing:
    """The decision's view of a schedule row."""
    return Timing(
        id=row.id,
        trigger=trigger_of(row) if trigger is None else trigger,
        catch_up=row.catch_up or "latest",
        max_catch_up=row.max_catch_up or 100,
        overlap=row.overlap,
        paused=row.paused,
    )


def state_of(row: WorkflowSchedule, *, busy: bool) -> State:
    """The decision's view of a row's state: a plain schedule owes its instants from
    ``next_fire_at``; a tree schedule those after ``evaluated_at``, with its latches."""
    if row.trigger_tree is None:
        return State(row.next_fire_at, None, {}, busy)
    cursor = row.evaluated_at or row.created_at
    return State(row.next_fire_at, cursor, load_latches(row.latches), busy)


def load_latches(raw: object) -> dict[str, datetime]:
    """Stored latches (leaf path → ISO instant) as datetimes."""
    if not isinstance(raw, Mapping):
        return {}
    return {str(k): datetime.fromisoformat(str(v)) for k, v in raw.items()}


def dump_latches(latches: Mapping[str, datetime]) -> dict[str, str] | None:
    return {k: v.isoformat() for k, v in sorted(latches.items())} or None


def next_fire_after(expression: str, timezone: str, after: datetime) -> datetime | None:
    """The first instant of a plain cron schedule strictly after ``after``; None when it never
    fires again."""
    return timeline(cron_trigger(expression, timezone)).next(after)


def next_fire_of(
    expression: str, timezone: str, trigger: object, after: datetime
) -> datetime | None:
    """``next_fire_after`` of a cron schedule, or the next time instant of a stored compound
    trigger tree (SPEC §13; None for a tree of event triggers only)."""
    if trigger is None:
        return next_fire_after(expression, timezone, after)
    return next_due(from_json(trigger), {}, after)


def subjects_of(raw: object) -> set[tuple[str, str]]:
    """The ``(kind, subject)`` pairs a stored tree listens to."""
    return tree_eval.subjects(from_json(raw))


__all__ = [
    "dump_latches",
    "load_latches",
    "next_fire_after",
    "next_fire_of",
    "schedule_of",
    "state_of",
    "subjects_of",
    "trigger_of",
]
