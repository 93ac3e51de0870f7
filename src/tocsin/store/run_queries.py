"""Reading runs: a table's run list, and the counts the metrics and benches read (SPEC §8)."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import ColumnElement, and_, func, literal, null, or_, select

from tocsin import messages
from tocsin.core.model import Run, TriggerFire
from tocsin.store.errors import map_db_errors
from tocsin.store.runs import (
    QUEUE_RUN,
    RUN_COLUMNS,
    RUN_FIELDS,
    RUN_STATUSES,
    TABLE_RUN,
    run_value,
)
from tocsin.store.schema import ACTIVE_STATUSES, runs
from tocsin.store.tx import Tx

RUN_FILTERS = (*RUN_STATUSES, "stuck")
# a page of runs: every column of a run but its row snapshot
LIST_COLUMNS = tuple(
    null().label(name) if name == "payload" else column
    for name, column in zip(RUN_FIELDS, RUN_COLUMNS, strict=True)
)


def stuck_condition(*, now: datetime, stuck_after_s: float) -> ColumnElement[bool]:
    """failed, or running with ``updated_at`` older than ``now - stuck_after_s`` (SPEC §8).

    Said as ``ix_runs_stuck``'s own test (running or failed, in its words and order) and then
    which of those: SQLite matches a partial index whose predicate has more than one term (its
    ``kind <> 'workflow'``, which a statement reading it says beside this, ``QUEUE_RUN``) only
    against whole terms of the statement's WHERE, never against one branch of an OR."""
    stale_before = now - timedelta(seconds=stuck_after_s)
    return and_(
        or_(runs.c.status == _literal("running"), runs.c.status == _literal("failed")),
        or_(runs.c.status == _literal("failed"), runs.c.updated_at < stale_before),
    )


def _literal(status: str) -> ColumnElement[str]:
    """A status word written into the statement, not bound: a planner sees which partial index
    holds the runs it names (``ix_runs_stuck``, ``ix_runs_pending_scope``); SQLite matches a
    partial index's predicate only against literal terms."""
    return literal(status, literal_execute=True)


def count_stuck_runs(tx: Tx, *, now: datetime, stuck_after_s: float) -> int:
    """How many runs match the ``stuck`` filter across every table (the metrics gauge)."""
    stmt = (
        select(func.count())
        .select_from(runs)
        .where(
            stuck_condition(now=now, stuck_after_s=stuck_after_s),
            runs.c.kind == "actions",
            QUEUE_RUN,  # the rest of ix_runs_stuck's predicate: it holds no workflow run
        )
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
    trigger_id: str | None = None,
    record_id: str | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
) -> tuple[list[Run], int]:
    """A table's runs, newest first, optionally filtered by status or ``stuck``, trigger,
    record and creation time (``since`` <= created_at < ``until``); and the total. Their row
    snapshots are not read (``payload`` None): a page of 500 runs of 255 KB records would be
    128 MB; ``runs.get_run`` has it."""
    if status is not None and status not in RUN_FILTERS:
        raise ValueError(messages.run_filter_unknown(status, RUN_FILTERS))
    # TABLE_RUN: the predicate of ix_runs_table_created (a table's runs)
    where: list[ColumnElement[bool]] = [runs.c.table_id == table_id, TABLE_RUN]
    if trigger_id is not None:
        where.append(runs.c.trigger_id == trigger_id)
    if record_id is not None:
        where.append(runs.c.record_id == record_id)
    if since is not None:
        where.append(runs.c.created_at >= since)
    if until is not None:
        where.append(runs.c.created_at < until)
    if status == "stuck":
        where.append(stuck_condition(now=now, stuck_after_s=stuck_after_s))
    elif status is not None:
        where.append(runs.c.status == status)
    total = tx.conn.execute(select(func.count()).select_from(runs).where(*where)).scalar_one()
    stmt = (
        select(*LIST_COLUMNS)
        .where(*where)
        .order_by(runs.c.created_at.desc(), runs.c.id.desc())
        .offset(skip)
        .limit(limit)
    )
    items = [run_value(row) for row in tx.conn.execute(stmt).mappings()]
    return items, int(total)


def has_other_active_run(tx: Tx, *, table_id: str, trigger_id: str, run_id: str) -> bool:
    """True when another clock run of ``trigger_id`` of ``table_id`` is pending or running."""
    stmt = select(runs.c.id).where(
        runs.c.table_id == table_id,
        TABLE_RUN,
        runs.c.trigger_id == trigger_id,
        runs.c.id != run_id,
        runs.c.clock.is_(True),
        runs.c.status.in_(ACTIVE_STATUSES),
    )
    with map_db_errors():
        return tx.conn.execute(stmt.limit(1)).first() is not None


def count_runs(tx: Tx, *, status: str | None = None) -> int:
    """How many table trigger runs exist (with ``status``, when given): benches and drain
    tests read this."""
    stmt = select(func.count()).select_from(runs).where(runs.c.kind == "actions", QUEUE_RUN)
    if status is not None:
        stmt = stmt.where(runs.c.status == _literal(status))
    with map_db_errors():
        return int(tx.conn.execute(stmt).scalar_one())


# a fire of a table trigger is its scheduled run (``source = 'schedule'``): read from ``runs``
# through ``ix_runs_trigger_fires``, no row of its own
_FIRES = runs.c.source == "schedule"


def list_trigger_fires(
    tx: Tx, *, table_id: str, trigger_id: str, skip: int, limit: int
) -> tuple[list[TriggerFire], int]:
    """A table trigger's fires (its scheduled runs), newest scheduled instant first, as
    :class:`TriggerFire` values; and the total."""
    where = (runs.c.table_id == table_id, runs.c.trigger_id == trigger_id, _FIRES, TABLE_RUN)
    total = tx.conn.execute(select(func.count()).select_from(runs).where(*where)).scalar_one()
    stmt = (
        select(
            runs.c.id,
            runs.c.table_id,
            runs.c.trigger_id,
            runs.c.record_id,
            runs.c.identity,
            runs.c.scheduled_for,
            runs.c.created_at,
            runs.c.status,
            runs.c.started_at,
            runs.c.finished_at,
            runs.c.error,
        )
        .where(*where)
        .order_by(runs.c.scheduled_for.desc(), runs.c.id.desc())
        .offset(skip)
        .limit(limit)
    )
    return [_fire_of(r) for r in tx.conn.execute(stmt).mappings()], int(total)


def _fire_of(row: Any) -> TriggerFire:
    return TriggerFire(
        id=row["id"],
        table_id=row["table_id"],
        trigger_id=row["trigger_id"],
        record_id=row["record_id"],
        identity=row["identity"],
        scheduled_for=row["scheduled_for"],
        fired_at=row["created_at"],
        run_id=row["id"],
        run_status=row["status"],
        started_at=row["started_at"],
        finished_at=row["finished_at"],
        error=row["error"],
    )
