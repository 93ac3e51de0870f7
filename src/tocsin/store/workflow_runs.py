"""Workflow runs: insert, read, persist step receipts, finish (SPEC §12).

A workflow run is a row of the one run table ``runs``, kind ``workflow`` (migration 0035): its
own columns there, and the shared ones under a workflow run's names (:data:`COLUMN_OF`): its
workflow is ``trigger_id``, its trigger word ``source``, its step receipts ``action_results``,
its end ``finished_at``; its ``scope`` is ``app/wf:<workflow>[/<schedule>]`` (the one claim's turn
and limit key, :func:`workflow_scope`). Every statement here says ``kind = 'workflow'`` in SQL
text, so both planners match the workflow runs' partial indexes (``ix_runs_workflow_status``:
past pending, ``_created``, ``_schedule``); of the other kinds' indexes only the claim's
``ix_runs_pending_scope`` holds one, while pending (0036). A run's finish is every kind's
(``store.runs.finish_runs``, from :func:`finish_row`), which says the kind too when all its runs
are workflow runs.

A read answers :class:`~tocsin.core.model.WorkflowRun` values (:func:`workflow_run_value`).
Workflow runs are claimed with every other kind by the one claim (``store.runs``: ``pending →
running`` with ``attempts + 1``); every write after a claim is fenced by ``(status = 'running',
attempts)``: a run canceled meanwhile is never written back to another status.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from datetime import datetime
from operator import itemgetter
from typing import Any

from sqlalchemy import ColumnElement, func, literal_column, select, update

from tocsin.core.model import WORKFLOW_RUN_FIELDS, WorkflowRun
from tocsin.store.bulk import (
    instant_binder,
    with_columns,
)
from tocsin.store.jsontext import json_text
from tocsin.store.runs import FinishRow
from tocsin.store.schema import (
    WORKFLOW_ACTIVE_WHERE,
    WORKFLOW_KIND,
    WORKFLOW_SCOPE_PREFIX,
    WORKFLOW_WHERE,
    runs,
)
from tocsin.store.tx import Tx

R = runs
RUN_STATUSES = ("pending", "running", "success", "failed", "suspended", "canceled")

# a workflow run's fields (:class:`WorkflowRun`'s, in order), and the column of ``runs`` of each
# one named otherwise there
FIELDS = WORKFLOW_RUN_FIELDS
COLUMN_OF = {
    "workflow_id": "trigger_id",
    "trigger": "source",
    "steps": "action_results",
    "ended_at": "finished_at",
}
IS_WORKFLOW: ColumnElement[bool] = R.c.kind == literal_column(repr(WORKFLOW_KIND))
"""``runs.kind = 'workflow'`` as SQL text: the predicate of the workflow runs' indexes."""
HELD: ColumnElement[bool] = R.c.status != literal_column("'pending'")
"""``runs.status <> 'pending'`` as SQL text: with :data:`IS_WORKFLOW`, the predicate of
``ix_runs_workflow_status`` (``schema.WORKFLOW_HELD_WHERE``), said by a statement that reads it
for a status past pending (SQLite matches a partial index by its WHERE's own terms)."""


def _of_status(status: str) -> list[ColumnElement[bool]]:
    """A workflow run of ``status``: past pending, through ``ix_runs_workflow_status``."""
    return [IS_WORKFLOW, R.c.status == status] + ([] if status == "pending" else [HELD])


SELECTED = tuple(R.c[COLUMN_OF.get(n, n)].label(n) for n in FIELDS)
"""What a read of a workflow run selects: every field, under its workflow name."""


def column(name: str) -> Any:
    """The column of ``runs`` that holds a workflow run's field ``name``."""
    return R.c[COLUMN_OF.get(name, name)]


def columns_of(values: Mapping[str, Any]) -> dict[str, Any]:
    """``values`` by a workflow run's field names, keyed by their columns of ``runs``."""
    return {COLUMN_OF.get(name, name): value for name, value in values.items()}


def workflow_run_value(row: Mapping[Any, Any]) -> WorkflowRun:
    """A workflow run's row as :data:`SELECTED` reads it (JSON decoded, instants aware) as a
    :class:`WorkflowRun`, ``steps`` always a list: the one place a workflow run value is
    built."""
    values = dict(row)
    values["steps"] = list(values["steps"] or [])
    return WorkflowRun(**values)


