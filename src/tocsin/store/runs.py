"""Runs, creation side and reading (SPEC §5.3, §8; DESIGN §5; STYLE F4, R4).

Status machine (stored in ``runs.status``)::

    pending → running → done | failed          (retry: failed | pending | stale running → pending)

``stuck`` is a filter, not a status: failed, or running with ``updated_at`` older than
``stuck_after_s``. Claiming, receipts, finishing and retry live in ``store/execution.py``.

Run dicts: ``id, table_id, trigger_id, record_id, source, clock, status, attempts, error,
action_results (list), payload, definition, identity, scheduled_for, enqueued_at, created_at,
updated_at, started_at, finished_at``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import ColumnElement, RowMapping, and_, bindparam, func, or_, select, text

from tocsin.store.dialects import upsert_insert
from tocsin.store.tables import ONE_ACTIVE_CLOCK_WHERE, runs
from tocsin.store.tx import Tx

RUN_STATUSES = ("pending", "running", "done", "failed")
RUN_FILTERS = (*RUN_STATUSES, "stuck")
# the partial index's predicate as a literal term: SQLite uses a partial index only when the
# query repeats its WHERE terms (bound parameters do not match them)
_ACTIVE_CLOCK = text(ONE_ACTIVE_CLOCK_WHERE)
_HAS_ACTIVE = (
    select(runs.c.id)
    .where(runs.c.trigger_id == bindparam("p_trigger_id", type_=runs.c.trigger_id.type))
    .where(_ACTIVE_CLOCK)
    .limit(1)
)
IN_CHUNK = 500

RUN_FIELDS = (
    "id",
    "table_id",
    "trigger_id",
    "record_id",
    "source",
    "clock",
    "status",
    "attempts",
    "error",
    "action_results",
    "payload",
    "definition",
    "identity",
    "scheduled_for",
    "enqueued_at",
    "created_at",
    "updated_at",
    "started_at",
    "finished_at",
)


def run_dict(row: RowMapping) -> dict[str, Any]:
    """A ``runs`` row as a plain dict (``action_results`` always a list)."""
    out = {name: row[name] for name in RUN_FIELDS}
    out["action_results"] = list(out["action_results"] or [])
    return out


def insert_run(
    tx: Tx,
    *,
    id: str,
    table_id: str,
    trigger_id: str,
    record_id: str | None,
    source: str,
    clock: bool,
    payload: Mapping[str, Any],
    definition: Mapping[str, Any] | None,
    identity: str | None,
    scheduled_for: datetime | None,
    now: datetime,
) -> dict[str, Any] | None:
    """Insert a pending run; None when a clock trigger already has an active run (SPEC §5.3).

    Clock runs go through ``ON CONFLICT (trigger_id) WHERE <uq_runs_one_active_clock predicate>
    DO NOTHING``: the refusal does not abort a PostgreSQL transaction.
    """
    tx.require_writable()
    values: dict[str, Any] = {
        "id": id,
        "table_id": table_id,
        "trigger_id": trigger_id,
        "record_id": record_id,
        "source": source,
        "clock": clock,
        "status": "pending",
        "attempts": 0,
        "error": None,
        "action_results": [],
        "payload": dict(payload),
        "definition": None if definition is None else dict(definition),  # SQL NULL
        "identity": identity,
        "scheduled_for": scheduled_for,
        "created_at": now,
        "updated_at": now,
    }
    row = tx.conn.execute(_insert_run_stmt(tx, clock), values).mappings().one_or_none()
    return None if row is None else run_dict(row)


def _insert_run_stmt(tx: Tx, clock: bool) -> Any:
    """The prebuilt INSERT (values travel as parameters: no statement building per run)."""
    key = (tx.is_postgres, clock)
    stmt = _INSERT_RUN.get(key)
    if stmt is None:
        built = upsert_insert(tx, runs)
        if clock:
            built = built.on_conflict_do_nothing(
                index_elements=["trigger_id"], index_where=text(ONE_ACTIVE_CLOCK_WHERE)
            )
        stmt = _INSERT_RUN[key] = built.returning(*runs.c)
    return stmt


_INSERT_RUN: dict[tuple[bool, bool], Any] = {}


def get_run(tx: Tx, *, run_id: str) -> dict[str, Any] | None:
    """One run by id, or None."""
    row = tx.conn.execute(select(runs).where(runs.c.id == run_id)).mappings().one_or_none()
    return None if row is None else run_dict(row)


def stuck_condition(*, now: datetime, stuck_after_s: float) -> ColumnElement[bool]:
    """failed, or running with ``updated_at`` older than ``now - stuck_after_s`` (SPEC §8)."""
    stale_before = now - timedelta(seconds=stuck_after_s)
    return or_(
        runs.c.status == "failed",
        and_(runs.c.status == "running", runs.c.updated_at < stale_before),
    )


def count_stuck_runs(tx: Tx, *, now: datetime, stuck_after_s: float) -> int:
    """How many runs match the ``stuck`` filter across every table (the metrics gauge)."""
    stmt = (
        select(func.count())
        .select_from(runs)
        .where(stuck_condition(now=now, stuck_after_s=stuck_after_s))
    )
    return int(tx.conn.execute(stmt).scalar_one())


def list_runs(
    tx: Tx,
    *,
    table_id: str,
    status: str | None,
    skip: int,
    limit: int,
    now: datetime,
    stuck_after_s: float,
) -> tuple[list[dict[str, Any]], int]:
    """A table's runs, newest first, optionally filtered by status or ``stuck``; and the total."""
    if status is not None and status not in RUN_FILTERS:
        raise ValueError(f"unknown run status filter {status!r}; expected one of {RUN_FILTERS}")
    where: list[ColumnElement[bool]] = [runs.c.table_id == table_id]
    if status == "stuck":
        where.append(stuck_condition(now=now, stuck_after_s=stuck_after_s))
    elif status is not None:
        where.append(runs.c.status == status)
    total = tx.conn.execute(select(func.count()).select_from(runs).where(*where)).scalar_one()
    stmt = (
        select(runs)
        .where(*where)
        .order_by(runs.c.created_at.desc(), runs.c.id.desc())
        .offset(skip)
        .limit(limit)
    )
    items = [run_dict(row) for row in tx.conn.execute(stmt).mappings()]
    return items, int(total)


