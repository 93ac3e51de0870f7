"""A lane as a schedule: its timing in the one shape (:class:`~tocsin.core.schedules.decide.Timing`)
and its windows. Pure: no I/O, no clock.

A lane's schedule instant ``s`` runs the window ``[previous instant, s)``, so consecutive runs
share a boundary and never overlap. The lane's state is ``next_fire_at``, the first instant not
processed yet (:class:`~tocsin.core.schedules.decide.State`'s ``next_due_at``). What a due lane
does is :func:`~tocsin.core.schedules.decide.decide`'s decision under the lane's policy values
(:func:`lane_timing`): a plain cron (a repeated wall time fires once), skips recorded against the
lane, each fire with its window, ``overlap="allow"`` (a lane's admission checks overlapping
windows itself), and by ``catch_up``:

- ``"all"`` (the default): every owed instant runs its own window, oldest first, at most
  ``page`` per decision (``backlog="page"``: the caller decides again until none is owed): no
  data window is lost;
- ``"latest"``: one run at the latest owed instant over the merged window ``[end of the last
  processed window, latest)``; the older owed instants are recorded ``coalesced`` (their data is
  in the merged window, but they did not run on their own);
- ``"none"``: on time (one instant owed) it runs; after downtime every owed instant is recorded
  ``coalesced`` and nothing runs (their windows are never looked at).

A paused lane decides nothing; its resume is the decision with ``paused=True``: the instants owed
up to the resume are recorded ``paused`` and none of them runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from tocsin.core.contract.lane import Window
from tocsin.core.schedules import skips
from tocsin.core.schedules.decide import CRON_REPEATED, Timing, cron_trigger
from tocsin.core.schedules.timeline import Timeline, timeline

CATCH_UP = ("all", "latest", "none")
DEFAULT_CATCH_UP = "all"
REPEATED = CRON_REPEATED  # a lane fires as a plain cron schedule: a repeated wall time once
#: the runs one decision of a lane admits under ``catch_up="all"`` (the caller decides again)
PAGE_INSTANTS = 200


@dataclass(frozen=True, slots=True)
class LaneSchedule:
    """The timing of one lane: its id (the skip ledger's target), cron, zone and catch-up."""

    lane_id: str
    cron: str
    zone: str
    catch_up: str = DEFAULT_CATCH_UP

    def next_after(self, after: datetime) -> datetime | None:
        """The first schedule instant strictly after ``after``."""
        return self._line().next(after)

    def previous_before(self, before: datetime) -> datetime | None:
        """The last schedule instant strictly before ``before``."""
        return self._line().prev(before)

    def window(self, scheduled_for: datetime) -> Window | None:
        """``[previous instant, scheduled_for)``; None when no earlier instant exists."""
        start = self.previous_before(scheduled_for)
        return None if start is None else Window(start, scheduled_for)

    def timing(self, *, paused: bool = False, page: int = PAGE_INSTANTS) -> Timing:
        """The lane's policy values in the one schedule shape (module docstring)."""
        return lane_timing(self, paused=paused, page=page)

    def _line(self) -> Timeline:
        return timeline(cron_trigger(self.cron, self.zone))


def lane_timing(lane: LaneSchedule, *, paused: bool = False, page: int = PAGE_INSTANTS) -> Timing:
    """The lane's :class:`~tocsin.core.schedules.decide.Timing` (module docstring)."""
    return Timing(
        lane.lane_id,
        cron_trigger(lane.cron, lane.zone),
        catch_up=lane.catch_up,
        max_catch_up=page,
        overlap="allow",
        paused=paused,
        target=skips.LANE,
        windowed=True,
        backlog="page",
    )


__all__ = [
    "CATCH_UP",
    "DEFAULT_CATCH_UP",
    "PAGE_INSTANTS",
    "REPEATED",
    "LaneSchedule",
    "lane_timing",
]
