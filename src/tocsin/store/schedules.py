"""Workflow schedules and their fire history (SPEC §12).

Named statements only; the rules live in ``tocsin.workflows``. Claiming due rows:

- PostgreSQL: ``SELECT … FOR UPDATE SKIP LOCKED`` — a row another scheduler is firing is skipped,
  so several scheduler processes split the due rows between them;
- SQLite: the caller holds ``store.begin()`` (one writer at a time).

Either way the occurrence ledger stays the fence: an instant claimed once is never fired again.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import RowMapping, and_, delete, func, select, update

from tocsin.core.model import DueSchedule, ScheduleFire, WorkflowActivity, WorkflowSchedule
from tocsin.core.schedules.tree import subscription_keys
from tocsin.store.bulk import (
    driver_rows,
    instant_binder,
    instant_reader,
    update_rows,
    with_columns,
)
from tocsin.store.dialects import keyed_access_only, upsert_insert
from tocsin.store.jsontext import json_value
from tocsin.store.schema import runs, schedule_fires, workflow_schedules
from tocsin.store.tx import Tx
from tocsin.store.workflow_runs import IS_WORKFLOW, column_values

S = workflow_schedules
F = schedule_fires
PAYLOAD = ("input_data", "initial_state", "request_context", "metadata")


def schedule_value(row: RowMapping) -> WorkflowSchedule:
    """A stored row as a :class:`WorkflowSchedule`: the one place a schedule value is built."""
    return WorkflowSchedule(
        id=row["id"],
        workflow_id=row["workflow_id"],
        cron=row["cron"],
        timezone=row["timezone"],
        overlap=row["overlap"],
        catch_up=row["catch_up"],
        max_catch_up=row["max_catch_up"],
        input_data=row["input_data"],
        initial_state=row["initial_state"],
        request_context=row["request_context"],
        next_fire_at=row["next_fire_at"],
        paused_at=row["paused_at"],
        trigger_tree=row["trigger_tree"],
        source=row["source"],
        metadata=row["meta"],
        last_fire_id=row["last_fire_id"],
        created_at=row["created_at"],
        updated_at=row["updated_at"],
        latches=row["latches"],
        evaluated_at=row["evaluated_at"],
    )


def _values(values: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(values)
    if "metadata" in out:
        out["meta"] = out.pop("metadata")
    if "trigger_tree" in out:  # the events its writers test before writing one (§13)
        out["trigger_keys"] = subscription_keys(out["trigger_tree"])
    return out


def insert_schedule(tx: Tx, *, values: Mapping[str, Any]) -> bool:
    """Insert one schedule row (``values`` names every column; ``metadata`` for ``meta``);
    False when a row with its id exists already (``ON CONFLICT DO NOTHING``: two processes
    syncing at once on PostgreSQL, the second waits for the first and inserts nothing)."""
    tx.require_writable()
    stmt = (
        upsert_insert(tx, S)
        .values(**_values(values))
        .on_conflict_do_nothing(index_elements=["id"])
        .returning(S.c.id)
    )
    return tx.conn.execute(stmt).scalar_one_or_none() is not None


def get_schedule(tx: Tx, *, schedule_id: str, for_update: bool = False) -> WorkflowSchedule | None:
    stmt = select(S).where(S.c.id == schedule_id)
    if for_update and tx.is_postgres:
        stmt = stmt.with_for_update()
    row = tx.conn.execute(stmt).mappings().first()
    return schedule_value(row) if row is not None else None


def list_schedules(
    tx: Tx, *, workflow_id: str | None, skip: int, limit: int
) -> tuple[list[WorkflowSchedule], int]:
    """Schedules ordered by id, optionally of one workflow; and the total."""
    where = [] if workflow_id is None else [S.c.workflow_id == workflow_id]
    total = tx.conn.execute(select(func.count()).select_from(S).where(*where)).scalar_one()
    stmt = select(S).where(*where).order_by(S.c.id).offset(skip).limit(limit)
    return [schedule_value(r) for r in tx.conn.execute(stmt).mappings()], int(total)


def declared_schedules(tx: Tx) -> list[WorkflowSchedule]:
    """Every schedule declared in code (``source = 'declared'``), locked for the sync."""
    stmt = select(S).where(S.c.source == "declared").order_by(S.c.id)
    if tx.is_postgres:
        stmt = stmt.with_for_update()
    return [schedule_value(r) for r in tx.conn.execute(stmt).mappings()]


def imperative_schedules(
    tx: Tx, *, workflow_ids: Iterable[str] | None = None, for_update: bool = False
) -> list[WorkflowSchedule]:
    """The imperative schedules (``source = 'imperative'``), of ``workflow_ids`` only when
    given, ordered by workflow then id; locked with ``for_update`` (IaC apply, SPEC §11)."""
    where = [S.c.source == "imperative"]
    if workflow_ids is not None:
        where.append(S.c.workflow_id.in_(list(workflow_ids)))
    stmt = select(S).where(*where).order_by(S.c.workflow_id, S.c.id)
    if for_update and tx.is_postgres:
        stmt = stmt.with_for_update()
    return [schedule_value(r) for r in tx.conn.execute(stmt).mappings()]


def update_schedule(tx: Tx, *, schedule_id: str, values: Mapping[str, Any], now: datetime) -> bool:
    """Set ``values`` on one schedule; True when it exists."""
    tx.require_writable()
    stmt = update(S).where(S.c.id == schedule_id).values(**_values(values), updated_at=now)
    return tx.conn.execute(stmt).rowcount == 1


def delete_schedule(tx: Tx, *, schedule_id: str) -> bool:
    """Delete one schedule row (its fire history stays); True when it existed."""
    tx.require_writable()
    return tx.conn.execute(delete(S).where(S.c.id == schedule_id)).rowcount == 1


_DUE_COLUMNS = (
    "id",
    "workflow_id",
    "cron",
    "timezone",
    "overlap",
    "catch_up",
    "max_catch_up",
    "input_data",
    "initial_state",
    "request_context",
    "next_fire_at",
)
_DUE_JSON = frozenset(("input_data", "initial_state", "request_context"))


def claim_due_schedules(
    tx: Tx,
    *,
    now: datetime,
    limit: int,
    only: str | None = None,
    skip: Sequence[str] = (),
    claimed: list[str] | None = None,
) -> list[DueSchedule]:
    """Up to ``limit`` unpaused plain cron schedules with ``next_fire_at <= now``, earliest
    first, locked, as :class:`DueSchedule` values (what firing reads, from the driver's plain
    rows).

    The JSON columns are decoded once per distinct text in the page: schedules share inputs
    (every imperative schedule of one workflow without one has ``{}``), so the rows of a page
    holding one text hold one value, read-only as the rows are.

    Only the schedule ``only`` when given, none of ``skip``: filters of the claim statement,
    which still reads ``ix_workflow_schedules_due`` in its order. The id of each row claimed is
    appended to ``claimed`` (when given) as the rows are read, before any column is decoded.

    PostgreSQL: ``FOR UPDATE SKIP LOCKED`` (rows another scheduler holds are skipped); SQLite:
    call inside ``store.begin()``.
    """
    tx.require_writable()
    mark = "%s" if tx.is_postgres else "?"
    params: list[Any] = [instant_binder(tx)(now)]
    extra = ""
    if only is not None:
        extra += f" AND id = {mark}"
        params.append(only)
    if skip:  # one parameter however many: an array; SQLite, a JSON list read as a set
        if tx.is_postgres:
            extra += " AND id <> ALL(%s)"
            params.append(list(skip))
        else:
            extra += " AND id NOT IN (SELECT value FROM json_each(?))"
            params.append(json.dumps(list(skip)))
    sql = (
        f"SELECT {_DUE_SELECT} FROM workflow_schedules"
        f" WHERE paused_at IS NULL AND next_fire_at IS NOT NULL AND next_fire_at <= {mark}"
        f" AND trigger_tree IS NULL{extra}"  # compound triggers: tocsin.engine.trees
        f" ORDER BY next_fire_at, id LIMIT {mark}"
    )
    if tx.is_postgres:
        sql += " FOR UPDATE SKIP LOCKED"
        keyed_access_only(tx)  # the page in ix_workflow_schedules_due's order, none sorted
    found = list(driver_rows(tx.conn.exec_driver_sql(sql, (*params, limit))))
    if claimed is not None:
        claimed += [row[0] for row in found]
    instant = instant_reader()
    values: dict[str | None, Any] = {None: None}  # JSON text → its value, one per page

    def value(text: str | None) -> Any:
        if text in values:
            return values[text]
        decoded = values[text] = json_value(text)
        return decoded

    return [
        DueSchedule(
            sid,
            workflow_id,
            cron,
            zone,
            overlap,
            catch_up,
            max_catch_up,
            value(input_data),
            value(initial_state),
            value(request_context),
            instant(next_fire_at),
            None,  # the claim reads unpaused rows only
            None,  # and plain cron ones
        )
        for (
            sid,
            workflow_id,
            cron,
            zone,
            overlap,
            catch_up,
            max_catch_up,
            input_data,
            initial_state,
            request_context,
            next_fire_at,
        ) in found
    ]


_DUE_SELECT = ", ".join(  # JSON read as its text on PostgreSQL too, decoded by json_value
    f"CAST({n} AS text)" if n in _DUE_JSON else n for n in _DUE_COLUMNS
)


def advance_schedules(
    tx: Tx,
    *,
    ids: Sequence[str],
    next_fire_at: Sequence[datetime | None],
    fire_ids: Sequence[str | None],
    now: datetime,
) -> None:
    """Move each schedule's ``next_fire_at`` (three columns, a schedule's values at one index:
    its id, its next fire, and the id of the fire just recorded, kept as ``last_fire_id``, or
    None), set-based."""
    tx.require_writable()
    bind = instant_binder(tx)
    stamps = [bind(now)] * len(ids)
    rows = list(zip(ids, map(bind, next_fire_at), stamps, fire_ids, strict=True))
    update_rows(
        tx,
        (("sid", "text"), ("n", "timestamp"), ("t", "timestamp"), ("f", "text")),
        "UPDATE workflow_schedules SET next_fire_at = v.n, updated_at = v.t,"
        " last_fire_id = COALESCE(v.f, workflow_schedules.last_fire_id)"
        " FROM v WHERE workflow_schedules.id = v.sid",
        rows,
        "UPDATE workflow_schedules SET next_fire_at = ?2, updated_at = ?3,"
        " last_fire_id = COALESCE(?4, last_fire_id) WHERE id = ?1",
    )


_FIRE_COLUMNS = tuple(c.name for c in F.c)
_FIRE_INSTANTS = frozenset(("scheduled_for", "fired_at"))


def insert_fires(tx: Tx, *, fires: Sequence[Mapping[str, Any]]) -> None:
    """Record fire rows (``id, schedule_id, workflow_id, scheduled_for, fired_at, run_id,
    publish_status, error``): one driver statement (``bulk.with_columns``)."""
    tx.require_writable()
    if not fires:
        return
    bind = instant_binder(tx)
    columns = column_values(fires, _FIRE_COLUMNS, {n: bind for n in _FIRE_INSTANTS})
    names = ", ".join(_FIRE_COLUMNS)
    select_ = ", ".join(f"c_{n}" for n in _FIRE_COLUMNS)
    body = f"INSERT INTO schedule_fires ({names}) SELECT {select_} FROM v"
    with_columns(tx, _FIRE_KINDS, body, columns)


_FIRE_KINDS = tuple(
    (f"c_{n}", "timestamp" if n in _FIRE_INSTANTS else "text") for n in _FIRE_COLUMNS
)


def _fire_select() -> Any:
    return select(F, runs.c.status.label("run_status")).select_from(
        F.outerjoin(runs, and_(runs.c.id == F.c.run_id, IS_WORKFLOW))
    )


def fire_value(row: RowMapping) -> ScheduleFire:
    """A fire with its run's status, ``pending`` while the run row is not visible: the one place
    a fire value is built."""
    status = row["run_status"]
    if row["publish_status"] == "publish_failed":
        status = None
    elif status is None:
        status = "pending"
    return ScheduleFire(
        id=row["id"],
        schedule_id=row["schedule_id"],
        workflow_id=row["workflow_id"],
        scheduled_for=row["scheduled_for"],
        fired_at=row["fired_at"],
        run_id=row["run_id"],
        publish_status=row["publish_status"],
        error=row["error"],
        run_status=status,
    )


def list_fires(
    tx: Tx, *, schedule_id: str, skip: int, limit: int
) -> tuple[list[ScheduleFire], int]:
    """A schedule's fires, newest scheduled instant first; and the total."""
    where = F.c.schedule_id == schedule_id
    total = tx.conn.execute(select(func.count()).select_from(F).where(where)).scalar_one()
    order = (F.c.scheduled_for.desc(), F.c.id.desc())
    # the page's ids first (the index alone), then the run status of those rows only: a deep
    # page never joins the rows it skips
    page = select(F.c.id).where(where).order_by(*order).offset(skip).limit(limit)
    stmt = _fire_select().where(F.c.id.in_(page.scalar_subquery())).order_by(*order)
    return [fire_value(r) for r in tx.conn.execute(stmt).mappings()], int(total)


