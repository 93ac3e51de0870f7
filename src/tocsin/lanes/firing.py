"""Scheduled lane runs: the tick's lane pass (SPEC §14 on the §6/§12 fire path).

Design: each registered lane with a ``schedule`` has one row in ``lanes`` whose ``next_fire_at``
is the next schedule instant to process (anchored at the first tick that sees the lane: nothing
before it is backfilled; a changed cron or zone re-anchors from ``now``). The pass pages until no
registered lane is due, one transaction per page:

1. claim the due, unpaused lane rows of the registered lanes (PostgreSQL ``FOR UPDATE SKIP
   LOCKED``, SQLite ``BEGIN IMMEDIATE``), so several tickers split them;
2. per lane, the pure decision (:func:`tocsin.core.schedules.lane.decide`): which instants run
   over which windows by the lane's ``catch_up`` (``all``: each missed window, at most
   :data:`PAGE_INSTANTS` per page; ``latest``: once over the merged window; ``none``: none
   after downtime), and the skip ranges (``coalesced``, ``dst_gap``) recorded in the same
   transaction;
3. the identity ``(lane id, s)`` is claimed in the occurrence ledger under the namespace
   ``"lane"`` in the same transaction as the admission of its run: an instant is processed once
   whatever the number of tickers (an identity not returned was processed already);
4. the admission (overlap and duplicate checks, attempt allocation) leaves a proceeding attempt
   ``pending``; ``work`` asks the source and records the contract — a tick never waits for it;
5. ``next_fire_at`` moves to the first instant after the last one decided.

A paused lane is not claimed; its resume (:func:`resume_lane`) records the instants owed
meanwhile as ``paused`` skips and moves ``next_fire_at`` past ``now``: none of them runs.

Returns the number of scheduled attempts recorded.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from tocsin.core.contract.lane import Window
from tocsin.core.schedules import lane as lane_schedule
from tocsin.core.schedules.lane import LaneSchedule
from tocsin.engine import fire as fire_path
from tocsin.lanes.admit import admit, resolve_run
from tocsin.lanes.definition import Lane
from tocsin.store import lanes as store_lanes
from tocsin.store import skips as store_skips
from tocsin.store.tx import Store, Tx

LEDGER_NAMESPACE = "lane"
PAGE_INSTANTS = 200  # the runs one lane admits per page (catch_up="all"); the pass pages on


def _timing(lane: Lane) -> LaneSchedule:
    timing = lane.timing
    if timing is None:
        raise ValueError(f"lane {lane.id!r} has no schedule")
    return timing


def next_instant(lane: Lane, after: datetime) -> datetime | None:
    """The lane's first schedule instant strictly after ``after``."""
    return _timing(lane).next_after(after)


def previous_instant(lane: Lane, before: datetime) -> datetime | None:
    """The lane's last schedule instant strictly before ``before``."""
    return _timing(lane).previous_before(before)


def scheduled_window(lane: Lane, scheduled_for: datetime) -> Window | None:
    """``[previous instant, scheduled_for)``; None when no earlier instant exists."""
    return _timing(lane).window(scheduled_for)


def sync_lanes(store: Store, lanes: Mapping[str, Lane], *, now: datetime) -> None:
    """Insert the rows of new scheduled lanes; re-anchor those whose cron or zone changed (a
    paused lane stays paused)."""
    with store.begin() as tx:
        rows = store_lanes.list_lane_rows(tx)
        for lane in lanes.values():
            row = rows.get(lane.id)
            anchor = next_instant(lane, now) if lane.cron else None
            if row is None:
                values = {
                    "id": lane.id,
                    "cron": lane.cron,
                    "timezone": lane.zone,
                    "policy_version": lane.policy_version,
                    "next_fire_at": anchor,
                    "created_at": now,
                    "updated_at": now,
                }
                store_lanes.insert_lane(tx, values=values)
                continue
            timing = (row["cron"], row["timezone"]) != (lane.cron, lane.zone)
            timing = timing or (anchor is not None and row["next_fire_at"] is None)
            if timing or row["policy_version"] != lane.policy_version:
                values = {"policy_version": lane.policy_version}
                if timing:
                    values.update(cron=lane.cron, timezone=lane.zone, next_fire_at=anchor)
                store_lanes.update_lane(tx, lane_id=lane.id, values=values, now=now)


