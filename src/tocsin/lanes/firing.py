"""Scheduled lane runs: the tick's lane pass (SPEC §14 on the §6/§12 fire path).

Design: each registered lane with a ``schedule`` has one row in ``lanes`` whose ``next_fire_at``
is the next schedule instant to process (anchored at the first tick that sees the lane: nothing
before it is backfilled; a changed cron or zone re-anchors from ``now``). One call, one
transaction:

1. claim the due lane rows of the registered lanes (PostgreSQL ``FOR UPDATE SKIP LOCKED``, SQLite
   ``BEGIN IMMEDIATE``), so several tickers split them;
2. per lane, every instant from ``next_fire_at`` up to ``now`` in order (at most
   ``MAX_CATCH_UP`` per call; the rest next call) — an intake lane does not coalesce missed
   instants, since a skipped window would be data never looked at. The instant ``s`` runs the
   window ``[previous instant, s)``, so consecutive windows share a boundary and never overlap;
3. the identity ``(lane id, s)`` is claimed in the occurrence ledger under the namespace
   ``"lane"`` in the same transaction as the admission of its run: an instant is processed once
   whatever the number of tickers (an identity not returned was processed already);
4. the admission (overlap and duplicate checks, attempt allocation) leaves a proceeding attempt
   ``pending``; ``work`` asks the source and records the contract — a tick never waits for it;
5. ``next_fire_at`` moves to the first instant after the last one processed.

Returns the number of scheduled attempts recorded.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta

from tocsin.core.contract.lane import Window
from tocsin.core.time import cron
from tocsin.lanes.admit import admit, resolve_run
from tocsin.lanes.definition import Lane
from tocsin.store import lanes as store_lanes
from tocsin.store.ledger import claim_occurrences
from tocsin.store.tx import Store, Tx

LEDGER_NAMESPACE = "lane"
MAX_CATCH_UP = 24
REPEATED: cron.Repeated = "first"
_TICK = timedelta(microseconds=1)


def next_instant(lane: Lane, after: datetime) -> datetime | None:
    """The lane's first schedule instant strictly after ``after``."""
    spec = cron.parse(str(lane.cron), dialect="extended")
    return cron.next_after(spec, after, tz=lane.zone, repeated=REPEATED)


def previous_instant(lane: Lane, before: datetime) -> datetime | None:
    """The lane's last schedule instant strictly before ``before``."""
    spec = cron.parse(str(lane.cron), dialect="extended")
    return cron.prev_at_or_before(spec, before - _TICK, tz=lane.zone, repeated=REPEATED)


def scheduled_window(lane: Lane, scheduled_for: datetime) -> Window | None:
    """``[previous instant, scheduled_for)``; None when no earlier instant exists."""
    start = previous_instant(lane, scheduled_for)
    return None if start is None else Window(start, scheduled_for)


def sync_lanes(store: Store, lanes: Mapping[str, Lane], *, now: datetime) -> None:
    """Insert the rows of new scheduled lanes; re-anchor those whose cron or zone changed."""
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
    """Admit the due scheduled runs of the registered lanes (module docstring)."""
    scheduled = [lane_id for lane_id, lane in lanes.items() if lane.cron]
    if not scheduled:
        return 0
    recorded = 0
    with store.begin() as tx:
        rows = store_lanes.claim_due_lanes(tx, now=now, lane_ids=scheduled, limit=len(scheduled))
        for row in rows:
            lane = lanes[row["id"]]
            instant: datetime | None = row["next_fire_at"]
            fired = 0
            while instant is not None and instant <= now and fired < MAX_CATCH_UP:
                recorded += _fire(tx, lane, instant, now, stale_after_s)
                fired += 1
                instant = next_instant(lane, instant)
            store_lanes.update_lane(tx, lane_id=lane.id, values={"next_fire_at": instant}, now=now)
    return recorded


def _fire(tx: Tx, lane: Lane, instant: datetime, now: datetime, stale_after_s: float) -> int:
    window = scheduled_window(lane, instant)
    if window is None:
        return 0
    run, _ = resolve_run(tx, lane.id, lane.zone, instant, window, lane.policy_version)
    claim = (LEDGER_NAMESPACE, lane.id, instant.isoformat(), run)
    if not claim_occurrences(tx, claims=[claim], now=now):
        return 0
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
    )
    return 1


__all__ = [
    "LEDGER_NAMESPACE",
    "MAX_CATCH_UP",
    "fire_due_lanes",
    "next_instant",
    "previous_instant",
    "scheduled_window",
    "sync_lanes",
]
