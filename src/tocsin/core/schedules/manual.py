"""Run-now as the one decision: a manual event (kind :data:`MANUAL` naming the schedule) is
decided on its own (:func:`tocsin.core.schedules.decide.decide` hands it here): the schedule
fires at each such event's instant whatever its timing, pause, catch-up or overlap, and nothing
of its state moves (no instant consumed, no latch set or reset), so a run-now never consumes or
blocks a scheduled occurrence. Manual events are never mixed with others. Pure.
"""

from __future__ import annotations

from tocsin import messages
from tocsin.core.schedules.shape import MANUAL, Decision, Seen, State, Timing


def manual(schedule: Timing, state: State, events: Seen) -> Decision:
    """Manual events only (module docstring): a fire at each instant, the state kept."""
    if any(kind != MANUAL or subject != schedule.id for kind, subject, _ in events):
        raise ValueError(messages.manual_events_mixed(schedule.id))
    fires = tuple(sorted(at for _, _, at in events))
    return Decision(fires, (), state.next_due_at, state)


__all__ = ["MANUAL", "manual"]
