"""When a workflow schedule fires next, and which instant a late tick fires (SPEC §12, §13).

Schedules use the extended cron dialect in their IANA zone. DST: a wall time that does not exist
never fires; a repeated wall time fires once, on its first occurrence (``repeated="first"``, the
policy of the strict dialect — a schedule fires at most once per wall-clock instant).
"""

from __future__ import annotations

from datetime import datetime

from tocsin.core import cron

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


__all__ = ["latest_due", "next_fire_after"]
