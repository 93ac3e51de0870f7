"""The global dry run for schedules with a compound trigger (SPEC §13): would the
tick at ``at`` fire it, and if not, why (waiting for which events). Read-only; decided by the
fire pass's own decision (:func:`tocsin.core.schedules.decide.decide`) over the same inputs: the
stored latches, the events waiting in the outbox (those that occurred by ``at``) and the
instants owed since the last evaluation."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from tocsin.core.schedules import tree_eval as compound_eval
from tocsin.core.schedules.decide import decide
from tocsin.core.schedules.skips import ACTIVE_RUN, COMPOUND_UNSATISFIED, INVALID_CONFIG, PAUSED
from tocsin.core.schedules.tree import Cron, Node, from_json, leaves
from tocsin.core.time.instants import to_iso
from tocsin.engine.whynot import instant_view
from tocsin.errors import ConfigError
from tocsin.workflows.timing import schedule_of, state_of

NOT_DUE = "not_due"
Seen = Sequence[tuple[str, str, datetime]]


def compound_why(
    row: Mapping[str, Any], *, busy: bool, at: datetime, events: Seen
) -> dict[str, Any]:
    """The dry-run entry of one compound schedule (``events``: ``(kind, subject, at)``)."""
    if row["paused"]:
        return {"status": "skipped", "reason": PAUSED, "runs": 0}
    try:
        tree = from_json(row["trigger_tree"])
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


def compound_next_instants(row: Mapping[str, Any], *, now: datetime, n: int) -> list[Any]:
    """The tree's next ``n`` time instants after ``now`` in UTC and in the zone of the time
    leaf each is an instant of (``Cron(…, timezone=…)``: a compound schedule's own zone is not
    its leaves'), each ``could_fire``; none when the stored tree no longer reads or has no time
    trigger."""
    try:
        tree = from_json(row["trigger_tree"])
    except (ConfigError, ValueError):
        return []
    out: list[Any] = []
    found = compound_eval.next_leaf_instant(tree, now)
    while found is not None and len(out) < n:
        at, leaf = found
        zone = leaf.timezone or str(row.get("timezone") or "UTC")
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


__all__ = ["compound_next_instants", "compound_why"]
