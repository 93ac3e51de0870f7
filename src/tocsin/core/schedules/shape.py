"""The one shape of a schedule (DESIGN §1): its timing and policies (:class:`Timing`), its state
(:class:`State`) and a decision (:class:`Decision`), whatever fires on time: a workflow's cron or
tree schedule, a table's interval/daily/cron trigger (:class:`TableClock`, its fixed policies
:data:`TABLE_CATCH_UP` and :data:`TABLE_OVERLAP`). The decision is
:func:`tocsin.core.schedules.decide.decide`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import lru_cache
from types import MappingProxyType
from typing import Literal, NamedTuple

from tocsin.core.contract.lane import Window
from tocsin.core.schedules import skips
from tocsin.core.schedules.skips import SkipRange
from tocsin.core.schedules.spec import ClockSchedule
from tocsin.core.schedules.tree import Cron, Node
from tocsin.core.time import cron

CatchUp = Literal["latest", "none", "all"]
Overlap = Literal["skip", "allow", "hold"]
Backlog = Literal["coalesce", "page"]
#: a table clock trigger's one-active-run rule (SPEC §5.3): while its run is active nothing
#: fires, the latest owed instant stays owed (it fires once the run ended), older ones are
#: skipped ``active_run``; a fixed policy value of table triggers, not offered to workflows
HOLD: Overlap = "hold"
#: a table clock trigger's fixed policies (seed 000): one active run, downtime coalesced
TABLE_CATCH_UP: CatchUp = "latest"
TABLE_OVERLAP: Overlap = HOLD
CATCH_UP: tuple[CatchUp, ...] = ("latest", "none", "all")
DEFAULT_MAX_CATCH_UP = 100
MAX_MAX_CATCH_UP = 10_000
#: the DST policy of plain cron schedules (and of the strict dialect): a repeated wall time
#: fires once, at its first occurrence
CRON_REPEATED: cron.Repeated = "first"
#: the event kind of a run-now: the schedule fires once at the event's instant, whatever its
#: timing and policies, and nothing of its state moves (``decide.decide``)
MANUAL = "manual"
#: how often a fire held back by an active run is looked at again
HELD_RECHECK = timedelta(seconds=5)
_MEMO_SIZE = 4096

NO_LATCHES: Mapping[str, datetime] = MappingProxyType({})
Seen = Sequence[tuple[str, str, datetime]]  # (kind, subject, occurred_at)


@dataclass(frozen=True, slots=True)
class Timing:
    """A schedule's timing and policies (its spec; the state is :class:`State`): a workflow
    schedule's by default, a lane's by :func:`tocsin.core.schedules.lane.lane_timing`, a table
    clock trigger's by :func:`tocsin.core.schedules.clock.table_timing`. ``target``: the kind
    its skips are recorded against; ``windowed``: each fire carries its data window (a lane);
    ``backlog="page"``: under ``catch_up="all"`` the oldest owed instants fire first, the newer
    stay owed (a lane). ``trigger`` None: no timing of its own (a table's date trigger, whose
    records are scanned apart): only manual events fire it."""

    id: str
    trigger: Node | TableClock | None
    catch_up: str = "latest"
    max_catch_up: int = DEFAULT_MAX_CATCH_UP
    overlap: str = "skip"
    paused: bool = False
    target: str = skips.SCHEDULE
    windowed: bool = False
    backlog: Backlog = "coalesce"


class State(NamedTuple):
    """Where a schedule stands: ``next_due_at`` (when it is next worth deciding), the instant up
    to which its instants were consumed (``evaluated_at``; None: the owed instants start at
    ``next_due_at``, a plain schedule's row), its event latches (leaf path → first occurrence)
    and whether a run it fired is still pending or running; ``consumed``: the last instant
    fired or given up (a table trigger's ``last_consumed``, else its anchor), where DST gaps
    are counted from (None: from the instant before the first owed one).

    A named tuple, immutable as a frozen dataclass is, built at a fraction of its cost: the tick
    builds two per schedule it decides."""

    next_due_at: datetime | None
    evaluated_at: datetime | None = None
    latches: Mapping[str, datetime] = NO_LATCHES
    active_run: bool = False
    consumed: datetime | None = None


class Decision(NamedTuple):
    """The instants to fire (in decision order), the skipped ranges, and the state after;
    ``windows``: each fire's data window (a ``windowed`` schedule's, else empty)."""

    fires: tuple[datetime, ...]
    skips: tuple[SkipRange, ...]
    next_due_at: datetime | None
    state: State
    windows: tuple[Window, ...] = ()

    def reasons(self) -> list[str]:
        return [s.reason for s in self.skips]


@dataclass(frozen=True, slots=True)
class TableClock:
    """A table clock trigger's timing: its schedule and anchor (its windows,
    :mod:`tocsin.core.schedules.windows`)."""

    spec: ClockSchedule
    anchor: datetime


def cron_trigger(expression: str, timezone: str) -> Cron:
    """A plain cron schedule's tree: one ``Cron`` leaf under the strict DST policy (raises
    :class:`~tocsin.errors.ConfigError` for an expression or zone that does not read)."""
    return _cron_leaf(expression, timezone)


@lru_cache(maxsize=_MEMO_SIZE)
def _cron_leaf(expression: str, timezone: str) -> Cron:
    return Cron(expression, timezone=timezone, repeated=CRON_REPEATED)


__all__ = [
    "CATCH_UP",
    "CRON_REPEATED",
    "DEFAULT_MAX_CATCH_UP",
    "HELD_RECHECK",
    "HOLD",
    "MANUAL",
    "MAX_MAX_CATCH_UP",
    "TABLE_CATCH_UP",
    "TABLE_OVERLAP",
    "Backlog",
    "CatchUp",
    "Decision",
    "Overlap",
    "Seen",
    "State",
    "TableClock",
    "Timing",
    "cron_trigger",
]
