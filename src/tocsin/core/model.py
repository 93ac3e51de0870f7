"""Typed values the store hands the engine (SPEC §5.1, §8). Pure.

- :class:`TriggerState`: one durable row per schedule trigger id — the scheduler's memory
  (anchor and last consumed window of clock kinds, the date cursor, ``next_due_at``); built in
  one place, ``store.state``.
- :class:`RunStatus`: a run's status and its allowed transitions::

      pending → running → done | failed        (retry: failed | pending | stale running → pending)

  ``stuck`` is a filter, not a status: failed, or running for longer than the stale window.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any


@dataclass(frozen=True, slots=True)
class TriggerState:
    """A schedule trigger's durable state row (SPEC §5.1)."""

    trigger_id: str
    table_id: str
    kind: str  # date_column_reached | interval | daily | cron
    anchor: datetime | None  # clock kinds: windows start here
    last_consumed: datetime | None  # clock kinds: the last window claimed (failed runs count)
    cursor_created_at: datetime | None  # date kind: the last examined record
    cursor_id: str | None
    schedule_hash: str | None  # a different hash means a re-anchoring edit (SPEC §5.2)
    retired: bool  # the trigger was removed; state and ledger are kept
    next_due_at: datetime | None  # the earliest instant it may be due (DESIGN §5)
    updated_at: datetime | None
    paused_at: datetime | None = None  # set while paused: the tick neither plans nor fires it
    # date kind: past pauses ``(from, until)``; an occurrence whose fire instant falls inside one
    # never fires (resume recomputes from ``now``: nothing backlogged)
    pause_windows: tuple[tuple[datetime, datetime], ...] = ()

    @property
    def paused(self) -> bool:
        return self.paused_at is not None

    @property
    def cursor(self) -> tuple[datetime, str] | None:
        """The date cursor ``(created_at, record id)``, None at the start."""
        if self.cursor_created_at is None or self.cursor_id is None:
            return None
        return self.cursor_created_at, self.cursor_id

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


class RunStatus(StrEnum):
    """A run's stored status (SPEC §8)."""

    PENDING = "pending"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"

    def may_become(self, other: RunStatus) -> bool:
        """Whether a run in this status may move to ``other``."""
        return other in RUN_TRANSITIONS[self]


RUN_TRANSITIONS: dict[RunStatus, frozenset[RunStatus]] = {
    RunStatus.PENDING: frozenset({RunStatus.RUNNING, RunStatus.PENDING}),  # claim; release
    RunStatus.RUNNING: frozenset({RunStatus.DONE, RunStatus.FAILED, RunStatus.PENDING}),
    RunStatus.FAILED: frozenset({RunStatus.PENDING}),  # retry
    RunStatus.DONE: frozenset(),
}

__all__ = ["RUN_TRANSITIONS", "RunStatus", "TriggerState"]