def fires_by_id(tx: Tx, *, fire_ids: Iterable[str]) -> dict[str, ScheduleFire]:
    """Fires by id (each schedule's ``last_fire``)."""
    wanted = sorted({i for i in fire_ids if i})
    if not wanted:
        return {}
    stmt = _fire_select().where(F.c.id.in_(wanted))
    return {r["id"]: fire_value(r) for r in tx.conn.execute(stmt).mappings()}


def count_fires(tx: Tx, *, schedule_id: str | None = None) -> int:
    where = [] if schedule_id is None else [F.c.schedule_id == schedule_id]
    return int(tx.conn.execute(select(func.count()).select_from(F).where(*where)).scalar_one())


def known_workflows(tx: Tx) -> dict[str, WorkflowActivity]:
    """Every workflow id the database holds a schedule or a run of, whether or not its code is
    loaded, with its schedule ids and its runs (``ix_workflow_schedules_workflow``,
    ``ix_runs_workflow_created``: a workflow run's ``trigger_id`` is its workflow)."""
    R = runs
    schedules: dict[str, list[str]] = {}
    for workflow_id, schedule_id in tx.conn.execute(
        select(S.c.workflow_id, S.c.id).order_by(S.c.workflow_id, S.c.id)
    ):
        schedules.setdefault(workflow_id, []).append(schedule_id)
    by_workflow = (
        select(R.c.trigger_id, func.count(), func.max(R.c.created_at))
        .where(IS_WORKFLOW)
        .group_by(R.c.trigger_id)
    )
    counted = {w: (int(count), last) for w, count, last in tx.conn.execute(by_workflow)}
    return {
        w: WorkflowActivity(tuple(schedules.get(w, ())), *counted.get(w, (0, None)))
        for w in (*schedules, *(w for w in counted if w not in schedules))
    }


__all__ = [
    "PAYLOAD",
    "advance_schedules",
    "claim_due_schedules",
    "count_fires",
    "declared_schedules",
    "delete_schedule",
    "fire_value",
    "fires_by_id",
    "get_schedule",
    "imperative_schedules",
    "insert_fires",
    "insert_schedule",
    "known_workflows",
    "list_fires",
    "list_schedules",
    "schedule_value",
    "update_schedule",
]
