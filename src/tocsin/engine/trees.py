"""``fire_trigger_schedules``: the tick's pass over schedules with a compound trigger (SPEC §13).

One call pages until no pending event and no due tree schedule is left, one transaction per
page (the last event page and the first due page share one: an idle pass is one transaction);
the tick drives it as a pass of its one paging loop (:func:`tree_passes`,
:mod:`tocsin.engine.passes`):

0. on PostgreSQL, each page first waits for any other scheduler's compound pass to commit (an
   advisory transaction lock, ``store.trigger_events.serialize_pass``): events are then applied
   in outbox order and never after a due instant they precede, whichever process claims them;
1. event pages: up to ``EVENT_LIMIT`` outbox events (PostgreSQL ``FOR UPDATE SKIP LOCKED``); the
   unpaused tree schedules that listen to them are locked in id order, *waiting* for locks (two
   schedulers apply their events one after the other), and decided up to the page's horizon
   (``now`` for the last page; before that, just before the page's latest event, so that an
   instant is decided only once every event before it was latched);
2. due pages: up to ``limit`` unpaused tree schedules with ``next_fire_at <= now``, earliest
   due first (skipping locked rows), decided at ``now``;
3. each schedule decides through :func:`tocsin.core.schedules.decide.decide`, the decision
   of plain cron schedules: pause, catch-up, overlap, latches; its skips (``coalesced``,
   ``active_run``, ``dst_gap``, ``compound_unsatisfied``) go to the skip ledger;
4. each fire claims ``(schedule_id, instant)`` in the occurrence ledger (namespace
   ``"workflow"``, as cron schedules) and writes its fire row and pending run;
5. latches, ``evaluated_at`` and ``next_fire_at`` are written back and the claimed events
   deleted, in the same transaction: an event counts once, a restart loses nothing. A fire held
   back by an active run is looked at again every ``HELD_RECHECK`` (not every tick).

A paused schedule neither latches events nor fires; its resume records the instants it owed as
``paused`` and starts from ``now``.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from datetime import datetime, timedelta
from typing import Any

from tocsin import messages
from tocsin.core.model import WorkflowSchedule
from tocsin.core.schedules import tree_eval as compound_eval
from tocsin.core.schedules.decide import HELD_RECHECK, decide
from tocsin.core.schedules.skips import SkipRange
from tocsin.core.schedules.tree import from_json
from tocsin.engine import fire as fire_path
from tocsin.engine.ids import uuid7
from tocsin.engine.passes import Pass, Take, fire_passes
from tocsin.engine.schedule_rows import dump_latches, load_latches, schedule_of, state_of
from tocsin.engine.schedules import COUNTS, LEDGER_NAMESPACE, schedule_fire, schedule_run
from tocsin.errors import ConfigError
from tocsin.store import schedules as store_schedules
from tocsin.store import skips as store_skips
from tocsin.store import trigger_events as store_events
from tocsin.store import workflow_runs as store_runs
from tocsin.store.tx import Store, Tx

EVENT_LIMIT = 1000
DEFAULT_LIMIT = 1000
_TICK = timedelta(microseconds=1)
Seen = Sequence[tuple[str, str, datetime]]


def fire_trigger_schedules(
    store: Store,
    *,
    now: datetime,
    limit: int = DEFAULT_LIMIT,
    registered: Collection[str] | None = None,
    limited: Collection[str] = (),
) -> int:
    """Consume every pending event, then decide every due trigger schedule at ``now``, a page
    at a time (the first due page in the transaction of the last event page); returns the fires
    recorded."""
    return fire_passes(store, tree_passes(limit, registered, limited), now=now)[COUNTS]


def tree_passes(
    limit: int = DEFAULT_LIMIT,
    registered: Collection[str] | None = None,
    limited: Collection[str] = (),
) -> list[Pass]:
    """The trigger-tree schedules as a pass of the tick's loop (:mod:`tocsin.engine.passes`):
    the event pages until no event is pending, the first due page in the last event page's
    transaction, then the due pages until one comes back short. One pass per call: it keeps
    whether events are left.

    Its units: a due page names each schedule its claim returns, by its id (the claim leaves
    out ``take.skip`` and, on a failed page's retry, claims ``take.only`` alone); an event page
    names its batch, ``events:<id of its first event>`` (no schedule id holds a colon). A batch
    is not split by schedule: its events are latched in outbox order by every tree listening
    to them and deleted once for all of them, so a tree that took them alone would take them
    again with the next page, or lose them. A batch that fails again by itself stays pending
    (and the events behind it) for the next call; the call goes on to its due pages, which then
    decide without those events."""
    events_left = [True]

    def page(tx: Tx, now: datetime, take: Take) -> bool:
        store_events.serialize_pass(tx)
        only = take.only
        if only is not None and only.startswith(_EVENTS):  # a failed page's batch, alone
            take.counts[COUNTS] += _event_page(tx, now, registered, take, limited)[0]
            return False
        if events_left[0] and only is None:
            fired, events_left[0] = _event_page(tx, now, registered, take, limited)
            take.counts[COUNTS] += fired
            if events_left[0]:
                return True
        skip = [u for u in take.skip if not u.startswith(_EVENTS)]
        count, claimed = _due_page(tx, now, limit, registered, take, skip, limited)
        take.counts[COUNTS] += count
        return claimed >= limit

    return [Pass((COUNTS,), page, moves=True)]


_EVENTS = "events:"  # an event page's unit: the prefix of its batch's name


def _event_page(
    tx: Tx, now: datetime, registered: Collection[str] | None, take: Take, limited: Collection[str]
) -> tuple[int, bool]:
    """One page of events: (fires recorded, whether more events may wait). The batch is named
    in ``take.units``; a batch in ``take.skip`` (it failed this call), or not ``take.only``, is
    left pending, and no more events wait for this call."""
    events = store_events.claim_events(tx, limit=EVENT_LIMIT)
    if not events:
        return 0, False
    unit = f"{_EVENTS}{events[0].id}"
    if unit in take.skip or take.only not in (None, unit):
        return 0, False
    take.units.append(unit)
    more = len(events) >= EVENT_LIMIT
    horizon = now
    if more:  # decide instants only up to just before the page's latest event
        horizon = min(now, max(e.occurred_at for e in events) - _TICK)
    pairs = [(e.kind, e.subject) for e in events]
    rows = store_events.lock_trigger_schedules(tx, events=pairs, now=horizon)
    seen = [(e.kind, e.subject, e.occurred_at) for e in events]
    fired = _decide_rows(tx, rows, seen, horizon, registered, limited)
    store_events.delete_events(tx, ids=[e.id for e in events])
    return fired, more


def _due_page(
    tx: Tx,
    now: datetime,
    limit: int,
    registered: Collection[str] | None,
    take: Take,
    skip: Sequence[str],
    limited: Collection[str],
) -> tuple[int, int]:
    """One page of due tree schedules on ``take``'s terms, leaving out ``skip``: (fires
    recorded, schedules claimed)."""
    rows = store_events.claim_due_trigger_schedules(
        tx, now=now, limit=limit, only=take.only, skip=skip, claimed=take.units
    )
    if not rows:
        return 0, 0
    return _decide_rows(tx, rows, [], now, registered, limited), len(rows)


def _decide_rows(
    tx: Tx,
    rows: Sequence[WorkflowSchedule],
    seen: Seen,
    now: datetime,
    registered: Collection[str] | None,
    limited: Collection[str],
) -> int:
    skipping = [r.id for r in rows if r.overlap == "skip"]
    busy = store_runs.active_schedule_ids(tx, schedule_ids=skipping) if skipping else set()
    fired, states, skipped = 0, [], list[SkipRange]()
    for row in rows:
        state, count = _one(tx, row, seen, busy, now, registered, limited, skipped)
        fired += count
        if state is not None:
            states.append(state)
    store_skips.record_skips(tx, ranges=skipped, now=now)
    store_events.save_trigger_states(tx, states=states, now=now)
    return fired


def _one(
    tx: Tx,
    row: WorkflowSchedule,
    seen: Seen,
    busy: set[str],
    now: datetime,
    registered: Collection[str] | None,
    limited: Collection[str],
    skipped: list[SkipRange],
) -> tuple[dict[str, Any] | None, int]:
    """Decide one schedule; its new state (None: untouched) and the fires recorded (its skips
    are appended to ``skipped``). A stored tree that no longer reads (a zone gone from
    tzdata…) records one ``publish_failed`` fire with the error and stops the schedule
    (``next_fire_at`` null), as a cron schedule does."""
    try:
        tree = from_json(row.trigger_tree)
    except (ConfigError, ValueError) as exc:
        fire = schedule_fire(row, now, now, run_id=None, error=str(exc))
        store_schedules.insert_fires(tx, fires=[fire])
        state = {"id": row.id, "latches": row.latches, "evaluated_at": now}
        return {**state, "next_fire_at": None, "last_fire_id": fire["id"]}, 0
    due = row.next_fire_at is not None and row.next_fire_at <= now
    listened = compound_eval.subjects(tree) if seen else set()
    events = [e for e in seen if (e[0], e[1]) in listened]
    if not events and not due:
        return None, 0
    decision = decide(schedule_of(row, tree), state_of(row, busy=row.id in busy), events, now)
    skipped += decision.skips
    last_fire = row.last_fire_id
    recorded = 0
    for at in decision.fires:
        fire_id = _record(tx, row, at, now, registered, limited)
        if fire_id is not None:
            last_fire, recorded = fire_id, recorded + 1
    state = {
        "id": row.id,
        "latches": dump_latches(decision.state.latches),
        "evaluated_at": decision.state.evaluated_at,
        "next_fire_at": decision.next_due_at,
        "last_fire_id": last_fire,
    }
    return state, recorded


def _record(
    tx: Tx,
    row: WorkflowSchedule,
    at: datetime,
    now: datetime,
    registered: Collection[str] | None,
    limited: Collection[str] = (),
) -> str | None:
    """``(schedule, at)`` through the fire path: its fire (and its run) written when claimed;
    the fire id, or None when the instant was fired already."""
    run_id = uuid7(now)
    fire_ids: list[str] = []

    def write(claimed: list[int]) -> tuple[str, ...]:
        if not claimed:
            return ()
        error = None
        if registered is not None and row.workflow_id not in registered:
            error = messages.workflow_unknown(row.workflow_id)
        else:
            run = schedule_run(row, run_id, at, now)
            store_runs.insert_runs(tx, rows=[run], limited=limited)
        fire = schedule_fire(row, at, now, run_id=run_id if error is None else None, error=error)
        store_schedules.insert_fires(tx, fires=[fire])
        fire_ids.append(str(fire["id"]))
        return ()

    fire_path.fire(tx, [(LEDGER_NAMESPACE, row.id, at.isoformat(), run_id)], write, now=now)
    return fire_ids[0] if fire_ids else None


__all__ = [
    "EVENT_LIMIT",
    "HELD_RECHECK",
    "dump_latches",
    "fire_trigger_schedules",
    "load_latches",
    "tree_passes",
]