JSON_COLUMNS = frozenset(  # the JSON columns
    (
        "input",
        "output",
        "steps",
        "initial_state",
        "request_context",
        "suspend_payload",
        "resume_data",
        "alert",
    )
)
_INSTANT_COLUMNS = frozenset(
    ("scheduled_for", "created_at", "updated_at", "started_at", "ended_at", "next_attempt_at")
)
# columns a new run's row may leave out (the rows of ``new_run`` predate them)
_FRESH: dict[str, Any] = {"attempt": 1, "next_attempt_at": None, "alert": None}
_INSERT_COLUMNS = FIELDS
# what every workflow run's row holds in the columns of the other kinds: SQL literals, no
# parameter (``clock`` false and ``attempts`` 0 are the columns' defaults)
_CONSTANT_NAMES = ("kind", "table_id", "payload")
_CONSTANTS = (repr(WORKFLOW_KIND), "''", "'{}'")


def workflow_scope(workflow_id: str, schedule_id: str | None = None) -> str:
    """A workflow run's ``scope`` (``schema.WORKFLOW_SCOPE_PREFIX``): ``app/wf:<workflow>``; with
    ``schedule_id`` (a run of a schedule that declares its own ``max_concurrent``)
    ``app/wf:<workflow>/<schedule>``; the one claim's turn and limit key."""
    scope = WORKFLOW_SCOPE_PREFIX + workflow_id
    return scope if schedule_id is None else f"{scope}/{schedule_id}"


def _scopes(workflows: list[Any], schedules: list[Any], limited: Collection[str]) -> list[str]:
    """The scopes of new runs (their workflows and schedules, column lists): the workflow's, a
    run of a ``limited`` schedule its own within it."""
    if not limited:
        return [WORKFLOW_SCOPE_PREFIX + wid for wid in workflows]
    return [
        workflow_scope(wid, sid if sid in limited else None)
        for wid, sid in zip(workflows, schedules, strict=True)
    ]


def column_values(
    items: Sequence[Mapping[str, Any]],
    names: Sequence[str],
    convert: Mapping[str, Callable[[Any], Any]],
) -> list[list[Any]]:
    """The values of ``items`` under ``names``, one list per name, each converted by
    ``convert[name]`` when given: a column at a time (``map``: no Python frame per cell), as
    ``bulk.with_columns`` takes them (the workflow store's rows: runs, fires)."""
    cells = [
        (name, map(_getter(name, items), items))
        for name in names  # (the columns every row names: one C call per cell)
    ]
    return [list(map(convert[n], c) if n in convert else c) for n, c in cells]


def _getter(name: str, items: Sequence[Mapping[str, Any]]) -> Callable[[Any], Any]:
    if name in _FRESH and items and name not in items[0]:
        default = _FRESH[name]
        return lambda row: row.get(name, default)
    return itemgetter(name)


def insert_runs(
    tx: Tx, *, rows: Sequence[Mapping[str, Any]], limited: Collection[str] = ()
) -> None:
    """Insert pending runs (``rows`` name every column): one driver statement
    (``bulk.with_columns``: PostgreSQL, one array per column; SQLite, a multi-row ``VALUES``
    list per chunk of rows; a column of one value in every row sent once), values converted a
    column at a time (STYLE F3: SQLAlchemy's per-parameter processing was most of a 10,000-fire
    tick). A column NULL in every row and NULL by default is left out (a pending run's output,
    error, ended_at…): it is NULL all the same, for fewer arrays to send and unnest.

    A run's ``scope`` is its workflow's, ``app/wf:<workflow>`` (one turn of the one claim for all
    its runs, however many schedules fire it); a run of one of the ``limited`` schedules (the
    ids of those declaring ``max_concurrent`` in the inserting process's registry,
    ``workflows.definition.limited_schedules``) has its own, ``app/wf:<workflow>/<schedule>``: the
    claim keeps a schedule's limit on its own scope. Decided here, at insert: a limit declared
    later applies to the schedule's runs inserted after; its runs inserted before stay in the
    workflow's scope (counted by the workflow's limit only)."""
    tx.require_writable()
    if not rows:
        return
    tx.wake_workers()
    bind = instant_binder(tx)
    convert = {n: json_text for n in JSON_COLUMNS} | {n: bind for n in _INSTANT_COLUMNS}
    values = column_values(rows, _INSERT_COLUMNS, convert)
    count = len(rows)
    kept = [
        i
        for i, name in enumerate(_INSERT_COLUMNS)
        if name not in _NULL_BY_DEFAULT or values[i].count(None) != count
    ]
    names = ", ".join(
        (
            *(f'"{COLUMN_OF.get(_INSERT_COLUMNS[i], _INSERT_COLUMNS[i])}"' for i in kept),
            *_CONSTANT_NAMES,
        )
    )
    names += ", scope"
    scopes = _scopes(values[_WORKFLOW_AT], values[_SCHEDULE_AT], limited)
    columns = [values[i] for i in kept] + [scopes]
    picks = _PG_SELECT if tx.is_postgres else _SELECT
    constants = _PG_CONSTANTS if tx.is_postgres else _CONSTANTS
    select_ = ", ".join((*(picks[i] for i in kept), *constants, "c_scope"))
    body = f"INSERT INTO runs ({names}) SELECT {select_} FROM v"
    with_columns(tx, [*(_PG_COLUMNS[i] for i in kept), ("c_scope", "text")], body, columns)


