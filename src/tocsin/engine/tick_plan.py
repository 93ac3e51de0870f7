"""The tick's plan (SPEC §5–§6): what one claimed table must write, decided without I/O from
what the tick read and ``now``, by THE evaluator (so the tick and the preview cannot disagree):
fires (a ledger claim and a pending run each), consumed windows, ``next_due_at`` changes, date
cursors, and the triggers whose evaluation raised (skipped, never fatal)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from typing import Any, NamedTuple

from tocsin.core import identity
from tocsin.core.model import TriggerState
from tocsin.core.schedules import DateColumnReached
from tocsin.core.skips import SkipRange
from tocsin.engine.configs import ALWAYS_DUE, NEVER_DUE
from tocsin.engine.evaluate import (
    ClockVerdict,
    RowVerdict,
    StoredTrigger,
    classify,
    clock_next_due,
)
from tocsin.engine.tick_skips import clock_skips

Cursor = tuple[datetime, str]  # a record's position: (created_at, id)


# One occurrence to claim, with its pending run: ``(table_id, trigger_id, identity,
# definition_hash, scheduled_for, record, window, next_due)``. Clock fires consume ``window`` and
# move the trigger's ``next_due_at`` to ``next_due`` (``record`` None); date fires carry the
# record's row snapshot (``window`` and ``next_due`` None). A plain tuple on purpose: the garbage
# collector stops tracking a tuple of plain values at its first pass, so a batch's thousands of
# clock fires are never promoted to (nor walked by) its full passes, as objects would be.
Fire = tuple[
    str, str, str, str | None, datetime | None, Mapping[str, Any] | None, datetime | None,
    datetime | None,
]  # fmt: skip


# A plan while it is drafted: its fires, ``next_due_at`` changes and date cursors, by trigger id
Draft = tuple[list[Fire], dict[str, datetime | None], dict[str, Cursor | None]]


@dataclass(frozen=True, slots=True)
class NextDue:
    """A clock trigger with nothing to fire: its new ``next_due_at``."""

    at: datetime | None


@dataclass(frozen=True, slots=True)
class DateScan:
    """What the tick read of a date trigger's records this pass: the verdicts of the pages it
    examined, the last examined record, and whether the pass closed a lap without a due row."""

    verdicts: list[RowVerdict]
    cursor: Cursor | None
    lap_closed: bool


class TablePlan(NamedTuple):
    """The writes of one table (see the module docstring): its fires and changes are tuples of
    plain values, which the garbage collector stops tracking at its first pass."""

    table_id: str
    has_schedules: bool
    # (trigger id, next_due_at) of the live, unpaused states as read
    dues: tuple[tuple[str, datetime | None], ...]
    fires: tuple[Fire, ...] = ()
    next_dues: tuple[tuple[str, datetime | None], ...] = ()  # (trigger id, its new next_due_at)
    cursors: tuple[tuple[str, Cursor | None], ...] = ()  # (trigger id, its new date cursor)
    skipped: tuple[tuple[str, Exception], ...] = ()
    skips: tuple[SkipRange, ...] = ()  # due occurrences that did not fire

    def table_next_due(self, still_due: Mapping[str, datetime] | None = None) -> datetime:
        """The earliest ``next_due_at`` of the live states once the plan is applied
        (``still_due``: clock triggers whose run was refused, due at their window)."""
        changed = dict(self.next_dues)
        changed.update((tid, after) for _, tid, _, _, _, _, window, after in self.fires if window)
        changed.update(still_due or {})
        dues = [d for tid, at in self.dues if (d := changed.get(tid, at)) is not None]
        return min(dues, default=NEVER_DUE)


def due_candidates(
    stored: list[StoredTrigger], states: Mapping[str, TriggerState], now: datetime
) -> list[tuple[StoredTrigger, TriggerState]]:
    """The valid, unpaused triggers of a table that may be due at ``now``, with their states."""
    out = []
    for trigger in stored:
        if trigger.spec is not None and not trigger.error_codes:
            state = states[str(trigger.trigger_id)]
            if state.paused_at is not None:  # paused: never planned (engine.pause)
                continue
            next_due = state.next_due_at
            if next_due is None or next_due <= now:
                out.append((trigger, state))
    return out


def plan_table(
    table_id: str,
    has_schedules: bool,
    states: Mapping[str, TriggerState],
    candidates: list[tuple[StoredTrigger, TriggerState]],
    active: set[str],
    scans: Mapping[str, DateScan],
    now: datetime,
) -> TablePlan:
    """One claimed table's plan at ``now``: ``candidates`` from :func:`due_candidates`,
    ``active`` the clock triggers with an active run, ``scans`` the date triggers' reads."""
    dues = tuple(
        [(tid, s.next_due_at) for tid, s in states.items() if not s.retired and s.paused_at is None]
    )
    draft: Draft = ([], {}, {})
    fires, next_dues, cursors = draft
    skipped: list[tuple[str, Exception]] = []
    skips: list[SkipRange] = []
    for trigger, state in candidates:
        tid = str(trigger.trigger_id)
        try:
            if isinstance(trigger.spec, DateColumnReached):
                if tid in scans:
                    plan_date(table_id, trigger, state, scans[tid], draft)
                continue
            decided = decide_clock_trigger(trigger, state, now, tid in active)
            skips += decided_skips(trigger, state, decided, now, tid in active)
        except Exception as exc:  # a broken trigger never fails the table (SPEC §6)
            skipped.append((tid, exc))
            continue
        if isinstance(decided, NextDue):
            next_dues[tid] = decided.at
        elif decided is not None:
            fires.append(decided)
    changes = (tuple(fires), tuple(next_dues.items()), tuple(cursors.items()))
    return TablePlan(table_id, has_schedules, dues, *changes, tuple(skipped), tuple(skips))


