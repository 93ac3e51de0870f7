"""Scheduled lane runs: the tick's lane pass on the one fire path (SPEC §14, §6/§12), and what it
would do at an instant (``due``, ``next_fires``).

Design: each registered lane with a ``schedule`` has one row in ``lanes`` whose ``next_fire_at``
is the next schedule instant to process (anchored at the first tick that sees the lane: nothing
before it is backfilled; a changed cron or zone re-anchors from ``now``). The pass pages until no
registered lane is due, one transaction per page, the first one after the sync of the rows, in
its transaction (a pass with no lane due reads the rows and claims nothing); the tick drives it
as a pass of its one paging loop (:func:`lane_pass`, :mod:`tocsin.engine.passes`):

1. claim the due, unpaused lane rows of the registered lanes (PostgreSQL ``FOR UPDATE SKIP
   LOCKED``, SQLite ``BEGIN IMMEDIATE``), so several tickers split them;
2. per lane, the one decision (:func:`tocsin.core.schedules.decide.decide` under the lane's
   policy values, :func:`tocsin.core.schedules.lane.lane_timing`): which instants run over which
   windows by the lane's ``catch_up`` (``all``: each missed window, at most
   :data:`PAGE_INSTANTS` per page; ``latest``: once over the merged window; ``none``: none
   after downtime), and the skip ranges (``coalesced``, ``dst_gap``);
3. :func:`tocsin.engine.fire.fire` claims each identity ``(lane id, s)`` in the occurrence ledger
   under the namespace ``"lane"`` and admits its run (:mod:`tocsin.engine.lane_admit`) in the
   same transaction, and records the skips: an instant is processed once whatever the number of
   tickers (an identity not claimed was processed already);
4. the admission (overlap and duplicate checks, attempt allocation) leaves a proceeding attempt
   ``pending``; ``work`` asks the source and records the contract — a tick never waits for it;
5. ``next_fire_at`` moves to the decision's ``next_due_at``.

A paused lane is not claimed; its resume (:func:`resume_lane`) is the decision with
``paused=True``: the instants owed meanwhile are recorded ``paused``, ``next_fire_at`` moves past
``now`` and none of them runs.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from tocsin import messages
from tocsin.core.contract.lane import Window
from tocsin.core.model import StoredLane
from tocsin.core.schedules.decide import Decision, State, decide
from tocsin.core.schedules.lane import PAGE_INSTANTS, LaneSchedule
from tocsin.core.schedules.skips import PAUSED, SkipRange
from tocsin.core.time.instants import to_iso
from tocsin.engine import fire as fire_path
from tocsin.engine.lane_admit import LaneSpec, admit, resolve_run
from tocsin.engine.passes import Pass, Take, fire_passes
from tocsin.engine.resume import resume_decision
from tocsin.engine.whynot import NOT_DUE, instant_view
from tocsin.store import lanes as store_lanes
from tocsin.store.tx import Store, Tx

LEDGER_NAMESPACE = "lane"
COUNTS = "lanes_fired"  # the tick report's key of lane attempts admitted


def _timing(lane: LaneSpec) -> LaneSchedule:
    timing = lane.timing
    if timing is None:
        raise ValueError(messages.lane_without_schedule(lane.id))
    return timing


def next_instant(lane: LaneSpec, after: datetime) -> datetime | None:
    """The lane's first schedule instant strictly after ``after``."""
    return _timing(lane).next_after(after)


def previous_instant(lane: LaneSpec, before: datetime) -> datetime | None:
    """The lane's last schedule instant strictly before ``before``."""
    return _timing(lane).previous_before(before)


def scheduled_window(lane: LaneSpec, scheduled_for: datetime) -> Window | None:
    """``[previous instant, scheduled_for)``; None when no earlier instant exists."""
    return _timing(lane).window(scheduled_for)


def _synced(lane: LaneSpec, row: StoredLane | None, now: datetime) -> dict[str, Any] | None:
    """The values the sync at ``now`` writes to the lane's row (None: nothing to write)."""
    anchor = next_instant(lane, now) if lane.cron else None
    if row is None:
        return {
            "id": lane.id,
            "cron": lane.cron,
            "timezone": lane.zone,
            "policy_version": lane.policy_version,
            "next_fire_at": anchor,
            "created_at": now,
            "updated_at": now,
        }
    timing = (row.cron, row.timezone) != (lane.cron, lane.zone)
    timing = timing or (anchor is not None and row.next_fire_at is None)
    if not timing and row.policy_version == lane.policy_version:
        return None
    values: dict[str, Any] = {"policy_version": lane.policy_version}
    if timing:
        values.update(cron=lane.cron, timezone=lane.zone, next_fire_at=anchor)
    return values


