"""The tick's plan (SPEC §5–§6): what one claimed table must write, decided without I/O from
what the tick read and ``now``: clock triggers by THE decision of every schedule
(:func:`tocsin.core.schedules.decide.decide`), date triggers by their per-record scan, so the
tick, the preview, ``due()`` and ``next_fires`` cannot disagree."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from functools import lru_cache
from typing import Any, NamedTuple

from tocsin.core.model import TriggerState
from tocsin.core.schedules import identity
from tocsin.core.schedules.skips import SkipRange
from tocsin.engine import evaluate, pause
from tocsin.engine.configs import ALWAYS_DUE, NEVER_DUE
from tocsin.engine.tick_skips import invalid_skips

Cursor = tuple[datetime, str]  # a record's position: (created_at, id)


# One occurrence to claim, with its pending run: ``(table_id, trigger_id, identity,
# definition_hash, scheduled_for, record, window, next_due)``. Clock fires consume ``window`` and
# move the trigger's ``next_due_at`` to ``next_due``; date fires carry the record instead. A plain
# tuple, as a plan's fields are: the collector stops tracking those at its first pass.
Fire = tuple[
    str, str, str, str | None, datetime | None, Mapping[str, Any] | None, datetime | None,
    datetime | None,
]  # fmt: skip


class DateScan(NamedTuple):
    """What the tick read of a date trigger's records this pass: the verdicts of the pages it
    examined, the last examined record, and whether the pass closed a lap without a due row."""

    verdicts: list[evaluate.RowVerdict]
    cursor: Cursor | None
    lap_closed: bool


class TablePlan(NamedTuple):
    """The writes of one table: fires (a ledger claim and a pending run each), ``next_due_at``
    changes (the table's too), date cursors, the triggers whose evaluation raised (skipped,
    never fatal) and skip records."""

    table_id: str
    has_schedules: bool
    next_due: datetime  # the table's: the earliest of its live, unpaused states' once applied
    fires: tuple[Fire, ...] = ()
    next_dues: tuple[tuple[str, datetime | None], ...] = ()  # (trigger id, its new next_due_at)
    cursors: tuple[tuple[str, Cursor | None], ...] = ()  # (trigger id, its new date cursor)
    skipped: tuple[tuple[str, Exception], ...] = ()
    skips: tuple[SkipRange, ...] = ()  # due occurrences that did not fire
    paused_values: tuple[pause.PausedValue, ...] = ()  # date values due in a pause: no run


def due_candidates(
    stored: list[evaluate.StoredTrigger], states: Mapping[str, TriggerState], now: datetime
) -> list[tuple[evaluate.StoredTrigger, TriggerState]]:
    """The valid, unpaused triggers of a table that may be due at ``now``, with their states."""
    out = []
    for trigger in stored:
        if trigger.spec is not None and not trigger.error_codes:
            state = states[str(trigger.trigger_id)]
            due = state.next_due_at is None or state.next_due_at <= now
            if due and state.paused_at is None:  # paused: never planned (engine.pause)
                out.append((trigger, state))
    return out


def plan_table(
    table_id: str,
    stored: list[evaluate.StoredTrigger],
    states: Mapping[str, TriggerState],
    due: list[tuple[evaluate.StoredTrigger, TriggerState, DateScan | None]],
    active: set[str],
    now: datetime,
) -> TablePlan:
    """One claimed table's plan at ``now``: ``stored`` its triggers, ``due`` the
    :func:`due_candidates` with each date trigger's scan, ``active`` the clock triggers with an
    active run."""
    fires: list[Fire] = []
    next_dues: dict[str, datetime | None] = {}
    cursors: dict[str, Cursor | None] = {}
    skipped: list[tuple[str, Exception]] = []
    skips: list[SkipRange] = []
    for trigger, state, scan in due:
        tid = str(trigger.trigger_id)
        try:
            if scan is not None:
                found, next_due = plan_date(table_id, trigger, state, scan)
                fires += found
            else:
                fire, next_due, ranges = decide_clock_trigger(trigger, state, now, tid in active)
                skips += ranges
                if fire is not None:
                    fires.append(fire)
        except Exception as exc:  # a broken trigger never fails the table (SPEC §6)
            skipped.append((tid, exc))
            continue
        if next_due != state.next_due_at:
            next_dues[tid] = next_due
        if scan is not None and scan.cursor != state.cursor:
            cursors[tid] = scan.cursor
    if any(not t.valid for t in stored):  # the due windows an invalid config skips
        skips += invalid_skips(stored, states, now)
    new = next_dues | {t: after for _, t, _, _, _, _, window, after in fires if window}
    live = [new.get(t, s.next_due_at) for t, s in states.items() if not (s.retired or s.paused_at)]
    table_due = min([d for d in live if d is not None], default=NEVER_DUE)
    changes = (tuple(fires), tuple(next_dues.items()), tuple(cursors.items()), tuple(skipped))
    held = pause.paused_values(table_id, due, skipped)
    return TablePlan(table_id, bool(stored), table_due, *changes, tuple(skips), held)


def decide_clock_trigger(
    trigger: evaluate.StoredTrigger, state: TriggerState, now: datetime, active: bool
) -> tuple[Fire | None, datetime | None, list[SkipRange]]:
    """THE decision for one clock trigger (:func:`tocsin.engine.evaluate.clock_decision`), as
    the tick writes it: ``(fire, next_due_at, skips)``: a :data:`Fire` for the window it fires
    or None; its new ``next_due_at`` (a fire's is written with its window: the state's is kept;
    a window the one-active-run rule holds: that window); the skip records of the windows a
    fire replaced, or the hold skipped."""
    decision = evaluate.clock_decision(trigger, state, now=now, active_run=active)
    tid, table_id = str(trigger.trigger_id), str(state.table_id)
    ranges = evaluate.trigger_skips(decision, table_id, tid) if decision.skips else []
    if not decision.fires:
        return None, decision.next_due_at, ranges
    window = decision.fires[-1]
    ident, digest = window_identity(window), state.definition_hash
    fire = (table_id, tid, ident, digest, window, None, window, decision.next_due_at)
    return fire, state.next_due_at, ranges


window_identity = lru_cache(maxsize=4096)(identity.clock_identity)  # aligned schedules share


def plan_date(
    table_id: str, trigger: evaluate.StoredTrigger, state: TriggerState, scan: DateScan
) -> tuple[list[Fire], datetime | None]:
    """A date trigger's fires (its due rows) and ``next_due_at`` (SPEC §4.1, §6): after a lap
    without a due row, the earliest future instant it saw (a record write wakes it earlier)."""
    tid, digest = str(trigger.trigger_id), state.definition_hash
    fires: list[Fire] = []
    earliest = NEVER_DUE
    for v in scan.verdicts:
        if v.verdict == "due_now" and v.identity is not None:
            fires.append((table_id, tid, v.identity, digest, v.fire_at, v.record, None, None))
        elif v.verdict == "scheduled_for_future" and v.fire_at is not None:
            earliest = min(earliest, v.fire_at)
    return fires, earliest if scan.lap_closed else ALWAYS_DUE
