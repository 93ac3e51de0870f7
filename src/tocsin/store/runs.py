"""Runs, creation side and reading (SPEC §5.3, §8; DESIGN §5; STYLE F4, R4).

Status machine (stored in ``runs.status``)::

    pending → running → done | failed          (retry: failed | pending | stale running → pending)
                       └→ pending (automatic retry: ``next_attempt_at`` set, issue 18)

``stuck`` is a filter, not a status: failed, or running with ``updated_at`` older than
``stuck_after_s``. Claiming, receipts, finishing and retry live in ``store/execution.py``.

Reads answer :class:`~tocsin.core.model.Run` values, built here only (:func:`run_value`;
``store.execution``'s claims and retry reset use it too); ``Run.as_dict()`` is the run dict
(``id, table_id, trigger_id, record_id, source, clock, status, attempts, error, action_results
(list), payload, definition, identity, scheduled_for, enqueued_at, created_at, updated_at,
started_at, finished_at, next_attempt_at``). Inserting takes :class:`NewRun` (bulk, untyped
rows).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any, NamedTuple

from sqlalchemy import ColumnElement, RowMapping, and_, func, or_, select, type_coerce

from tocsin.core.model import Run, RunStatus
from tocsin.store.bulk import instant_binder, with_rows
from tocsin.store.dialects import upsert_insert
from tocsin.store.schema import ONE_ACTIVE_CLOCK_WHERE, runs, trigger_definitions
from tocsin.store.tx import Tx

RUN_STATUSES = tuple(RunStatus)
RUN_FILTERS = (*RUN_STATUSES, "stuck")

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
    "next_attempt_at",
)


def run_value(row: RowMapping) -> Run:
    """A ``runs`` row as a :class:`Run` (``action_results`` always a list): the one place a
    run value is built."""
    return Run(
        id=row["id"],
        table_id=row["table_id"],
        trigger_id=row["trigger_id"],
        record_id=row["record_id"],
        source=row["source"],
        clock=bool(row["clock"]),
        status=RunStatus(row["status"]),
        attempts=int(row["attempts"]),
        error=row["error"],
        action_results=list(row["action_results"] or []),
        payload=row["payload"],
        definition=row["definition"],
        identity=row["identity"],
        scheduled_for=row["scheduled_for"],
        enqueued_at=row["enqueued_at"],
        created_at=row["created_at"],
        updated_at=row["updated_at"],
        started_at=row["started_at"],
        finished_at=row["finished_at"],
        next_attempt_at=row["next_attempt_at"],
    )


class NewRun(NamedTuple):
    """A pending run to insert (``payload`` and ``definition``: plain JSON values; schedule and
    manual runs name their ``trigger_definitions`` row by ``definition_hash`` instead)."""

    id: str
    table_id: str
    trigger_id: str
    record_id: str | None
    source: str  # created|updated|deleted|restored|schedule
    clock: bool
    payload: Mapping[str, Any]
    definition: Mapping[str, Any] | None
    identity: str | None
    scheduled_for: datetime | None
    definition_hash: str | None = None


_ENCODE = json.JSONEncoder(check_circular=False).encode  # json.dumps' output, plain JSON
_INSERT = (
    "INSERT INTO runs (id, table_id, trigger_id, record_id, source, clock, status, attempts,"
    " error, action_results, payload, definition, definition_hash, identity, scheduled_for,"
    " created_at, updated_at) SELECT rid, tab, tid, rec, src, clk, 'pending', 0, NULL, '[]',"
    " {payload}, {definition}, dh, ident, sf, ca, ca FROM v WHERE true"
    f" ON CONFLICT (table_id, trigger_id) WHERE {ONE_ACTIVE_CLOCK_WHERE} DO NOTHING RETURNING id"
)
_INSERT_COLUMNS = (
    *(("rid", "text"), ("tab", "text"), ("tid", "text"), ("rec", "text"), ("src", "text")),
    *(("clk", "boolean"), ("pl", "text"), ("df", "text"), ("dh", "text"), ("ident", "text")),
    *(("sf", "timestamp"), ("ca", "timestamp")),
)


def insert_runs(tx: Tx, *, runs_: Iterable[NewRun], now: datetime) -> set[str]:
    """Insert pending runs created at ``now``; returns the ids inserted. A clock run whose
    trigger has an active clock run is refused by the partial unique index (``ON CONFLICT …
    DO NOTHING``, which aborts no transaction; SPEC §5.3): of two, the first is inserted."""
    tx.require_writable()
    bind = instant_binder(tx)
    stamp = bind(now)
    rows = [
        (
            *r[:6],
            _ENCODE(r.payload) if r.payload else "{}",
            None if r.definition is None else _ENCODE(r.definition),
            r.definition_hash,
            r.identity,
            bind(r.scheduled_for),
            stamp,
        )
        for r in runs_
    ]
    cast = "CAST({} AS json)" if tx.is_postgres else "{}"
    body = _INSERT.format(payload=cast.format("pl"), definition=cast.format("df"))
    return {str(r[0]) for r in with_rows(tx, _INSERT_COLUMNS, body, rows)}


def put_definitions(tx: Tx, *, definitions: Mapping[str, Mapping[str, Any]]) -> None:
    """Store trigger definitions by their ``core.identity.definition_digest`` (hash →
    definition); a hash already stored is left as it is (its content is the same)."""
    tx.require_writable()
    if definitions:
        rows = [{"hash": h, "definition": d} for h, d in definitions.items()]
        tx.conn.execute(upsert_insert(tx, trigger_definitions).on_conflict_do_nothing(), rows)


# a run's definition: its copy, else the stored definition its hash names
_DEFINITION = type_coerce(
    func.coalesce(
        runs.c.definition,
        select(trigger_definitions.c.definition)
        .where(trigger_definitions.c.hash == runs.c.definition_hash)
        .scalar_subquery(),
    ),
    runs.c.definition.type,
).label("definition")
# what every read of a run selects (or returns): the columns of :data:`RUN_FIELDS`
RUN_COLUMNS = tuple(_DEFINITION if name == "definition" else runs.c[name] for name in RUN_FIELDS)


def insert_run(tx: Tx, **fields: Any) -> Run | None:
    """:func:`insert_runs` for one run (``now`` and the :class:`NewRun` fields as keywords);
    the run inserted, or None when the one-active-run index refused it."""
    now = fields.pop("now")
    inserted = insert_runs(tx, runs_=[NewRun(**fields)], now=now)
    return get_run(tx, run_id=fields["id"]) if inserted else None


def get_run(tx: Tx, *, run_id: str) -> Run | None:
    """One run by id, or None."""
    stmt = select(*RUN_COLUMNS).where(runs.c.id == run_id)
    row = tx.conn.execute(stmt).mappings().one_or_none()
    return None if row is None else run_value(row)


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
    trigger_id: str | None = None,
    record_id: str | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
) -> tuple[list[Run], int]:
    """A table's runs, newest first, optionally filtered by status or ``stuck``, trigger,
    record and creation time (``since`` <= created_at < ``until``); and the total."""
    if status is not None and status not in RUN_FILTERS:
        raise ValueError(f"unknown run status filter {status!r}; expected one of {RUN_FILTERS}")
    where: list[ColumnElement[bool]] = [runs.c.table_id == table_id]
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
        select(*RUN_COLUMNS)
        .where(*where)
        .order_by(runs.c.created_at.desc(), runs.c.id.desc())
        .offset(skip)
        .limit(limit)
    )
    items = [run_value(row) for row in tx.conn.execute(stmt).mappings()]
    return items, int(total)


TriggerKey = tuple[str, str]  # (table_id, trigger_id): a trigger id is unique within its table


def active_clock_triggers(tx: Tx, *, table_ids: Sequence[str]) -> set[TriggerKey]:
    """The ``(table_id, trigger_id)`` of ``table_ids``' clock triggers with a pending or running
    clock run (SPEC §5.3): the rows ``uq_runs_one_active_clock`` fences, read through it per
    table (a plain ``table_id IN (…)`` could walk a table's whole run history)."""
    match = f"runs.table_id = v.tab AND {ONE_ACTIVE_CLOCK_WHERE}"
    if tx.is_postgres:
        body = (
            "SELECT v.tab, a.trigger_id FROM v CROSS JOIN LATERAL (SELECT trigger_id FROM runs"
            f" WHERE {match}) AS a"
        )
    else:
        body = (
            "SELECT v.tab, runs.trigger_id FROM v JOIN runs INDEXED BY uq_runs_one_active_clock"
            f" ON {match}"
        )
    rows = with_rows(tx, (("tab", "text"),), body, [(i,) for i in table_ids])
    return {(str(r[0]), str(r[1])) for r in rows}


def active_clock_trigger_ids(tx: Tx, *, table_id: str, trigger_ids: Sequence[str]) -> set[str]:
    """:func:`active_clock_triggers` for one table: which of its ``trigger_ids`` have a pending
    or running clock run."""
    found = active_clock_triggers(tx, table_ids=[table_id])
    return {tid for _, tid in found} & set(trigger_ids)


__all__ = [
    "RUN_COLUMNS",
    "RUN_FILTERS",
    "RUN_STATUSES",
    "NewRun",
    "TriggerKey",
    "active_clock_trigger_ids",
    "active_clock_triggers",
    "get_run",
    "insert_run",
    "insert_runs",
    "list_runs",
    "put_definitions",
    "run_value",
    "stuck_condition",
]
