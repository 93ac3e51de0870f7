"""A lane run's admission: the two checks made before the source is asked (SPEC §14 steps 1–2);
the lane's writer on the fire path (its scheduled runs, :mod:`tocsin.engine.lanes`), and the
admission of its manual and retried attempts.

``admit`` runs inside the caller's write transaction, under the lane's row lock
(``store.lanes.lock_lane``), so two processes admitting runs of one lane are serialised:

1. a window overlapping an *admitted* window of another run of the lane →
   ``rejected / window_overlap`` (the run is kept, not admitted, so its own retriggers are
   rejected again and its window never blocks anyone);
2. a run already admitted for the same ``(lane, scheduled_for, window, policy version)`` →
   ``ignored / duplicate_trigger``: a new attempt of the same run. The run is found by those
   values (``resolve_run``), not by recomputing its id, so a run recorded with the legacy id
   formula is still recognised and keeps its ids (``legacy_ids``).
   A ``retry`` of an admitted run proceeds instead when its last attempt ended
   ``stopped``, failed before its decision, had its handler fail, or was left ``pending`` /
   ``running`` for longer than ``stale_after_s`` (a crashed process); otherwise it too is
   ``ignored / duplicate_trigger``;
3. otherwise the run is admitted (``insert_run``: the primary key fences a concurrent insert)
   and a new attempt proceeds to the source.

Every outcome allocates the attempt number in the store (``allocate_attempt``), so concurrent
callers never reuse one. Rejected and ignored attempts are recorded here, complete.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Protocol

from tocsin import messages
from tocsin.core.contract import lane as contract
from tocsin.core.contract.lane import Window
from tocsin.core.model import LaneRun, StoredLane
from tocsin.core.schedules.lane import LaneSchedule
from tocsin.store import lanes as store_lanes
from tocsin.store.tx import Tx

PROCEED = None


class LaneSpec(Protocol):
    """What the engine reads of a lane's definition (``tocsin.lanes.Lane``)."""

    @property
    def id(self) -> str: ...

    @property
    def policy_version(self) -> str: ...

    @property
    def zone(self) -> str: ...

    @property
    def cron(self) -> str | None: ...

    @property
    def timing(self) -> LaneSchedule | None: ...


@dataclass(frozen=True, slots=True, kw_only=True)
class Admission:
    """One attempt: ``decision`` is set when it ended before the source (rejected / ignored)."""

    lane_id: str
    zone: str
    policy_version: str
    run_id: str
    attempt: int
    attempt_id: str
    kind: str
    scheduled_for: datetime
    observed_at: datetime
    window: Window
    decision: tuple[str, str] | None
    legacy_ids: bool = False


def run_id_of(lane_id: str, zone: str, scheduled_for: datetime, window: Window, policy: str) -> str:
    """The run id of these values by the current formula."""
    fmt = contract.rfc3339
    return contract.run_id(
        lane_id=lane_id,
        scheduled_for=fmt(scheduled_for, zone),
        window_start=fmt(window.start, zone),
        window_end=fmt(window.end, zone),
        policy_version=policy,
    )


def resolve_run(
    tx: Tx, lane_id: str, zone: str, scheduled_for: datetime, window: Window, policy: str
) -> tuple[str, LaneRun | None]:
    """``(run id, its row)``: the run recorded for ``(lane, scheduled_for, window, policy)``
    whatever formula made its id, else ``(the current formula's id, None)``."""
    existing = store_lanes.find_run(
        tx,
        lane_id=lane_id,
        scheduled_for=scheduled_for,
        start=window.start,
        end=window.end,
        policy_version=policy,
    )
    if existing is not None:
        return str(existing.run_id), existing
    return run_id_of(lane_id, zone, scheduled_for, window, policy), None


def legacy_ids(run: LaneRun) -> bool:
    """Was this run row recorded with the legacy id formula (its attempts keep it)?"""
    window = Window(run.window_start, run.window_end)
    current = run_id_of(run.lane_id, run.zone, run.scheduled_for, window, run.policy_version)
    return bool(run.run_id != current)


def ensure_lane(tx: Tx, lane: LaneSpec, now: datetime) -> StoredLane:
    """The lane's row, inserted when missing, locked for this transaction."""
    values = {
        "id": lane.id,
        "cron": lane.cron,
        "timezone": lane.zone,
        "policy_version": lane.policy_version,
        "next_fire_at": None,
        "created_at": now,
        "updated_at": now,
    }
    store_lanes.insert_lane(tx, values=values)
    row = store_lanes.lock_lane(tx, lane_id=lane.id)
    if row is None:  # inserted above or present: unreachable
        raise RuntimeError(messages.lane_row_vanished(lane.id))
    return row