def decide_clock_trigger(
    trigger: StoredTrigger, state: TriggerState, now: datetime, active: bool
) -> Fire | NextDue | None:
    """THE evaluator's verdict for one clock trigger: a :class:`Fire` for the coalesced due
    window, a :class:`NextDue` when its ``next_due_at`` changes, or None (nothing to write)."""
    spec, table_id = trigger.spec, str(state.table_id)
    verdict = classify(trigger, state, now=now, active_run=active)
    if spec is None or state.anchor is None or not isinstance(verdict, ClockVerdict):
        return None
    if not verdict.due_now or verdict.due_at is None:
        changed = verdict.next_due_at != state.next_due_at
        return NextDue(verdict.next_due_at) if changed else None
    window, tid = verdict.due_at, str(trigger.trigger_id)
    after = clock_next_due(spec, anchor=state.anchor, last_consumed=window)
    return (
        table_id,
        tid,
        window_identity(window),
        state.definition_hash,
        window,
        None,
        window,
        after,
    )


def decided_skips(
    trigger: StoredTrigger,
    state: TriggerState,
    decided: Fire | NextDue | None,
    now: datetime,
    active: bool,
) -> list[SkipRange]:
    """The skip records of a clock trigger's decision (issue 17, :mod:`tick_skips`): a fire
    (the windows it replaced), or a due window held by the fence (``NextDue`` onto a window
    ``<= now``: the windows it replaced). A fenced window already marked records nothing."""
    if isinstance(decided, tuple) and decided[6] is not None:  # a fire: its window
        return clock_skips(trigger, state, decided[6], fired=True)
    if active and isinstance(decided, NextDue) and decided.at is not None and decided.at <= now:
        return clock_skips(trigger, state, decided.at, fired=False)
    return []


@lru_cache(maxsize=4096)
def window_identity(window: datetime) -> str:
    """``identity.clock_identity``, memoized: aligned schedules share their windows."""
    return identity.clock_identity(window)


def plan_date(
    table_id: str, trigger: StoredTrigger, state: TriggerState, scan: DateScan, draft: Draft
) -> None:
    """A date trigger's fires (its due rows), cursor and ``next_due_at``, into ``draft`` (SPEC
    §4.1, §6): when the pass closed a lap without a due row, the earliest future fire instant it
    saw (until then, or a record write, ``configs.wake_date_triggers``, its records are not read
    again)."""
    fires, next_dues, cursors = draft
    tid = str(trigger.trigger_id)
    earliest = NEVER_DUE
    for v in scan.verdicts:
        if v.verdict == "due_now" and v.identity is not None:
            digest = state.definition_hash
            fires.append((table_id, tid, v.identity, digest, v.fire_at, v.record, None, None))
        elif v.verdict == "scheduled_for_future" and v.fire_at is not None:
            earliest = min(earliest, v.fire_at)
    if scan.cursor != state.cursor:
        cursors[tid] = scan.cursor
    next_due = earliest if scan.lap_closed else ALWAYS_DUE
    if next_due != state.next_due_at:
        next_dues[tid] = next_due


def row_payload(record: Mapping[str, Any]) -> dict[str, Any]:
    """The run payload of a record: its id and a copy of its cells (SPEC §8 row snapshot)."""
    data = record.get("data")
    return {"id": str(record["id"]), "data": dict(data) if isinstance(data, Mapping) else {}}


__all__ = [
    "Cursor",
    "DateScan",
    "Fire",
    "NextDue",
    "TablePlan",
    "decide_clock_trigger",
    "decided_skips",
    "due_candidates",
    "plan_date",
    "plan_table",
    "row_payload",
]