def fire_due_lanes(
    store: Store, lanes: Mapping[str, Lane], *, now: datetime, stale_after_s: float
) -> int:
    """Admit the due scheduled runs of the registered lanes, page after page until none is
    due (module docstring)."""
    scheduled = [lane_id for lane_id, lane in lanes.items() if lane.cron]
    recorded = 0
    while scheduled:
        fired, owing = _page(store, lanes, scheduled, now, stale_after_s)
        recorded += fired
        scheduled = owing
    return recorded


def _page(
    store: Store, lanes: Mapping[str, Lane], lane_ids: list[str], now: datetime, stale: float
) -> tuple[int, list[str]]:
    """One transaction: ``(attempts recorded, the lanes still due after it)``."""
    recorded, owing = 0, []
    with store.begin() as tx:
        rows = store_lanes.claim_due_lanes(tx, now=now, lane_ids=lane_ids, limit=len(lane_ids))
        for row in rows:
            lane = lanes[row["id"]]
            decision = lane_schedule.decide(
                _timing(lane), row["next_fire_at"], now, limit=PAGE_INSTANTS
            )
            for fire in decision.fires:
                recorded += _fire(tx, lane, fire.scheduled_for, fire.window, now, stale)
            store_skips.record_skips(tx, ranges=decision.skips, now=now)
            following = decision.next_fire_at
            values = {"next_fire_at": following}
            store_lanes.update_lane(tx, lane_id=lane.id, values=values, now=now)
            if following is not None and following <= now:
                owing.append(lane.id)
    return recorded, owing


def _fire(
    tx: Tx, lane: Lane, instant: datetime, window: Window, now: datetime, stale_after_s: float
) -> int:
    resolved = resolve_run(tx, lane.id, lane.zone, instant, window, lane.policy_version)
    firing = (LEDGER_NAMESPACE, lane.id, instant.isoformat(), resolved[0])

    def write(claimed: list[int]) -> tuple[str, ...]:
        if claimed:
            admit(
                tx,
                lane,
                kind="scheduled",
                scheduled_for=instant,
                window=window,
                zone=lane.zone,
                now=now,
                stale_after_s=stale_after_s,
                pending=True,
                resolved=resolved,
            )
        return ()

    return sum(map(bool, fire_path.fire(tx, [firing], write, now=now)))


def pause_lane(tx: Tx, *, lane_id: str, now: datetime) -> None:
    """Pause (idempotent): the tick no longer claims the lane."""
    row = store_lanes.lock_lane(tx, lane_id=lane_id)
    if row is not None and row["paused_at"] is None:
        store_lanes.update_lane(tx, lane_id=lane_id, values={"paused_at": now}, now=now)


def resume_lane(tx: Tx, *, lane_id: str, now: datetime) -> None:
    """Resume (idempotent): the instants owed up to ``now`` are recorded ``paused`` and none
    of them runs; the next run is the first instant after ``now``."""
    row = store_lanes.lock_lane(tx, lane_id=lane_id)
    if row is None or row["paused_at"] is None:
        return
    values: dict[str, object] = {"paused_at": None}
    if row["cron"] is not None:
        timing = LaneSchedule(lane_id, row["cron"], row["timezone"])
        ranges = lane_schedule.paused_skips(timing, row["next_fire_at"], now)
        store_skips.record_skips(tx, ranges=ranges, now=now)
        following = row["next_fire_at"]
        if following is not None and following <= now:
            values["next_fire_at"] = timing.next_after(now)
    store_lanes.update_lane(tx, lane_id=lane_id, values=values, now=now)


__all__ = [
    "LEDGER_NAMESPACE",
    "PAGE_INSTANTS",
    "fire_due_lanes",
    "next_instant",
    "pause_lane",
    "previous_instant",
    "resume_lane",
    "scheduled_window",
    "sync_lanes",
]
