"""Lanes, lane runs and lane attempts (SPEC §14). Named statements only; rules in tocsin.lanes.

The fences:

- ``lock_lane``: every admission takes the lane's row lock (PostgreSQL ``FOR UPDATE``; SQLite:
  the caller's ``store.begin()`` is ``BEGIN IMMEDIATE``), so the overlap check, the duplicate
  check and the insert of one lane's runs are serialised across processes;
- ``insert_run``: ``run_id`` is the primary key, inserted ``ON CONFLICT DO NOTHING``;
- ``allocate_attempt``: ``UPDATE … SET attempts = attempts + 1 … RETURNING attempts`` — the row
  lock makes the numbers of one run distinct, and ``(run_id, attempt)`` is unique besides.

An attempt is a run of the one queue (``runs``, kind ``lane``, its id the attempt's): its queue
columns live there only (``state`` is ``runs.status``; ``next_attempt_at``, ``updated_at``), its
contract and outcome in ``lane_attempts``. The functions here take and answer the attempt as one
mapping, with those names, and split each write between the two tables.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import fields
from datetime import datetime
from typing import Any

from sqlalchemy import RowMapping, and_, func, insert, or_, select, update

from tocsin.core.model import LaneAttempt, LaneRun, LaneSummary, StoredLane
from tocsin.store.dialects import upsert_insert
from tocsin.store.schema import APP_RUN_SCOPE, lane_attempts, lane_runs, lanes, runs
from tocsin.store.tx import Tx

L = lanes
R = lane_runs
A = lane_attempts
Q = runs  # an attempt's queue row

# an attempt's columns that are its queue row's (``runs``), by the attempt's name for them
_QUEUE = {"state": Q.c.status, "next_attempt_at": Q.c.next_attempt_at, "updated_at": Q.c.updated_at}
_ATTEMPT = (
    *(c for c in A.c),
    Q.c.status.label("state"),
    Q.c.next_attempt_at,
    Q.c.updated_at,
)
_JOINED = A.join(Q, Q.c.id == A.c.attempt_id)

_LANE_FIELDS = tuple(f.name for f in fields(StoredLane))
_RUN_FIELDS = tuple(f.name for f in fields(LaneRun))
_ATTEMPT_FIELDS = tuple(f.name for f in fields(LaneAttempt))


def lane_value(row: RowMapping) -> StoredLane:
    """A ``lanes`` row as a :class:`StoredLane`: the one place a lane value is built."""
    return StoredLane(**{name: row[name] for name in _LANE_FIELDS})


def lane_run_value(row: RowMapping) -> LaneRun:
    """A ``lane_runs`` row as a :class:`LaneRun`: the one place a lane run value is built."""
    return LaneRun(**{name: row[name] for name in _RUN_FIELDS})


def attempt_value(row: RowMapping) -> LaneAttempt:
    """An attempt row of :func:`_attempt_select` as a :class:`LaneAttempt`: the one place an
    attempt value is built."""
    return LaneAttempt(**{name: row[name] for name in _ATTEMPT_FIELDS})


def insert_lane(tx: Tx, *, values: Mapping[str, Any]) -> bool:
    """Insert a lane row; False when it exists already (``ON CONFLICT DO NOTHING``)."""
    tx.require_writable()
    stmt = (
        upsert_insert(tx, L)
        .values(**values)
        .on_conflict_do_nothing(index_elements=["id"])
        .returning(L.c.id)
    )
    return tx.conn.execute(stmt).scalar_one_or_none() is not None


def lock_lane(tx: Tx, *, lane_id: str) -> StoredLane | None:
    """The lane row, locked for this transaction (PostgreSQL ``FOR UPDATE``)."""
    stmt = select(L).where(L.c.id == lane_id)
    if tx.is_postgres and not tx.readonly:
        stmt = stmt.with_for_update()
    row = tx.conn.execute(stmt).mappings().first()
    return lane_value(row) if row is not None else None


def get_lane(tx: Tx, *, lane_id: str) -> StoredLane | None:
    row = tx.conn.execute(select(L).where(L.c.id == lane_id)).mappings().first()
    return lane_value(row) if row is not None else None


def update_lane(tx: Tx, *, lane_id: str, values: Mapping[str, Any], now: datetime) -> None:
    tx.require_writable()
    tx.conn.execute(update(L).where(L.c.id == lane_id).values(**values, updated_at=now))


def list_lane_rows(tx: Tx) -> dict[str, StoredLane]:
    return {r["id"]: lane_value(r) for r in tx.conn.execute(select(L).order_by(L.c.id)).mappings()}


def claim_due_lanes(
    tx: Tx, *, now: datetime, lane_ids: Sequence[str], limit: int
) -> list[StoredLane]:
    """Up to ``limit`` unpaused ones of ``lane_ids`` with ``next_fire_at <= now``, earliest
    first, locked.

    PostgreSQL: ``FOR UPDATE SKIP LOCKED`` (a lane another ticker holds is skipped); SQLite: call
    inside ``store.begin()``.
    """
    tx.require_writable()
    stmt = (
        select(L)
        .where(
            L.c.id.in_(list(lane_ids)),
            L.c.paused_at.is_(None),
            L.c.next_fire_at.is_not(None),
            L.c.next_fire_at <= now,
        )
        .order_by(L.c.next_fire_at, L.c.id)
        .limit(limit)
    )
    if tx.is_postgres:
        stmt = stmt.with_for_update(skip_locked=True)
    return [lane_value(r) for r in tx.conn.execute(stmt).mappings()]


def get_run(tx: Tx, *, run_id: str) -> LaneRun | None:
    row = tx.conn.execute(select(R).where(R.c.run_id == run_id)).mappings().first()
    return lane_run_value(row) if row is not None else None


def find_run(
    tx: Tx,
    *,
    lane_id: str,
    scheduled_for: datetime,
    start: datetime,
    end: datetime,
    policy_version: str,
) -> LaneRun | None:
    """The run recorded for ``(lane, scheduled_for, window, policy version)`` whatever formula
    its ``run_id`` was made with (``ix_lane_runs_window``: ``admitted`` is listed so the index's
    prefix serves both); an admitted one first, then the oldest."""
    stmt = (
        select(R)
        .where(
            R.c.lane_id == lane_id,
            R.c.admitted.in_((True, False)),
            R.c.window_start == start,
            R.c.window_end == end,
            R.c.scheduled_for == scheduled_for,
            R.c.policy_version == policy_version,
        )
        .order_by(R.c.admitted.desc(), R.c.created_at, R.c.run_id)
        .limit(1)
    )
    row = tx.conn.execute(stmt).mappings().first()
    return lane_run_value(row) if row is not None else None


def insert_run(tx: Tx, *, values: Mapping[str, Any]) -> bool:
    """Insert a run; False when its ``run_id`` is recorded already."""
    tx.require_writable()
    stmt = (
        upsert_insert(tx, R)
        .values(**values)
        .on_conflict_do_nothing(index_elements=["run_id"])
        .returning(R.c.run_id)
    )
    return tx.conn.execute(stmt).scalar_one_or_none() is not None


def overlapping_run(
    tx: Tx, *, lane_id: str, start: datetime, end: datetime, other_than: str
) -> LaneRun | None:
    """An admitted run of the lane, other than ``other_than``, whose ``[start, end)`` overlaps
    (``ix_lane_runs_window``)."""
    stmt = (
        select(R)
        .where(
            R.c.lane_id == lane_id,
            R.c.admitted.is_(True),
            R.c.window_start < end,
            R.c.window_end > start,
            R.c.run_id != other_than,
        )
        .order_by(R.c.window_start)
        .limit(1)
    )
    row = tx.conn.execute(stmt).mappings().first()
    return lane_run_value(row) if row is not None else None


def allocate_attempt(tx: Tx, *, run_id: str) -> int:
    """The run's next attempt number (atomic: the row lock orders concurrent callers).
    ``updated_at`` is left alone: it dates the run's progress, which a duplicate trigger is not
    (a stream of duplicates must not keep a stalled run looking fresh)."""
    tx.require_writable()
    stmt = (
        update(R)
        .where(R.c.run_id == run_id)
        .values(attempts=R.c.attempts + 1)
        .returning(R.c.attempts)
    )
    return int(tx.conn.execute(stmt).scalar_one())


def update_run(tx: Tx, *, run_id: str, values: Mapping[str, Any], now: datetime) -> None:
    tx.require_writable()
    tx.conn.execute(update(R).where(R.c.run_id == run_id).values(**values, updated_at=now))


def insert_attempt(tx: Tx, *, values: Mapping[str, Any]) -> None:
    """Insert an attempt and its queue row (``state``: its status; ``pending``: for a worker,
    ``running``: the caller executes it, ``recorded``: decided at admission)."""
    tx.require_writable()
    queue, detail = _split(values)
    status = queue.get("state", "pending")
    tx.conn.execute(
        insert(Q).values(
            id=detail["attempt_id"],
            kind="lane",
            table_id="",
            trigger_id=detail["lane_id"],
            source="lane",
            clock=False,
            status=status,
            attempts=0 if status == "pending" else 1,
            action_results=[],
            payload={},
            created_at=detail["created_at"],
            updated_at=queue.get("updated_at", detail["created_at"]),
            started_at=None if status == "pending" else detail["created_at"],
            # the instant its run is for: attempts one tick admitted run in that order
            scheduled_for=select(R.c.scheduled_for)
            .where(R.c.run_id == detail["run_id"])
            .scalar_subquery(),
            next_attempt_at=queue.get("next_attempt_at"),
            scope=APP_RUN_SCOPE,
        )
    )
    tx.conn.execute(insert(A).values(**detail))
    tx.wake_workers(status == "pending")


def _split(values: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """An attempt's values as its queue row's (by the attempt's names) and its own."""
    queue = {k: v for k, v in values.items() if k in _QUEUE}
    return queue, {k: v for k, v in values.items() if k not in _QUEUE}


def _attempt_select() -> Any:
    """Attempts (with their queue row's state) and their run's instants (known before the
    contract is)."""
    instants = (R.c.scheduled_for, R.c.window_start, R.c.window_end, R.c.zone)
    return select(*_ATTEMPT, *instants).select_from(_JOINED.join(R, R.c.run_id == A.c.run_id))


def get_attempt(tx: Tx, *, attempt_id: str) -> LaneAttempt | None:
    stmt = _attempt_select().where(A.c.attempt_id == attempt_id)
    row = tx.conn.execute(stmt).mappings().first()
    return attempt_value(row) if row is not None else None


def finish_attempt(tx: Tx, *, attempt_id: str, values: Mapping[str, Any], now: datetime) -> None:
    """Write an attempt's ``values`` (its queue row's ``state`` and ``next_attempt_at`` there,
    the rest on the attempt); its queue row's ``updated_at`` is ``now``, and a final state is
    its ``finished_at``."""
    tx.require_writable()
    queue, detail = _split(values)
    moved: dict[str, Any] = {"updated_at": now}
    if "state" in queue:
        moved["status"] = queue["state"]
        if queue["state"] in ("recorded", "failed"):
            moved["finished_at"] = now
    if "next_attempt_at" in queue:
        moved["next_attempt_at"] = queue["next_attempt_at"]
    tx.conn.execute(update(Q).where(Q.c.id == attempt_id).values(**moved))
    if detail:
        tx.conn.execute(update(A).where(A.c.attempt_id == attempt_id).values(**detail))


def supersede_attempts(tx: Tx, *, run_id: str, error: str, now: datetime) -> int:
    """A retry took over the run: its attempts still ``pending`` / ``running`` → ``failed``
    (a superseded pending attempt is never claimed)."""
    tx.require_writable()
    live = select(A.c.attempt_id).where(A.c.run_id == run_id)
    stmt = (
        update(Q)
        .where(Q.c.id.in_(live), Q.c.status.in_(("pending", "running")))
        .values(status="failed", updated_at=now, finished_at=now)
        .returning(Q.c.id)
    )
    ids = [str(r[0]) for r in tx.conn.execute(stmt)]
    if ids:
        tx.conn.execute(update(A).where(A.c.attempt_id.in_(ids)).values(error=error))
    return len(ids)


def run_attempt_outcomes(tx: Tx, *, run_id: str) -> list[tuple[str | None, Any]]:
    """``(handler_status, alert)`` of every attempt of a run (its retries and alerts count)."""
    stmt = select(A.c.handler_status, A.c.alert).where(A.c.run_id == run_id)
    return [(r[0], r[1]) for r in tx.conn.execute(stmt)]


def list_attempts(
    tx: Tx, *, lane_id: str, decision: str | None, skip: int, limit: int
) -> tuple[list[LaneAttempt], int]:
    """A lane's attempts newest first (optionally of one decision status), and the total."""
    where = [A.c.lane_id == lane_id]
    if decision is not None:
        where.append(A.c.decision_status == decision)
    total = tx.conn.execute(select(func.count()).select_from(A).where(*where)).scalar_one()
    stmt = (
        _attempt_select()
        .where(*where)
        .order_by(A.c.created_at.desc(), A.c.run_id, A.c.attempt.desc())
        .offset(skip)
        .limit(limit)
    )
    return [attempt_value(r) for r in tx.conn.execute(stmt).mappings()], int(total)


def list_fires(tx: Tx, *, lane_id: str, skip: int, limit: int) -> tuple[list[LaneAttempt], int]:
    """A lane's scheduled attempts (its fires) with their run's instants, newest scheduled
    instant first; and how many there are."""
    where = (A.c.lane_id == lane_id, A.c.kind == "scheduled")
    total = tx.conn.execute(select(func.count()).select_from(A).where(*where)).scalar_one()
    stmt = (
        _attempt_select()
        .where(*where)
        .order_by(R.c.scheduled_for.desc(), A.c.attempt.desc(), A.c.attempt_id)
        .offset(skip)
        .limit(limit)
    )
    return [attempt_value(r) for r in tx.conn.execute(stmt).mappings()], int(total)


def lane_summaries(tx: Tx, *, lane_id: str | None = None) -> dict[str, LaneSummary]:
    """Per lane (or of ``lane_id`` alone): the number of attempts, per decision
    (``decisions``: status → count, attempts without a decision yet left out) and the newest
    attempt's decision and time."""
    counts = select(
        A.c.lane_id,
        A.c.decision_status,
        func.count().label("n"),
        func.max(A.c.created_at).label("last"),
    ).group_by(A.c.lane_id, A.c.decision_status)
    if lane_id is not None:
        counts = counts.where(A.c.lane_id == lane_id)
    out: dict[str, dict[str, Any]] = {}
    for row in tx.conn.execute(counts).mappings():
        info = out.setdefault(row["lane_id"], {"attempts": 0, "last_at": None, "decisions": {}})
        info["attempts"] += int(row["n"])
        if info["last_at"] is None or row["last"] > info["last_at"]:
            info["last_at"] = row["last"]
        if row["decision_status"] is not None:
            info["decisions"][row["decision_status"]] = int(row["n"])
    if not out:
        return {}
    newest = select(A.c.lane_id, A.c.decision_status, Q.c.status.label("state"))
    newest = newest.select_from(_JOINED).where(
        or_(
            *(
                and_(A.c.lane_id == lane, A.c.created_at == info["last_at"])
                for lane, info in out.items()
            )
        )
    )
    for row in tx.conn.execute(newest).mappings():
        out[row["lane_id"]]["last_decision"] = row["decision_status"]
        out[row["lane_id"]]["last_state"] = row["state"]
    return {
        lane: LaneSummary(
            attempts=info["attempts"],
            decisions=info["decisions"],
            last_at=info["last_at"],
            last_decision=info.get("last_decision"),
            last_state=info.get("last_state"),
        )
        for lane, info in out.items()
    }


__all__ = [
    "allocate_attempt",
    "attempt_value",
    "claim_due_lanes",
    "find_run",
    "finish_attempt",
    "get_attempt",
    "get_lane",
    "get_run",
    "insert_attempt",
    "insert_lane",
    "insert_run",
    "lane_run_value",
    "lane_summaries",
    "lane_value",
    "list_attempts",
    "list_fires",
    "list_lane_rows",
    "lock_lane",
    "overlapping_run",
    "run_attempt_outcomes",
    "supersede_attempts",
    "update_lane",
    "update_run",
]