# the workflow and schedule columns of :func:`column_values`' lists: a run's scope's parts
_WORKFLOW_AT = _INSERT_COLUMNS.index("workflow_id")
_SCHEDULE_AT = _INSERT_COLUMNS.index("schedule_id")


def _pg_kind(name: str) -> str:
    if name in _INSTANT_COLUMNS:
        return "timestamp"
    return "int" if name in ("attempts", "attempt") else "text"


# PostgreSQL: the rows travel as one array per column (``bulk.with_columns``); JSON as its text
_PG_COLUMNS = tuple((f"c_{n}", _pg_kind(n)) for n in _INSERT_COLUMNS)
_PG_SELECT = tuple(
    f"CAST(c_{n} AS json)" if n in JSON_COLUMNS else f"c_{n}" for n in _INSERT_COLUMNS
)
_SELECT = tuple(f"c_{n}" for n in _INSERT_COLUMNS)  # SQLite: JSON is its text
_PG_CONSTANTS = tuple(
    "CAST('{}' AS json)" if name == "payload" else value
    for name, value in zip(_CONSTANT_NAMES, _CONSTANTS, strict=True)
)
_NULL_BY_DEFAULT = frozenset(
    n for n in FIELDS if column(n).nullable and column(n).server_default is None
)


def get_run(tx: Tx, *, run_id: str) -> WorkflowRun | None:
    """The workflow run ``run_id``; None when there is none."""
    stmt = select(*SELECTED).where(R.c.id == run_id, IS_WORKFLOW)
    row = tx.conn.execute(stmt).mappings().first()
    return workflow_run_value(row) if row is not None else None


def runs_by_id(tx: Tx, *, run_ids: Iterable[str]) -> dict[str, WorkflowRun]:
    """Runs by primary key (one page of fires' runs), in one statement per 500 ids."""
    wanted = sorted({i for i in run_ids if i})
    found: dict[str, WorkflowRun] = {}
    for start in range(0, len(wanted), 500):
        stmt = select(*SELECTED).where(R.c.id.in_(wanted[start : start + 500]), IS_WORKFLOW)
        found.update((r["id"], workflow_run_value(r)) for r in tx.conn.execute(stmt).mappings())
    return found


def list_runs(
    tx: Tx,
    *,
    workflow_id: str | None,
    status: str | None,
    skip: int,
    limit: int,
) -> tuple[list[WorkflowRun], int]:
    """Runs newest first, optionally of one workflow and/or status; and the total."""
    where = [IS_WORKFLOW] if status is None else _of_status(status)
    if workflow_id is not None:
        where.append(R.c.trigger_id == workflow_id)
    total = tx.conn.execute(select(func.count()).select_from(R).where(*where)).scalar_one()
    stmt = (
        select(*SELECTED)
        .where(*where)
        .order_by(R.c.created_at.desc(), R.c.id.desc())
        .offset(skip)
        .limit(limit)
    )
    return [workflow_run_value(r) for r in tx.conn.execute(stmt).mappings()], int(total)


