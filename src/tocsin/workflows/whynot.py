"""Why (not) for workflow schedules: next fires and the dry run's entries, decided by
:func:`tocsin.core.schedules.decide.decide` (the fire pass's own decision, plain and tree schedules
alike). Read-only."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from tocsin.core.schedules.decide import decide
from tocsin.core.schedules.skips import INVALID_CONFIG, PAUSED
from tocsin.core.time.instants import to_iso
from tocsin.engine.whynot import NOT_DUE, instant_view
from tocsin.errors import ConfigError
from tocsin.store import trigger_events as store_events
from tocsin.store import whynot as store_whynot
from tocsin.store import workflow_runs as store_wf_runs
from tocsin.store.tx import Tx
from tocsin.workflows.compound_whynot import compound_next_instants, compound_why
from tocsin.workflows.timing import next_fire_after, schedule_of, state_of


def schedule_next_fires(
    row: Mapping[str, Any], *, busy: bool, now: datetime, n: int
) -> list[dict[str, Any]]:
    """The next ``n`` instants a workflow schedule fires at (nothing while paused); for a
    compound trigger, its tree's next time instants (``could_fire``: it fires there only if its
    events have occurred by then)."""
    if row["paused"] or row["next_fire_at"] is None:
        return []
    if row.get("trigger_tree") is not None:
        return compound_next_instants(row, now=now, n=n)
    cron, tz = row["cron"], row["timezone"]
    out: list[dict[str, Any]] = []
    at: datetime | None = now
    if row["next_fire_at"] <= now:
        decision = decide(schedule_of(row), state_of(row, busy=busy), (), now)
        out += [{**instant_view(d, tz), "status": "due"} for d in decision.fires[-n:]]
    while len(out) < n and at is not None:
        at = next_fire_after(cron, tz, at)
        if at is not None:
            out.append({**instant_view(at, tz), "status": "scheduled"})
    return out


def schedule_entries(tx: Tx, at: datetime) -> list[dict[str, Any]]:
    rows = store_whynot.all_schedules(tx)
    skipping = [r["id"] for r in rows if r["overlap"] == "skip"]
    busy = store_wf_runs.active_schedule_ids(tx, schedule_ids=skipping)
    events: list[tuple[str, str, datetime]] = []
    if any(r.get("trigger_tree") is not None for r in rows):
        pending = store_events.peek_events(tx, limit=None)  # every one, as the tick pages
        events = [(e["kind"], e["subject"], e["occurred_at"]) for e in pending]
    return [
        {"kind": "schedule", "schedule_id": r["id"], "workflow_id": r["workflow_id"]}
        | (
            compound_why(r, busy=r["id"] in busy, at=at, events=events)
            if r.get("trigger_tree") is not None
            else _schedule_why(r, r["id"] in busy, at)
        )
        for r in rows
    ]


def _schedule_why(row: Mapping[str, Any], busy: bool, at: datetime) -> dict[str, Any]:
    if row["paused"]:
        return {"status": "skipped", "reason": PAUSED, "runs": 0}
    nxt = row["next_fire_at"]
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


__all__ = ["schedule_entries", "schedule_next_fires"]
