"""When a workflow schedule fires next, and which instant a late tick fires (SPEC §12, §13).

Schedules use the extended cron dialect in their IANA zone. DST: a wall time that does not exist
never fires; a repeated wall time fires once, on its first occurrence (``repeated="first"``, the
policy of the strict dialect — a schedule fires at most once per wall-clock instant).
"""

from __future__ import annotations

from datetime import datetime

from tocsin.core.schedules.tree import from_json
from tocsin.core.schedules.tree_eval import next_instant
from tocsin.core.time import cron

REPEATED: cron.Repeated = "first"


def next_fire_after(expression: str, timezone: str, after: datetime) -> datetime | None:
    """The first instant strictly after ``after``; None when it never fires again."""
    spec = cron.parse(expression, dialect="extended")
    return cron.next_after(spec, after, tz=timezone, repeated=REPEATED)


def latest_due(expression: str, timezone: str, now: datetime) -> datetime | None:
    """The latest instant at or before ``now`` (downtime coalesces onto it, like clock
    triggers' due window, SPEC §5.3)."""
    spec = cron.parse(expression, dialect="extended")
    return cron.prev_at_or_before(spec, now, tz=timezone, repeated=REPEATED)


def next_fire_of(
    expression: str, timezone: str, trigger: object, after: datetime
) -> datetime | None:
    """``next_fire_after`` of a cron schedule, or the next time instant of a stored compound
    trigger tree (SPEC §13; None for a tree of event triggers only)."""
    if trigger is None:
        return next_fire_after(expression, timezone, after)
    return next_instant(from_json(trigger), after)


__all__ = ["latest_due", "next_fire_after", "next_fire_of"]