def sync_lanes(tx: Tx, lanes: Mapping[str, LaneSpec], *, now: datetime) -> list[str]:
    """Insert the rows of new scheduled lanes; re-anchor those whose cron or zone changed (a
    paused lane stays paused). The ids of ``lanes`` whose row, as it now stands, is due at
    ``now`` (unpaused, ``next_fire_at <= now``; a row just written is anchored after ``now``)."""
    rows = store_lanes.list_lane_rows(tx)
    due = []
    for lane in lanes.values():
        row = rows.get(lane.id)
        values = _synced(lane, row, now)
        if row is None:
            if values is not None:
                store_lanes.insert_lane(tx, values=values)
            continue
        if values is not None:
            store_lanes.update_lane(tx, lane_id=lane.id, values=values, now=now)
            row = replace(row, **values)
        at = row.next_fire_at
        if row.paused_at is None and at is not None and at <= now:
            due.append(lane.id)
    return due


def _decide(lane: LaneSpec, next_fire_at: datetime | None, now: datetime) -> Decision:
    return decide(_timing(lane).timing(), State(next_fire_at), (), now)


def fire_due_lanes(
    store: Store, lanes: Mapping[str, LaneSpec], *, now: datetime, stale_after_s: float
) -> int:
    """When one of ``lanes`` has a schedule: sync their rows (:func:`sync_lanes`), then admit
    their due scheduled runs, page after page until none is due (module docstring). The first
    page shares the sync's transaction and claims only the lanes its rows show due: a pass with
    none due is one statement."""
    return fire_passes(store, [lane_pass(lanes, stale_after_s=stale_after_s)], now=now)[COUNTS]


def lane_pass(lanes: Mapping[str, LaneSpec], *, stale_after_s: float) -> Pass:
    """:func:`fire_due_lanes` as a pass of the tick's loop (:mod:`tocsin.engine.passes`): no
    page at all without a scheduled lane.

    Its units are a lane at an instant, ``<lane id>@<next_fire_at>`` (a lane is claimed again
    in one call when its backlog spans pages; a page moves it past the instant, ``Pass.moves``).
    The first page syncs the rows and claims the lanes they show due (a pass with none due is
    one statement); a later page claims the due ones of the scheduled lanes, but a lane still
    due at the instant of a failed page's unit (``take.skip``); a failed page's retry syncs
    again (the failed page's sync was rolled back with it) and claims the lane of
    ``take.only`` alone. What a page claims is read from the rows, never kept from an earlier
    page, so a page rolled back leaves nothing behind."""
    scheduled = [lane.id for lane in lanes.values() if lane.cron]
    first = [True]

    def page(tx: Tx, now: datetime, take: Take) -> bool:
        ids = sync_lanes(tx, lanes, now=now) if first[0] or take.only else scheduled
        if take.only is not None:
            lane_id = take.only.rpartition("@")[0]
            ids = [lane_id] if lane_id in ids else []
        first[0] = False
        fired, more = _page(tx, lanes, ids, now, stale_after_s, take) if ids else (0, False)
        take.counts[COUNTS] += fired
        return take.only is None and more

    def has_schedules(now: datetime) -> bool:
        return bool(scheduled)

    return Pass((COUNTS,), page, has_schedules, moves=True)


def _unit(lane_id: str, at: datetime) -> str:
    """A lane pass's unit: the lane at the instant it is due from."""
    return f"{lane_id}@{at.isoformat()}"


def _page(
    tx: Tx,
    lanes: Mapping[str, LaneSpec],
    lane_ids: list[str],
    now: datetime,
    stale: float,
    take: Take,
) -> tuple[int, bool]:
    """One page: ``(attempts recorded, whether a lane is still due after it)``; a lane due at
    the instant of a unit in ``take.skip`` is left alone, each other lane claimed is named in
    ``take.units`` before it is decided."""
    recorded, owing = 0, False
    claimed = store_lanes.claim_due_lanes(tx, now=now, lane_ids=lane_ids, limit=len(lane_ids))
    skip = set(take.skip)
    units = [(r, _unit(r.id, r.next_fire_at)) for r in claimed if r.next_fire_at is not None]
    rows = [row for row, unit in units if unit not in skip]
    take.units.extend(unit for _, unit in units if unit not in skip)
    for row in rows:
        lane = lanes[row.id]
        decision = _decide(lane, row.next_fire_at, now)
        recorded += _fire(tx, lane, decision, now, stale)
        following = decision.next_due_at
        values = {"next_fire_at": following}
        store_lanes.update_lane(tx, lane_id=lane.id, values=values, now=now)
        owing = owing or (following is not None and following <= now)
    return recorded, owing


def _fire(tx: Tx, lane: LaneSpec, decision: Decision, now: datetime, stale_after_s: float) -> int:
    """The decision's runs through the one fire path: claimed, admitted, skips recorded."""
    planned = list(zip(decision.fires, decision.windows, strict=True))
    resolved = [
        resolve_run(tx, lane.id, lane.zone, at, window, lane.policy_version)
        for at, window in planned
    ]
    firings = [
        (LEDGER_NAMESPACE, lane.id, at.isoformat(), found[0])
        for (at, _), found in zip(planned, resolved, strict=True)
    ]

    def write(claimed: list[int]) -> tuple[str, ...]:
        for i in claimed:
            at, window = planned[i]
            admit(
                tx,
                lane,
                kind="scheduled",
                scheduled_for=at,
                window=window,
                zone=lane.zone,
                now=now,
                stale_after_s=stale_after_s,
                pending=True,
                resolved=resolved[i],
            )
        return ()

    out = fire_path.fire(tx, firings, write, skips=decision.skips, now=now)
    return sum(map(bool, out))


