"""THE evaluator: what is due at ``now``, and why not (DESIGN §1, STYLE R3).

The tick acts on these verdicts, the preview only counts them; neither re-derives anything, so
they can never disagree. Every function here is pure: the caller reads the store (states, a page
of records, fired identities, active runs) and passes what it read, with ``now``.

- :func:`inspect_stored` turns a stored triggers config into one :class:`StoredTrigger` per
  schedule trigger: a parsed schedule, or the stable SPEC §7 error codes that make the scheduler
  skip it. A broken trigger never hides the others.
- :func:`clock_decision` decides an interval/daily/cron trigger: the trigger as a schedule
  decided by :func:`tocsin.core.schedules.decide.decide` (its due window coalesced: only the
  latest unconsumed window ``<= now``; held by an active run, SPEC §5.3); :func:`clock_verdict`
  reads it for the preview.
- :func:`page_identities` + :func:`classify_date_page` decide a page of records for a
  date_column_reached trigger, in the scheduler order of SPEC §7.
- :func:`classify` is the single entry point over both families (tick, preview and any
  "next fire" display call it or the family member it dispatches to).
- :func:`row_event_triggers` picks the row-event triggers a write fires (SPEC §3).

Nothing here raises on a bad cell or a bad stored trigger (SPEC §4.1, §6).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any, NamedTuple, TypeGuard

from tocsin import messages
from tocsin.core.config import predicates, triggers
from tocsin.core.model import TriggerState
from tocsin.core.schedules import identity, windows
from tocsin.core.schedules.decide import (
    Decision,
    State,
    Timing,
    decide,
    table_state,
    table_timing,
)
from tocsin.core.schedules.manual import MANUAL
from tocsin.core.schedules.pause import Pause, Pauses, pause_of, pauses_at
from tocsin.core.schedules.skips import TRIGGER, SkipRange
from tocsin.core.schedules.spec import DateColumnReached, ScheduleSpec, parse_schedule
from tocsin.core.time import instants

# The six date-arm verdicts, in the scheduler's order (SPEC §7). A value whose fire instant fell
# inside one of the trigger's pauses never fires: it is ``already_fired`` (its ``RowVerdict.pause``
# says which pause; the tick consumes it in the ledger without a run, engine.pause).
MISSING = "missing_schedule_value"
INVALID = "invalid_schedule_value"
ALREADY_FIRED = "already_fired"
FUTURE = "scheduled_for_future"
WHEN_MISMATCH = "when_filter_mismatch"
DUE_NOW = "due_now"
DATE_VERDICTS = (MISSING, INVALID, ALREADY_FIRED, FUTURE, WHEN_MISMATCH, DUE_NOW)

ROW_EVENTS = ("created", "updated", "deleted", "restored")
STATE_MISSING = "schedule_state_missing"
ID_MISSING = "trigger_id_missing"
ID_DUPLICATE = "trigger_id_duplicate"
SCHEDULE_INVALID = "stored_schedule_invalid"

# Windows are at least minute-aligned instants; "just before the anchor" for "the first window
# at or after the anchor" queries.
_EPSILON = timedelta(microseconds=1)


class StoredTrigger(NamedTuple):
    """One stored schedule trigger as the scheduler sees it: valid (``spec``) or skipped (codes).

    The evaluator's values are named tuples, immutable as frozen dataclasses are, built at a
    third of their cost: the tick builds one of each per trigger it plans."""

    trigger_id: str | None
    spec: ScheduleSpec | None
    when: list[Any]
    stored_schedule_type: str | None
    error_codes: tuple[str, ...]
    position: int = -1  # index in the stored config list

    @property
    def valid(self) -> bool:
        return self.spec is not None and not self.error_codes

    @property
    def kind(self) -> str:
        """``date_column_reached | interval | daily | cron`` when valid, else ``invalid``."""
        return schedule_kind(self.spec) if self.valid and self.spec is not None else "invalid"


class ClockVerdict(NamedTuple):
    """An interval/daily/cron trigger at ``now``: the due window, or why there is none."""

    due_at: datetime | None  # latest unconsumed window <= now (coalesced), None when none
    due_now: bool  # due_at is set and no run of the trigger is pending/running
    active_run: bool
    last_consumed: datetime | None
    next_due_at: datetime | None  # the earliest instant this trigger may be due


class RowVerdict(NamedTuple):
    """One record of a date trigger's page: its verdict, identity and fire instant; ``pause``:
    the pause its fire instant fell inside when the ledger does not hold it yet (an
    ``already_fired`` value the tick consumes without a run)."""

    record: Mapping[str, Any]
    verdict: str
    identity: str | None
    fire_at: datetime | None
    pause: Pause | None = None


def schedule_kind(spec: ScheduleSpec) -> str:
    """The SPEC §4 type name of a parsed schedule."""
    return str(spec.kind)


def _mapping(value: object) -> TypeGuard[Mapping[str, Any]]:
    """``isinstance(value, Mapping)``, with the common case (a decoded JSON dict) first: the
    ABC check is the slow part of inspecting a large batch of configs."""
    return type(value) is dict or isinstance(value, Mapping)


def is_schedule_trigger(trigger: object) -> bool:
    """A stored entry the scheduler owns: ``on: schedule``, or anything that is no row event."""
    if not _mapping(trigger):
        return True
    return trigger.get("on") not in ROW_EVENTS


def _stored_type(trigger: object) -> str | None:
    if _mapping(trigger):
        schedule = trigger.get("schedule")
        if _mapping(schedule):
            kind = schedule.get("type")
            return kind if isinstance(kind, str) else None
    return None


def _trigger_id(trigger: object) -> str | None:
    if _mapping(trigger):
        tid = trigger.get("id")
        if isinstance(tid, str) and tid:
            return tid
    return None


def _codes_for(
    trigger: object,
    columns: Mapping[str, str],
    duplicate: bool,
) -> tuple[list[str], ScheduleSpec | None]:
    try:
        codes = list(triggers.classify_stored(trigger, columns))
    except Exception:  # a classifier bug must not hide the other triggers
        codes = [SCHEDULE_INVALID]
    if isinstance(trigger, Mapping):
        if trigger.get("on") != "schedule" and SCHEDULE_INVALID not in codes:
            codes.append(SCHEDULE_INVALID)
        if _trigger_id(trigger) is None and ID_MISSING not in codes:
            codes.insert(0, ID_MISSING)
    if duplicate and ID_DUPLICATE not in codes:
        codes.append(ID_DUPLICATE)
    spec: ScheduleSpec | None = None
    if not codes and isinstance(trigger, Mapping):
        try:
            spec = parse_schedule(trigger.get("schedule"), columns)
        except Exception:
            codes.append(SCHEDULE_INVALID)
    return codes, spec


# What a stored trigger's content decides: its error codes, parsed schedule, ``when`` list and
# stored schedule type
Derived = tuple[tuple[str, ...], ScheduleSpec | None, list[Any], str | None]

# (schedule, when, on, duplicate, columns) → Derived of a trigger with a well-formed id: a pure
# function of those values (reprs of plain JSON), so each distinct schedule is parsed once
_CODES_MEMO: dict[tuple[str, str, str, bool, str], Derived] = {}
CODES_MEMO_MAX = 10_000


def _derive(trigger: object, columns: Mapping[str, str], duplicate: bool) -> Derived:
    codes, spec = _codes_for(trigger, columns, duplicate)
    when = trigger.get("when") if _mapping(trigger) else None
    return tuple(codes), spec, list(when) if isinstance(when, list) else [], _stored_type(trigger)


def _derived(
    trigger: object, tid: str | None, columns: Mapping[str, str], duplicate: bool, columns_key: str
) -> Derived:
    """``_derive`` (``tid``: the trigger's ``_trigger_id``), memoized for triggers whose id is
    well formed (what it derives does not depend on which id it is). The ``when`` list is shared
    by the triggers of one memo entry: nothing mutates it."""
    if tid is None or not _mapping(trigger) or not triggers.well_formed_id(tid):
        return _derive(trigger, columns, duplicate)
    get = trigger.get
    key = (repr(get("schedule")), repr(get("when")), repr(get("on")), duplicate, columns_key)
    hit = _CODES_MEMO.get(key)
    if hit is None:
        if len(_CODES_MEMO) >= CODES_MEMO_MAX:
            _CODES_MEMO.clear()
        hit = _CODES_MEMO[key] = _derive(trigger, columns, duplicate)
    return hit


def inspect_stored(
    stored: object,
    columns: Mapping[str, str],
    live_state_ids: Iterable[str],
) -> list[StoredTrigger]:
    """Each stored schedule trigger, parsed or with its SPEC §7 error codes, in config order.

    ``live_state_ids`` are the trigger ids with a non-retired state row; a valid schedule
    trigger without one is skipped with ``schedule_state_missing``.
    """
    entries = stored if isinstance(stored, list) else []
    ids = [_trigger_id(t) for t in entries]
    counts: dict[str | None, int] = {}
    for tid in ids:
        counts[tid] = counts.get(tid, 0) + 1
    has_state = (
        live_state_ids if isinstance(live_state_ids, set | frozenset) else set(live_state_ids)
    )
    columns_key = repr(columns)
    out: list[StoredTrigger] = []
    for position, (trigger, tid) in enumerate(zip(entries, ids, strict=True)):
        if not is_schedule_trigger(trigger):
            continue
        duplicate = tid is not None and counts[tid] > 1
        codes, spec, when, stored_type = _derived(trigger, tid, columns, duplicate, columns_key)
        if not codes and tid not in has_state:
            codes = (STATE_MISSING,)
        out.append(
            StoredTrigger(
                trigger_id=tid,
                spec=spec if not codes else None,
                when=when,
                stored_schedule_type=stored_type,
                error_codes=codes,
                position=position,
            )
        )
    return out


# --- clock triggers (interval, daily, cron) -------------------------------------------------


def clock_next_due(
    spec: ScheduleSpec, *, anchor: datetime, last_consumed: datetime | None
) -> datetime | None:
    """The first window at or after ``anchor`` that is later than ``last_consumed``."""
    after = anchor - _EPSILON
    if last_consumed is not None and last_consumed > after:
        after = last_consumed
    return windows.next_window_after(spec, anchor, after)


def clock_decision(
    trigger: StoredTrigger,
    state: TriggerState,
    *,
    now: datetime,
    active_run: bool,
    paused: bool = False,
) -> Decision:
    """THE decision for a table clock trigger (DESIGN §1): the trigger as a schedule under
    seed 000's fixed policies (:func:`tocsin.core.schedules.decide.table_timing`), decided by
    :func:`tocsin.core.schedules.decide.decide` as every schedule is. Its skips are the
    trigger's (:func:`trigger_skips`)."""
    spec, anchor = trigger.spec, state.anchor
    if spec is None or isinstance(spec, DateColumnReached) or anchor is None:
        raise ValueError(messages.clock_trigger_without_timing(trigger.trigger_id))
    timing = table_timing(spec, anchor, paused=paused)
    row = table_state(timing, state.next_due_at, state.last_consumed, active_run=active_run)
    return decide(timing, row, (), now)


def manual_decision(trigger: StoredTrigger, state: TriggerState, *, now: datetime) -> Decision:
    """Run-now as the one decision: the trigger (a clock trigger with its timing, a date trigger
    without one) decided on a manual event at ``now``: it fires once at ``now``, whatever its
    timing or pause, and its state does not move."""
    tid, spec, anchor = str(trigger.trigger_id), trigger.spec, state.anchor
    if spec is not None and not isinstance(spec, DateColumnReached) and anchor is not None:
        timing = replace(table_timing(spec, anchor, paused=state.paused), id=tid)
        row = table_state(timing, state.next_due_at, state.last_consumed, active_run=False)
    else:
        timing, row = Timing(tid, None, paused=state.paused, target=TRIGGER), State(None)
    return decide(timing, row, ((MANUAL, tid, now),), now)


def trigger_skips(decision: Decision, table_id: str, trigger_id: str) -> list[SkipRange]:
    """A table clock trigger's decision's skips as the trigger's skip ranges."""
    return [
        replace(r, target_kind=TRIGGER, target_id=trigger_id, table_id=table_id)
        for r in decision.skips
    ]


def clock_verdict(
    decision: Decision, state: TriggerState, *, active_run: bool, now: datetime
) -> ClockVerdict:
    """The preview's reading of a clock trigger's decision (SPEC §7): the window it fires, or
    the window the one-active-run rule holds; else the next window."""
    due_at = decision.fires[-1] if decision.fires else None
    held = decision.next_due_at
    if active_run and held is not None and held <= now:
        due_at = held
    return ClockVerdict(
        due_at=due_at,
        due_now=due_at is not None and not active_run,
        active_run=active_run,
        last_consumed=state.last_consumed,
        next_due_at=due_at if due_at is not None else held,
    )


# --- date triggers (date_column_reached) ----------------------------------------------------


def _cell(record: Mapping[str, Any], column: str) -> Any:
    data = record.get("data")
    return data.get(column) if isinstance(data, Mapping) else None


def record_identity(
    spec: DateColumnReached, column_type: str, record: Mapping[str, Any]
) -> str | None:
    """The occurrence identity of ``record``'s current value, or None for a missing/bad cell."""
    try:
        value = identity.normalize_value(column_type, _cell(record, spec.column))
    except Exception:
        return None
    if value is None:
        return None
    return identity.date_identity(str(record["id"]), value)


def page_identities(
    spec: DateColumnReached, column_type: str, page: Sequence[Mapping[str, Any]]
) -> list[str]:
    """The identities of a page's valid cells: what to ask the ledger about."""
    found = (record_identity(spec, column_type, r) for r in page)
    return [i for i in found if i is not None]


def _fire_at(
    spec: DateColumnReached, column_type: str, record: Mapping[str, Any]
) -> tuple[str, datetime | None, str | None]:
    """``(status, fire instant, identity)`` of a record's cell, read once."""
    try:
        status, instant = instants.classify_cell(_cell(record, spec.column))
    except Exception:
        return INVALID, None, None
    if status == "missing":
        return MISSING, None, None
    if status != "ok" or instant is None:
        return INVALID, None, None
    fire_at = instants.add_minutes_saturating(instant, spec.offset_minutes)
    try:
        value = identity.normalize_instant(column_type, instant)
    except Exception:
        value = None
    ident = None if value is None else identity.date_identity(str(record["id"]), value)
    return "ok", fire_at, ident


def _when_matches(when: list[Any], record: Mapping[str, Any]) -> bool:
    data = record.get("data")
    row = dict(data) if isinstance(data, Mapping) else {}
    try:
        return bool(predicates.matches(when, row))
    except Exception:
        return False


def classify_record(
    spec: DateColumnReached,
    column_type: str,
    when: list[Any],
    record: Mapping[str, Any],
    fired: set[str],
    now: datetime,
    pauses: Pauses = (),
    held: bool = False,
) -> RowVerdict:
    """One record's verdict, in the scheduler order of SPEC §7. ``pauses``: the trigger's
    pauses; a fire instant inside one (bounds included) never fires, so the value counts as
    ``already_fired`` (with its ``pause``). ``held``: the trigger is paused now; a value that
    would be due fires at the first tick after the resume, so it counts as
    ``scheduled_for_future`` (nothing of a paused trigger is due now)."""
    status, fire_at, ident = _fire_at(spec, column_type, record)
    if status != "ok" or fire_at is None:
        return RowVerdict(record=record, verdict=status, identity=None, fire_at=None)
    fresh = ident is not None and ident not in fired
    pause = pause_of(pauses, fire_at) if pauses and fresh else None
    if ident is None:
        verdict = INVALID
    elif not fresh or pause is not None:
        verdict = ALREADY_FIRED
    elif fire_at > now:
        verdict = FUTURE
    elif not _when_matches(when, record):
        verdict = WHEN_MISMATCH
    else:
        verdict = FUTURE if held else DUE_NOW
    return RowVerdict(record, verdict, ident, fire_at, pause)


def classify_date_page(
    spec: DateColumnReached,
    column_type: str,
    when: list[Any],
    page: Sequence[Mapping[str, Any]],
    fired: set[str],
    now: datetime,
    pauses: Pauses = (),
    held: bool = False,
) -> list[RowVerdict]:
    """Per-record verdicts for a page, given the identities the ledger already holds."""
    return [classify_record(spec, column_type, when, r, fired, now, pauses, held) for r in page]


def count_verdicts(verdicts: Iterable[RowVerdict]) -> dict[str, int]:
    """The mutually exclusive counts of the preview's date arm."""
    counts = dict.fromkeys(DATE_VERDICTS, 0)
    for v in verdicts:
        counts[v.verdict] += 1
    return counts


# --- the one entry point ----------------------------------------------------------------------


def classify(
    trigger: StoredTrigger,
    state: TriggerState,
    *,
    now: datetime,
    active_run: bool = False,
    column_type: str = "",
    page: Sequence[Mapping[str, Any]] = (),
    fired: Iterable[str] = (),
) -> ClockVerdict | list[RowVerdict]:
    """THE evaluator (DESIGN §1): a valid stored trigger and its state at ``now``.

    Clock kinds → :class:`ClockVerdict` (``active_run`` is whether a run is pending/running);
    date kind → one :class:`RowVerdict` per record of ``page`` (``fired``: the identities the
    ledger holds, ``column_type``: the schedule column's type). An invalid trigger has no
    verdict (its ``error_codes`` say why): ``ValueError``.
    """
    spec = trigger.spec
    if spec is None or not trigger.valid:
        raise ValueError(
            messages.trigger_invalid_for_verdict(trigger.trigger_id, trigger.error_codes)
        )
    if isinstance(spec, DateColumnReached):
        # a date verdict needs no other state
        paused_at: datetime | None = getattr(state, "paused_at", None)
        pauses = pauses_at(getattr(state, "pause_windows", ()), paused_at, now)
        held = paused_at is not None
        return classify_date_page(
            spec, column_type, trigger.when, page, set(fired), now, pauses, held
        )
    decision = clock_decision(trigger, state, now=now, active_run=active_run)
    return clock_verdict(decision, state, active_run=active_run, now=now)


# --- row events ------------------------------------------------------------------------------


def _changed(columns: object, row: Mapping[str, Any], previous: Mapping[str, Any] | None) -> bool:
    """No ``changed`` list: True. Else some listed column's value changed (needs ``previous``)."""
    if columns is None:
        return True
    if not isinstance(columns, list) or previous is None:
        return False
    return any(not predicates.same_value(previous.get(c), row.get(c)) for c in columns)


def row_event_triggers(
    stored: object,
    event: str,
    row: Mapping[str, Any],
    previous: Mapping[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """The row-event triggers a write fires: ``on == event`` and ``when`` matches (SPEC §3);
    with ``changed`` (§13), only when one of those columns' values differs from ``previous``
    (the row before an update), so an empty patch or an unchanged value fires nothing.

    A broken stored entry (no id, bad ``when``) is skipped, never raised.
    """
    entries = stored if isinstance(stored, list) else []
    fired: list[dict[str, Any]] = []
    for trigger in entries:
        if not isinstance(trigger, Mapping) or trigger.get("on") != event:
            continue
        if _trigger_id(trigger) is None:
            continue
        when = trigger.get("when") or []
        if not isinstance(when, list):
            continue
        try:
            ok = _changed(trigger.get("changed"), row, previous)
            ok = ok and bool(predicates.matches(when, dict(row), previous))
        except Exception:
            ok = False
        if ok:
            fired.append(dict(trigger))
    return fired
