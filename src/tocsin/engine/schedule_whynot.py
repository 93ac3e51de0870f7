"""Why (not) for workflow schedules: next fires and the dry run's entries, decided by
:func:`tocsin.core.schedules.decide.decide` (the fire pass's own decision, plain and tree schedules
alike). Read-only.

A schedule with a compound trigger (SPEC §13) is decided over the same inputs as its fire pass:
the stored latches, the events waiting in the outbox (those that occurred by ``at``) and the
instants owed since the last evaluation; the dry run says which events it still waits for."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from tocsin.core.model import WorkflowSchedule
from tocsin.core.schedules import tree_eval as compound_eval
from tocsin.core.schedules.decide import decide
from tocsin.core.schedules.skips import ACTIVE_RUN, COMPOUND_UNSATISFIED, INVALID_CONFIG, PAUSED
from tocsin.core.schedules.tree import Cron, Node, from_json, leaves
from tocsin.core.time.instants import to_iso
from tocsin.engine.schedule_rows import next_fire_after, schedule_of, state_of
from tocsin.engine.whynot import NOT_DUE, instant_view
from tocsin.errors import ConfigError
from tocsin.store import trigger_events as store_events
from tocsin.store import whynot as store_whynot
from tocsin.store import workflow_runs as store_wf_runs
from tocsin.store.tx import Tx

Seen = Sequence[tuple[str, str, datetime]]


def schedule_next_fires(
    row: WorkflowSchedule, *, busy: bool, now: datetime, n: int
) -> list[dict[str, Any]]:
    """The next ``n`` instants a workflow schedule fires at (nothing while paused); for a
    compound trigger, its tree's next time instants (``could_fire``: it fires there only if its
    events have occurred by then)."""
    if row.paused or row.next_fire_at is None:
        return []
    if row.trigger_tree is not None:
        return compound_next_instants(row, now=now, n=n)
    cron, tz = row.cron, row.timezone
    out: list[dict[str, Any]] = []
    at: datetime | None = now
    if row.next_fire_at <= now:
        decision = decide(schedule_of(row), state_of(row, busy=busy), (), now)
        out += [{**instant_view(d, tz), "status": "due"} for d in decision.fires[-n:]]
    while len(out) < n and at is not None:
        at = next_fire_after(cron, tz, at)
        if at is not None:
            out.append({**instant_view(at, tz), "status": "scheduled"})
    return out


def schedule_entries(tx: Tx, at: datetime) -> list[dict[str, Any]]:
    rows = store_whynot.all_schedules(tx)
    skipping = [r.id for r in rows if r.overlap == "skip"]
    busy = store_wf_runs.active_schedule_ids(tx, schedule_ids=skipping)
    events: list[tuple[str, str, datetime]] = []
    if any(r.trigger_tree is not None for r in rows):
        pending = store_events.peek_events(tx, limit=None)  # every one, as the tick pages
        events = [(e.kind, e.subject, e.occurred_at) for e in pending]
    return [
        {"kind": "schedule", "schedule_id": r.id, "workflow_id": r.workflow_id}
        | (
            compound_why(r, busy=r.id in busy, at=at, events=events)
            if r.trigger_tree is not None
            else _schedule_why(r, r.id in busy, at)
        )
        for r in rows
    ]


def _schedule_why(row: WorkflowSchedule, busy: bool, at: datetime) -> dict[str, Any]:
    if row.paused:
        return {"status": "skipped", "reason": PAUSED, "runs": 0}
    nxt = row.next_fire_at
    if nxt is None or nxt > at:
        return {"status": NOT_DUE, "reason": NOT_DUE, "next_at": _iso(nxt), "runs": 0}
    try:
        decision = decide(schedule_of(row), state_of(row, busy=busy), (), at)
    except (ConfigError, ValueError) as exc:
        # the fire pass records a publish_failed fire (no run) and stops the schedule
        return {"status": "skipped", "reason": INVALID_CONFIG, "detail": str(exc), "runs": 0}
    skipped = [{"reason": r.reason, "count": r.count} for r in decision.skips]
    if decision.fires:
        instants = [to_iso(d) for d in decision.fires[-10:]]
        return {
            "status": "fires",
            "runs": len(decision.fires),
            "scheduled_for": instants,
            "skips": skipped,
        }
    reason = decision.skips[0].reason if decision.skips else NOT_DUE
    return {"status": "skipped", "reason": reason, "skips": skipped, "runs": 0}


def _iso(value: datetime | None) -> str | None:
    return None if value is None else to_iso(value)


def compound_why(
    row: WorkflowSchedule, *, busy: bool, at: datetime, events: Seen
) -> dict[str, Any]:
    """The dry-run entry of one compound schedule (``events``: ``(kind, subject, at)``)."""
    if row.paused:
        return {"status": "skipped", "reason": PAUSED, "runs": 0}
    try:
        tree = from_json(row.trigger_tree)
    except (ConfigError, ValueError) as exc:
        return {"status": "skipped", "reason": INVALID_CONFIG, "detail": str(exc), "runs": 0}
    seen = [e for e in events if e[2] <= at]
    decision = decide(schedule_of(row, tree), state_of(row, busy=busy), seen, at)
    if decision.fires:
        instants = [to_iso(f) for f in decision.fires[-10:]]
        return {"status": "fires", "runs": len(decision.fires), "scheduled_for": instants}
    latches = decision.state.latches
    held = any(s.reason == ACTIVE_RUN for s in decision.skips)
    if busy and (held or compound_eval.satisfied(tree, latches, _active(tree, at))):
        return {"status": "skipped", "reason": ACTIVE_RUN, "runs": 0}
    unsatisfied = [s.last for s in decision.skips if s.reason == COMPOUND_UNSATISFIED]
    if unsatisfied:
        instant = unsatisfied[-1]
        return {
            "status": "skipped",
            "reason": COMPOUND_UNSATISFIED,
            "instant": to_iso(instant),
            "waiting_for": _waiting(tree, latches, instant),
            "runs": 0,
        }
    if decision.skips:  # owed instants, none fired (coalesced by catch_up="none" …)
        skipped = [{"reason": r.reason, "count": r.count} for r in decision.skips]
        return {"status": "skipped", "reason": skipped[0]["reason"], "skips": skipped, "runs": 0}
    nxt = compound_eval.next_instant(tree, at)
    return {
        "status": NOT_DUE,
        "reason": NOT_DUE,
        "next_at": None if nxt is None else to_iso(nxt),
        "waiting_for": _waiting(tree, latches, nxt),
        "runs": 0,
    }


def compound_next_instants(row: WorkflowSchedule, *, now: datetime, n: int) -> list[Any]:
    """The tree's next ``n`` time instants after ``now`` in UTC and in the zone of the time
    leaf each is an instant of (``Cron(…, timezone=…)``: a compound schedule's own zone is not
    its leaves'), each ``could_fire``; none when the stored tree no longer reads or has no time
    trigger."""
    try:
        tree = from_json(row.trigger_tree)
    except (ConfigError, ValueError):
        return []
    out: list[Any] = []
    found = compound_eval.next_leaf_instant(tree, now)
    while found is not None and len(out) < n:
        at, leaf = found
        zone = leaf.timezone or row.timezone or "UTC"
        out.append({**instant_view(at, zone), "status": "could_fire"})
        found = compound_eval.next_leaf_instant(tree, at)
    return out


def _active(tree: Node, at: datetime | None) -> frozenset[str]:
    """The time leaves satisfied at ``at`` (none when ``at`` is None)."""
    if at is None:
        return frozenset()
    return frozenset(
        p for p, leaf in leaves(tree) if isinstance(leaf, Cron) and compound_eval.fires_at(leaf, at)
    )


def _waiting(
    tree: Node, latches: Mapping[str, datetime], at: datetime | None
) -> list[dict[str, str]]:
    """The events the tree still needs at ``at`` (its next instant; None: events only)."""
    found = compound_eval.waiting_for(tree, latches, _active(tree, at))
    return [{"path": p, "kind": leaf.kind, "subject": leaf.subject} for p, leaf in found]


__all__ = ["compound_next_instants", "compound_why", "schedule_entries", "schedule_next_fires"]