def pause_lane(tx: Tx, *, lane_id: str, now: datetime) -> None:
    """Pause (idempotent): the tick no longer claims the lane."""
    row = store_lanes.lock_lane(tx, lane_id=lane_id)
    if row is not None and row.paused_at is None:
        store_lanes.update_lane(tx, lane_id=lane_id, values={"paused_at": now}, now=now)


def resume_lane(tx: Tx, *, lane_id: str, now: datetime) -> None:
    """Resume (idempotent): the decision at ``now`` of the paused lane — the instants owed up to
    ``now`` are recorded ``paused`` and none of them runs; the next run is the first instant
    after ``now``."""
    row = store_lanes.lock_lane(tx, lane_id=lane_id)
    if row is None or row.paused_at is None:
        return
    values: dict[str, object] = {"paused_at": None}
    following = row.next_fire_at
    if row.cron is not None and following is not None and following <= now:
        timing = LaneSchedule(lane_id, row.cron, row.timezone).timing(paused=True)
        values["next_fire_at"] = resume_decision(tx, timing, State(following), now).next_due_at
    store_lanes.update_lane(tx, lane_id=lane_id, values=values, now=now)


# --- what the pass would do: the dry run and the next fires ----------------------------------


@dataclass(frozen=True, slots=True)
class _Due:
    """What a tick at an instant does with one lane: its fires and skips, page after page."""

    fires: tuple[datetime, ...]
    skips: tuple[SkipRange, ...]
    next_fire_at: datetime | None


def _due(lane: LaneSpec, row: StoredLane | None, at: datetime) -> _Due | None:
    """The pass at ``at`` after its sync (None: the lane is paused)."""
    synced = _synced(lane, row, at)
    if row is not None and row.paused_at is not None:
        return None
    following = row.next_fire_at if row is not None else None
    if synced is not None:
        following = synced.get("next_fire_at", following)
    fires: list[datetime] = []
    ranges: list[SkipRange] = []
    while following is not None and following <= at:
        decision = _decide(lane, following, at)
        fires += decision.fires
        ranges += decision.skips
        following = decision.next_due_at
    return _Due(tuple(fires), tuple(ranges), following)


def lane_entries(tx: Tx, lanes: Mapping[str, LaneSpec], at: datetime) -> list[dict[str, Any]]:
    """The dry run's entries of the registered scheduled lanes: what a tick at ``at`` fires
    (the pass's own decision, paged as it pages), and why not for the rest."""
    rows = store_lanes.list_lane_rows(tx)
    out: list[dict[str, Any]] = []
    for lane_id in sorted(lanes):
        lane = lanes[lane_id]
        if not lane.cron:
            continue
        entry: dict[str, Any] = {"kind": "lane", "lane_id": lane_id}
        due = _due(lane, rows.get(lane_id), at)
        if due is None:
            out.append(entry | {"status": "skipped", "reason": PAUSED, "runs": 0})
            continue
        skipped = [{"reason": r.reason, "count": r.count} for r in due.skips]
        if due.fires:
            instants = [to_iso(d) for d in due.fires[-10:]]
            fires = {"runs": len(due.fires), "scheduled_for": instants, "skips": skipped}
            out.append(entry | {"status": "fires"} | fires)
        elif skipped:
            reason = due.skips[0].reason
            out.append(entry | {"status": "skipped", "reason": reason, "skips": skipped, "runs": 0})
        else:
            nxt = None if due.next_fire_at is None else to_iso(due.next_fire_at)
            out.append(entry | {"status": NOT_DUE, "reason": NOT_DUE, "next_at": nxt, "runs": 0})
    return out


def lane_next_fires(
    lane: LaneSpec, row: StoredLane | None, *, now: datetime, n: int
) -> list[dict[str, Any]]:
    """The next ``n`` instants the lane runs at (nothing while paused): those a tick at ``now``
    runs (``due``, the latest ``n``), then its instants after ``now`` (``scheduled``)."""
    due = _due(lane, row, now)
    if due is None:
        return []
    zone = lane.zone
    out = [{**instant_view(d, zone), "status": "due"} for d in due.fires[-n:]]
    at = due.next_fire_at
    while len(out) < n and at is not None:
        out.append({**instant_view(at, zone), "status": "scheduled"})
        at = next_instant(lane, at)
    return out


__all__ = [
    "LEDGER_NAMESPACE",
    "PAGE_INSTANTS",
    "fire_due_lanes",
    "lane_entries",
    "lane_next_fires",
    "lane_pass",
    "next_instant",
    "pause_lane",
    "previous_instant",
    "resume_lane",
    "scheduled_window",
    "sync_lanes",
]
