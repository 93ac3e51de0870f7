"""``fire_trigger_schedules``: the tick's pass over schedules with a compound trigger (SPEC §13).

One transaction per call:

0. on PostgreSQL, wait for any other scheduler's compound pass to commit (an advisory
   transaction lock, ``store.trigger_events.serialize_pass``): events are then applied in
   outbox order and never after a due instant they precede, whichever process claims them;
1. claim up to ``EVENT_LIMIT`` outbox events (PostgreSQL ``FOR UPDATE SKIP LOCKED``);
2. with events: lock the unpaused trigger schedules that listen to them or are due, in id
   order, *waiting* for locks, so two schedulers apply their events one after the other;
   without: claim only the due ones (``next_fire_at <= now``, skipping locked rows);
3. per schedule, :func:`tocsin.core.schedules.tree_eval.evaluate` merges its events with its due
   instants (each time trigger's latest instant since ``evaluated_at``: downtime coalesces) and
   decides the fires; ``overlap="skip"`` fires at most once and nothing while a run is active;
4. each fire claims ``(schedule_id, instant)`` in the occurrence ledger (namespace
   ``"workflow"``, as cron schedules) and writes its fire row and pending run;
5. each due instant that passed waiting for events (the tree not satisfied there, but it
   would have been had its events occurred) is recorded in the skip ledger as
   ``compound_unsatisfied``, merged with the range ending at the tree's previous
   instant: consecutive unsatisfied instants are one row;
6. latches, ``evaluated_at = now`` and ``next_fire_at`` are written back and the claimed events
   deleted, in the same transaction: an event counts once, a restart loses nothing. A fire held
   back by an active run is looked at again every ``HELD_RECHECK`` (not every tick).

A paused schedule neither latches events nor fires; resuming starts from ``now``.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from datetime import datetime, timedelta
from typing import Any

from tocsin import messages
from tocsin.core.schedules import tree_eval
from tocsin.core.schedules.skips import COMPOUND_UNSATISFIED, SCHEDULE, SkipRange
from tocsin.core.schedules.tree import Node, from_json
from tocsin.engine.ids import uuid7
from tocsin.errors import ConfigError
from tocsin.store import schedules as store_schedules
from tocsin.store import skips as store_skips
from tocsin.store import trigger_events as store_events
from tocsin.store import workflow_runs as store_runs
from tocsin.store.ledger import claim_occurrences
from tocsin.store.tx import Store, Tx
from tocsin.workflows.firing import LEDGER_NAMESPACE, schedule_fire, schedule_run

EVENT_LIMIT = 1000
DEFAULT_LIMIT = 1000
#: how often a fire held back by an active run is looked at again
HELD_RECHECK = timedelta(seconds=5)


def load_latches(raw: object) -> dict[str, datetime]:
    """Stored latches (leaf path → ISO instant) as datetimes."""
    if not isinstance(raw, Mapping):
        return {}
    return {str(k): datetime.fromisoformat(str(v)) for k, v in raw.items()}


def dump_latches(latches: Mapping[str, datetime]) -> dict[str, str] | None:
    return {k: v.isoformat() for k, v in sorted(latches.items())} or None


def next_fire(tree: Node, latches: Mapping[str, datetime], now: datetime) -> datetime | None:
    """When the schedule is next worth evaluating: its next time instant, or sooner, in
    ``HELD_RECHECK``, while its latches already satisfy it (a fire held back by an active run
    under ``overlap="skip"``: it fires at the first evaluation after the run ended)."""
    following = tree_eval.next_instant(tree, now)
    if latches and tree_eval.satisfied(tree, latches, ()):
        recheck = now + HELD_RECHECK
        return recheck if following is None else min(recheck, following)
    return following


def fire_trigger_schedules(
    store: Store,
    *,
    now: datetime,
    limit: int = DEFAULT_LIMIT,
    registered: Collection[str] | None = None,
) -> int:
    """Consume events, evaluate trigger schedules at ``now``; returns the fires recorded."""
    with store.begin() as tx:
        store_events.serialize_pass(tx)
        events = store_events.claim_events(tx, limit=EVENT_LIMIT)
        if events:
            pairs = [(e["kind"], e["subject"]) for e in events]
            rows = store_events.lock_trigger_schedules(tx, events=pairs, now=now)
        else:
            rows = store_events.claim_due_trigger_schedules(tx, now=now, limit=limit)
        skipping = [r["id"] for r in rows if r["overlap"] == "skip"]
        busy = store_runs.active_schedule_ids(tx, schedule_ids=skipping) if skipping else set()
        seen = [(e["kind"], e["subject"], e["occurred_at"]) for e in events]
        fired, states, skipped = 0, [], list[SkipRange]()
        for row in rows:
            state, count = _one(tx, row, seen, busy, now, registered, skipped)
            fired += count
            if state is not None:
                states.append(state)
        store_skips.record_skips(tx, ranges=skipped, now=now)
        store_events.save_trigger_states(tx, states=states, now=now)
        store_events.delete_events(tx, ids=[e["id"] for e in events])
    return fired


def _one(
    tx: Tx,
    row: Mapping[str, Any],
    seen: list[tuple[str, str, datetime]],
    busy: set[str],
    now: datetime,
    registered: Collection[str] | None,
    skipped: list[SkipRange],
) -> tuple[dict[str, Any] | None, int]:
    """Evaluate one schedule; its new state (None: untouched) and the fires recorded (its
    unsatisfied instants are appended to ``skipped``). A stored
    tree that no longer reads (a zone gone from tzdata…) records one ``publish_failed`` fire
    with the error and stops the schedule (``next_fire_at`` null), as a cron schedule does."""
    try:
        tree = from_json(row["trigger_tree"])
    except (ConfigError, ValueError) as exc:
        fire = schedule_fire(row, now, now, run_id=None, error=str(exc))
        store_schedules.insert_fires(tx, fires=[fire])
        state = {"id": row["id"], "latches": row["latches"], "evaluated_at": now}
        return {**state, "next_fire_at": None, "last_fire_id": fire["id"]}, 0
    occurrences = tree_eval.match_events(tree, seen)
    after = row["evaluated_at"] or row["created_at"]
    due = row["next_fire_at"] is not None and row["next_fire_at"] <= now
    if not occurrences and not due:
        return None, 0
    outcome = tree_eval.evaluate(
        tree,
        latches=load_latches(row["latches"]),
        occurrences=occurrences,
        instants=tree_eval.due_instants(tree, after, now),
        now=now,
        can_fire=row["id"] not in busy,
        once=row["overlap"] == "skip",
    )
    skipped += unsatisfied_skips(tree, row["id"], outcome.unsatisfied)
    last_fire = row["last_fire_id"]
    recorded = 0
    for at in outcome.fires:
        fire_id = _record(tx, row, at, now, registered)
        if fire_id is not None:
            last_fire, recorded = fire_id, recorded + 1
    state = {
        "id": row["id"],
        "latches": dump_latches(outcome.latches),
        "evaluated_at": max(now, after),
        "next_fire_at": next_fire(tree, outcome.latches, now),
        "last_fire_id": last_fire,
    }
    return state, recorded


def unsatisfied_skips(tree: Node, schedule_id: str, instants: list[datetime]) -> list[SkipRange]:
    """One ``compound_unsatisfied`` range per instant, each mergeable into the range ending at
    the tree's previous instant (the store and ``merge_adjacent`` join the adjacent ones)."""
    return [
        SkipRange(
            SCHEDULE,
            schedule_id,
            COMPOUND_UNSATISFIED,
            at,
            at,
            1,
            after=tree_eval.previous_instant(tree, at),
        )
        for at in instants
    ]