def active_schedule_ids(tx: Tx, *, schedule_ids: Iterable[str]) -> set[str]:
    """Which of ``schedule_ids`` have a pending or running run (the overlap fence); backfill
    runs (their own ledger namespace) never fence scheduled fires."""
    wanted = sorted(set(schedule_ids))
    # ix_runs_workflow_schedule
    fence = f"{WORKFLOW_WHERE} AND {WORKFLOW_ACTIVE_WHERE} AND source <> 'backfill'"
    found: set[str] = set()
    if tx.is_postgres:  # one statement, the ids as one text array
        ids = "CAST(%b AS text[])"
        sql = f"SELECT schedule_id FROM runs WHERE schedule_id = ANY({ids}) AND {fence}"
        return {str(r[0]) for r in tx.conn.exec_driver_sql(sql, (wanted,)).fetchall()}
    for start in range(0, len(wanted), 500):
        chunk = wanted[start : start + 500]
        marks = ", ".join("?" * len(chunk))
        sql = f"SELECT schedule_id FROM runs WHERE schedule_id IN ({marks}) AND {fence}"
        found.update(str(r[0]) for r in tx.conn.exec_driver_sql(sql, tuple(chunk)).fetchall())
    return found


def save_steps(
    tx: Tx, *, run_id: str, attempts: int, steps: list[dict[str, Any]], now: datetime
) -> bool:
    """Store the receipts of a running run; False when the claim was lost (canceled…)."""
    tx.require_writable()
    stmt = (
        update(R)
        .where(R.c.id == run_id, IS_WORKFLOW, R.c.status == "running", R.c.attempts == attempts)
        .values(action_results=steps, updated_at=now)
    )
    return tx.conn.execute(stmt).rowcount == 1


FINISH_KEYS = ("status", "steps", "output", "error", "suspend_payload")
"""What every finish names; a retried run's also ``next_attempt_at`` and ``attempt`` (the
number of its next attempt), its status then ``pending``."""


def finish_row(run_id: str, attempts: int, values: Mapping[str, Any], now: datetime) -> FinishRow:
    """The finish of one run (``values`` names every key of ``FINISH_KEYS``) as the one finish
    row of every kind (written by ``store.runs.finish_runs``): made as each run ends, it holds
    no object of the run (a batch's runs are not kept alive until their one finish statement)."""
    return FinishRow(
        run_id,
        attempts,
        values["status"],
        now,
        json_text(values["steps"]),
        values["error"],
        json_text(values["output"]),
        json_text(values["suspend_payload"]),
        values.get("next_attempt_at"),
        values.get("attempt") or 1,
    )


def transition(
    tx: Tx,
    *,
    run_id: str,
    from_statuses: Sequence[str],
    values: Mapping[str, Any],
    now: datetime,
) -> bool:
    """Set ``values`` on a run whose status is one of ``from_statuses`` (cancel, resume, retry)."""
    tx.require_writable()
    stmt = (
        update(R)
        .where(R.c.id == run_id, IS_WORKFLOW, R.c.status.in_(list(from_statuses)))
        .values(**columns_of(values), updated_at=now)
    )
    moved = tx.conn.execute(stmt).rowcount == 1
    tx.wake_workers(moved and values.get("status") == "pending")
    return moved


def record_alert(tx: Tx, *, run_id: str, alert: Mapping[str, Any]) -> None:
    """Store the outcome of a run's failure alert (``on_failure``)."""
    tx.require_writable()
    tx.conn.execute(update(R).where(R.c.id == run_id, IS_WORKFLOW).values(alert=dict(alert)))


def count_runs(tx: Tx, *, status: str | None = None) -> int:
    where = [IS_WORKFLOW] if status is None else _of_status(status)
    return int(tx.conn.execute(select(func.count()).select_from(R).where(*where)).scalar_one())


__all__ = [
    "COLUMN_OF",
    "FIELDS",
    "HELD",
    "IS_WORKFLOW",
    "RUN_STATUSES",
    "SELECTED",
    "active_schedule_ids",
    "column",
    "columns_of",
    "count_runs",
    "finish_row",
    "get_run",
    "insert_runs",
    "list_runs",
    "record_alert",
    "runs_by_id",
    "save_steps",
    "transition",
    "workflow_run_value",
    "workflow_scope",
]