def has_active_run(tx: Tx, *, trigger_id: str) -> bool:
    """True while a clock run of ``trigger_id`` is pending or running (SPEC §5.3).

    The same rows ``uq_runs_one_active_clock`` fences: a row-event run that happens to share
    the id (another table's trigger, or the id's earlier row-event definition) does not count.
    The index's own predicate, verbatim, lets both dialects answer from that partial index
    (one probe) instead of scanning every active run: this runs once per due clock trigger.
    """
    return tx.conn.execute(_HAS_ACTIVE, {"p_trigger_id": trigger_id}).first() is not None


def active_trigger_ids(tx: Tx, *, trigger_ids: Iterable[str]) -> set[str]:
    """Which of ``trigger_ids`` have a pending or running clock run (chunked IN)."""
    wanted = sorted(set(trigger_ids))
    found: set[str] = set()
    for start in range(0, len(wanted), IN_CHUNK):
        stmt = (
            select(runs.c.trigger_id)
            .where(
                runs.c.trigger_id.in_(wanted[start : start + IN_CHUNK]),
                _ACTIVE_CLOCK,
            )
            .distinct()
        )
        found.update(tx.conn.execute(stmt).scalars())
    return found


__all__ = [
    "RUN_FILTERS",
    "RUN_STATUSES",
    "active_trigger_ids",
    "get_run",
    "has_active_run",
    "insert_run",
    "list_runs",
    "run_dict",
    "stuck_condition",
]