def _record(
    tx: Tx,
    row: Mapping[str, Any],
    at: datetime,
    now: datetime,
    registered: Collection[str] | None,
) -> str | None:
    """Claim ``(schedule, at)`` in the ledger and write the fire (and its run); the fire id, or
    None when the instant was fired already."""
    run_id = uuid7(now)
    claim = (LEDGER_NAMESPACE, row["id"], at.isoformat(), run_id)
    if not claim_occurrences(tx, claims=[claim], now=now):
        return None
    error = None
    if registered is not None and row["workflow_id"] not in registered:
        error = messages.workflow_unknown(row["workflow_id"])
    else:
        store_runs.insert_runs(tx, rows=[schedule_run(row, run_id, at, now)])
    fire = schedule_fire(row, at, now, run_id=run_id if error is None else None, error=error)
    store_schedules.insert_fires(tx, fires=[fire])
    return str(fire["id"])


__all__ = [
    "EVENT_LIMIT",
    "dump_latches",
    "fire_trigger_schedules",
    "load_latches",
    "next_fire",
    "subjects_of",
    "unsatisfied_skips",
]


def subjects_of(raw: object) -> set[tuple[str, str]]:
    """The ``(kind, subject)`` pairs a stored tree listens to."""
    return tree_eval.subjects(from_json(raw))