def admit(
    tx: Tx,
    lane: LaneSpec,
    *,
    kind: str,
    scheduled_for: datetime,
    window: Window,
    zone: str,
    now: datetime,
    stale_after_s: float,
    pending: bool = False,
    resolved: tuple[str, LaneRun | None] | None = None,
) -> Admission:
    """Check, allocate and record (see the module docstring); ``pending`` leaves a proceeding
    attempt ``pending`` for ``work`` (the tick), else it is ``running`` for the caller.
    ``resolved``: the tick's, which holds the lane's row locked already and has resolved the
    run (``resolve_run``) in this transaction."""
    if resolved is None:
        ensure_lane(tx, lane, now)
        resolved = resolve_run(tx, lane.id, zone, scheduled_for, window, lane.policy_version)
    run, found = resolved
    legacy = found is not None and legacy_ids(found)
    zone = zone if found is None else str(found.zone)  # its instants' text made its id
    row = _run_values(lane, run, zone, scheduled_for, window, now)
    if store_lanes.overlapping_run(
        tx, lane_id=lane.id, start=window.start, end=window.end, other_than=run
    ):
        store_lanes.insert_run(tx, values={**row, "admitted": False, "state": "rejected"})
        return _record(tx, lane, row, kind, now, contract.REJECTED_OVERLAP, legacy=legacy)
    if not store_lanes.insert_run(tx, values=row):
        # the insert conflicted on it
        existing = store_lanes.get_run(tx, run_id=run) or LaneRun(**row)
        retry = kind == "retry" and _retryable(existing, now, stale_after_s)
        if existing.admitted and not retry:
            return _record(tx, lane, row, kind, now, contract.IGNORED_DUPLICATE, legacy=legacy)
        if retry:
            error = messages.lane_attempt_superseded(existing.attempts + 1)
            store_lanes.supersede_attempts(tx, run_id=run, error=error, now=now)
    state = "pending" if pending else "running"
    values = {"admitted": True, "state": state, "decision": None, "handler_status": None}
    store_lanes.update_run(tx, run_id=run, values=values, now=now)
    return _record(tx, lane, row, kind, now, PROCEED, state=state, legacy=legacy)


def _run_values(
    lane: LaneSpec, run: str, zone: str, scheduled_for: datetime, window: Window, now: datetime
) -> dict[str, Any]:
    return {
        "run_id": run,
        "lane_id": lane.id,
        "zone": zone,
        "scheduled_for": scheduled_for,
        "window_start": window.start,
        "window_end": window.end,
        "policy_version": lane.policy_version,
        "admitted": True,
        "attempts": 0,
        "state": "pending",
        "decision": None,
        "handler_status": None,
        "created_at": now,
        "updated_at": now,
    }


def _retryable(run: LaneRun, now: datetime, stale_after_s: float) -> bool:
    stale = bool(run.updated_at <= now - timedelta(seconds=stale_after_s))
    if run.state in ("pending", "running"):
        return stale
    if run.state == "failed" or run.decision == "stopped":
        return True
    handler = run.handler_status
    return bool(handler == "failed" or (handler == "running" and stale))


def _record(
    tx: Tx,
    lane: LaneSpec,
    run: dict[str, Any],
    kind: str,
    now: datetime,
    decision: tuple[str, str] | None,
    *,
    state: str = "recorded",
    legacy: bool = False,
) -> Admission:
    number = store_lanes.allocate_attempt(tx, run_id=run["run_id"])
    make_attempt = contract.FORMULAS[1 if legacy else 0][1]
    adm = Admission(
        lane_id=lane.id,
        zone=run["zone"],
        policy_version=lane.policy_version,
        run_id=run["run_id"],
        attempt=number,
        attempt_id=make_attempt(run["run_id"], number),
        kind=kind,
        scheduled_for=run["scheduled_for"],
        observed_at=now,
        window=Window(run["window_start"], run["window_end"]),
        decision=decision,
        legacy_ids=legacy,
    )
    doc = None
    if decision is not None:
        doc = contract_of(adm, contract.NOT_ASKED, {"accepted_refs": [], "rejected": []}, decision)
    store_lanes.insert_attempt(tx, values=attempt_row(adm, state, doc, now))
    return adm


def contract_of(
    adm: Admission,
    source: dict[str, Any],
    selection: dict[str, Any],
    decision: tuple[str, str],
) -> dict[str, Any]:
    return contract.document(
        lane_id=adm.lane_id,
        zone=adm.zone,
        kind=adm.kind,
        scheduled_for=adm.scheduled_for,
        observed_at=adm.observed_at,
        window=adm.window,
        policy_version=adm.policy_version,
        attempt=adm.attempt,
        source=source,
        selection=selection,
        decision=decision,
        legacy_ids=adm.legacy_ids,
    )


def attempt_row(
    adm: Admission, state: str, doc: dict[str, Any] | None, now: datetime
) -> dict[str, Any]:
    return {
        "attempt_id": adm.attempt_id,
        "run_id": adm.run_id,
        "lane_id": adm.lane_id,
        "attempt": adm.attempt,
        "kind": adm.kind,
        "observed_at": adm.observed_at,
        "state": state,
        "decision_status": None if doc is None else doc["decision"]["status"],
        "decision_reason": None if doc is None else doc["decision"]["reason"],
        "contract": doc,
        "handler_status": None,
        "handler_error": None,
        "error": None,
        "created_at": now,
        "updated_at": now,
    }


__all__ = [
    "Admission",
    "LaneSpec",
    "admit",
    "attempt_row",
    "contract_of",
    "ensure_lane",
    "legacy_ids",
    "resolve_run",
    "run_id_of",
]
