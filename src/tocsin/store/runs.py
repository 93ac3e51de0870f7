"""Runs: the statements that create a run and move it through its life (SPEC §5.3, §8, §9;
DESIGN §5; STYLE F4, R4, R6). Listing and counting live in ``store/run_queries.py``.

``runs.status`` state machine (``core.model.RUN_TRANSITIONS``)::

    pending ──claim──▶ running ──finish──▶ done | failed
       ▲                  │
       ├── release ───────┘   (graceful stop: the worker hands the run back)
       ├── requeue ───────┘   (stale running: updated_at older than the stale window)
       ├── schedule_retry ┘   (automatic retry: a failed attempt waits until next_attempt_at)
       └── reset_for_retry ◀── failed | pending | stale running

Every write a worker makes after its claim is *fenced* by ``(status='running', attempts=n)``.
PostgreSQL claims skip rows other claimers lock (``FOR UPDATE SKIP LOCKED``); SQLite claims run
inside ``BEGIN IMMEDIATE`` (``Store.begin``), where ``status='pending'`` is the fence.

Reads answer :class:`~tocsin.core.model.Run` values, built here only (:func:`run_value`);
``Run.as_dict()`` is the run dict. Inserting takes :class:`NewRun` (bulk, untyped rows).
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from functools import cache
from operator import itemgetter
from typing import Any, NamedTuple

from sqlalchemy import (
    JSON,
    BindParameter,
    Boolean,
    ColumnElement,
    Text,
    and_,
    bindparam,
    cast,
    exists,
    func,
    literal,
    literal_column,
    or_,
    select,
    text,
    type_coerce,
    update,
)
from sqlalchemy.exc import IntegrityError
from sqlalchemy.types import NullType

from tocsin import messages
from tocsin.core.model import RUN_TRANSITIONS, QueueEntry, Run, RunStatus
from tocsin.errors import TransientStoreError
from tocsin.store.bulk import (
    driver_rows,
    instant_binder,
    instant_reader,
    update_rows,
    with_columns,
    with_rows,
)
from tocsin.store.coltypes import UTCDateTime
from tocsin.store.dialects import ordered_scans_only, upsert_insert
from tocsin.store.errors import map_db_errors
from tocsin.store.jsontext import json_values_at
from tocsin.store.schema import (
    ACTIVE_STATUSES,
    ONE_ACTIVE_CLOCK_WHERE,
    RUNNING_LIMITED_WHERE,
    WORKFLOW_KIND,
    WORKFLOW_SCOPE_PREFIX,
    runs,
    trigger_definitions,
)
from tocsin.store.snapshots import PAYLOAD, SnapshotBatch
from tocsin.store.tx import Tx

RUN_STATUSES = tuple(RunStatus)
# ``kind <> 'workflow'`` as SQL text: what a statement that must read one of the table runs'
# partial indexes says (``schema.QUEUE_RUN_WHERE``)
QUEUE_RUN = runs.c.kind != literal_column(repr(WORKFLOW_KIND))
# ``table_id <> ''`` as SQL text: a table's run, what ``ix_runs_table_created`` holds
# (``schema.TABLE_RUN_WHERE``)
TABLE_RUN = runs.c.table_id != literal_column("''")

RUN_FIELDS = Run._fields  # its columns: the value's fields


def run_value(row: Mapping[Any, Any]) -> Run:
    """A ``runs`` row as a :class:`Run` (``action_results`` always a list): the one place a
    run value is built."""
    values = {name: row[name] for name in RUN_FIELDS}
    values.update(clock=bool(row["clock"]), status=RunStatus(row["status"]))
    values.update(attempts=int(row["attempts"]), action_results=list(row["action_results"] or []))
    return Run(**values)


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

# a new run's scope: its table's ``scope:scope_id`` (the fair claim's key, ``claim_scoped_runs``);
# a run of a trigger with ``max_concurrent``: a scope of its own within it (``/table/trigger``)
RUN_SCOPE = (
    "coalesce((SELECT t.scope || ':' || t.scope_id FROM tables AS t WHERE t.id = tab), '')"
    " || CASE WHEN mc IS NULL THEN '' ELSE '/' || tab || '/' || tid END"
)

_INSERT = (
    "INSERT INTO runs (id, table_id, trigger_id, record_id, source, clock, status, attempts,"
    " error, action_results, payload, snapshot_id, definition, definition_hash, identity,"
    " scheduled_for, created_at, updated_at, max_concurrent, scope) SELECT rid, tab, tid, rec,"
    " src, clk, 'pending', 0, NULL, '[]', '{{}}', snap, {definition}, dh, ident, sf, ca, ca, mc,"
    f" {RUN_SCOPE} FROM v WHERE true"
    f" ON CONFLICT (table_id, trigger_id) WHERE {ONE_ACTIVE_CLOCK_WHERE} DO NOTHING RETURNING id"
)

_INSERT_COLUMNS = (
    *(("rid", "text"), ("tab", "text"), ("tid", "text"), ("rec", "text"), ("src", "text")),
    *(("clk", "boolean"), ("snap", "text"), ("df", "text"), ("dh", "text"), ("ident", "text")),
    *(("sf", "timestamp"), ("ca", "timestamp"), ("mc", "integer")),
)


def _limit(run: NewRun) -> int | None:
    """A row-event run's ``max_concurrent`` (its trigger's, as it fired), else None."""
    if run.clock or run.definition is None:
        return None
    value = run.definition.get("max_concurrent")
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def insert_runs(tx: Tx, *, runs_: Iterable[NewRun], now: datetime) -> set[str]:
    """Insert pending runs created at ``now``; returns the ids inserted. A clock run whose
    trigger has an active clock run is refused by the partial unique index (``ON CONFLICT …
    DO NOTHING``, which aborts no transaction; SPEC §5.3): of two, the first is inserted. A
    row fired on goes once into ``row_snapshots`` (``store.snapshots``)."""
    tx.require_writable()
    bind = instant_binder(tx)
    stamp = bind(now)
    snapshots = SnapshotBatch()
    rows = [
        (
            *r[:6],
            snapshots.add(r.id, r.record_id, r.payload),
            None if r.definition is None else _ENCODE(r.definition),
            r.definition_hash,
            r.identity,
            bind(r.scheduled_for),
            stamp,
            _limit(r),
        )
        for r in runs_
    ]
    body = _INSERT.format(definition="CAST(df AS json)" if tx.is_postgres else "df")
    inserted = {str(r[0]) for r in with_rows(tx, _INSERT_COLUMNS, body, rows)}
    snapshots.store(tx, inserted=inserted)
    tx.wake_workers(bool(inserted))
    return inserted


def put_definitions(tx: Tx, *, definitions: Mapping[str, Mapping[str, Any]]) -> None:
    """Store trigger definitions by their ``core.schedules.identity.definition_digest`` (hash →
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
_READ: dict[str, ColumnElement[Any]] = {"definition": _DEFINITION, "payload": PAYLOAD}
RUN_COLUMNS = tuple(_READ[name] if name in _READ else runs.c[name] for name in RUN_FIELDS)


# what a claim returns: :data:`RUN_COLUMNS` as the driver gives them, but for what the claim
# itself sets (``status`` running, ``updated_at`` its ``now``, ``finished_at`` and
# ``next_attempt_at`` NULL: :data:`_SET_BY_CLAIM`, filled in by :func:`_claimed_runs`), decoded
# there without SQLAlchemy's result processing: the JSON ones as their text
# (``jsontext.json_values_at``: ``{}`` and ``[]`` made without the parser, NULL without a call;
# the driver's JSON loader per value was a third of a 500-run claim's time), the instants raw
# (``bulk.instant_reader``, memoized: a claim's rows share their stamps), ``clock`` as stored
# (SQLite: 0 or 1)
_SET_BY_CLAIM = ("status", "updated_at", "finished_at", "next_attempt_at")
_RETURNED = tuple(name for name in RUN_FIELDS if name not in _SET_BY_CLAIM)
_JSON_FIELDS = frozenset(
    name for name, col in zip(RUN_FIELDS, RUN_COLUMNS, strict=True) if isinstance(col.type, JSON)
)
_RAW_FIELDS = frozenset(
    name
    for name, col in zip(RUN_FIELDS, RUN_COLUMNS, strict=True)
    if isinstance(col.type, (UTCDateTime, Boolean))
)
CLAIM_COLUMNS = tuple(
    cast(col, Text).label(name)
    if name in _JSON_FIELDS
    else type_coerce(col, NullType()).label(name)
    if name in _RAW_FIELDS
    else col
    for name, col in zip(RUN_FIELDS, RUN_COLUMNS, strict=True)
    if name in _RETURNED
)
_JSON_AT = tuple(i for i, name in enumerate(_RETURNED) if name in _JSON_FIELDS)
_INSTANT_AT = tuple(
    i for i, name in enumerate(_RETURNED) if isinstance(runs.c[name].type, UTCDateTime)
)
_CLOCK_AT, _RESULTS_AT = (_RETURNED.index(name) for name in ("clock", "action_results"))
_WIDTH = len(_RETURNED)
# a claimed row's ``kind`` and ``scope``, then the claim's own column (:func:`_claim_next`): the
# run's ``max_concurrent``
_KIND_AT, _SCOPE_AT, _LIMIT_AT = _RETURNED.index("kind"), _RETURNED.index("scope"), _WIDTH
# a claimed row's values followed by those of :data:`_SET_BY_CLAIM`, in :class:`Run`'s field order
_IN_RUN_ORDER = itemgetter(
    *(
        _WIDTH + _SET_BY_CLAIM.index(name) if name in _SET_BY_CLAIM else _RETURNED.index(name)
        for name in RUN_FIELDS
    )
)


def _claimed_runs(rows: Sequence[Any], now: datetime) -> list[Run]:
    """Claimed rows (:data:`CLAIM_COLUMNS` first) of a claim at ``now`` as :class:`Run` values
    built by position: JSON decoded, instants aware, ``action_results`` a list, and what
    the claim set: ``status`` running, ``updated_at`` ``now``, no ``finished_at`` nor
    ``next_attempt_at``."""
    instant = instant_reader()
    set_by_claim = (RunStatus.RUNNING, now.astimezone(UTC), None, None)  # _SET_BY_CLAIM's
    out = []
    for row in rows:
        values = list(row[:_WIDTH])
        json_values_at(values, _JSON_AT)
        for i in _INSTANT_AT:
            values[i] = instant(values[i])
        values[_CLOCK_AT] = bool(values[_CLOCK_AT])
        values[_RESULTS_AT] = values[_RESULTS_AT] or []
        values += set_by_claim
        out.append(Run._make(_IN_RUN_ORDER(values)))
    return out


def insert_run(tx: Tx, **fields: Any) -> Run | None:
    """:func:`insert_runs` for one run (``now`` and the :class:`NewRun` fields as keywords);
    the run inserted, or None when the one-active-run index refused it."""
    now = fields.pop("now")
    inserted = insert_runs(tx, runs_=[NewRun(**fields)], now=now)
    return get_run(tx, run_id=fields["id"]) if inserted else None


def get_run(tx: Tx, *, run_id: str) -> Run | None:
    """One table trigger's run by id, or None: None too for the id of a run of another kind
    (a lane attempt), whose status words are its kind's (``queue_entry`` reads any kind)."""
    stmt = select(*RUN_COLUMNS).where(runs.c.id == run_id, runs.c.kind == "actions")
    row = tx.conn.execute(stmt).mappings().one_or_none()
    return None if row is None else run_value(row)


TriggerKey = tuple[str, str]  # (table_id, trigger_id): a trigger id is unique within its table


def queue_entry(tx: Tx, *, run_id: str) -> QueueEntry | None:
    """Where the run ``run_id`` of any kind stands in the queue (None when unknown)."""
    cols = (runs.c.id, runs.c.kind, runs.c.table_id, runs.c.trigger_id, runs.c.status)
    stmt = select(*cols, runs.c.updated_at, runs.c.clock).where(runs.c.id == run_id)
    with map_db_errors():
        row = tx.conn.execute(stmt).first()
    if row is None:
        return None
    values = row._mapping
    return QueueEntry(**{**values, "clock": bool(values["clock"])})


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


def _run_value(row: Any) -> Run:
    return run_value(row._mapping)


def _claim_values(now: datetime | BindParameter[Any]) -> dict[str, Any]:
    # typed bind: a bare aware datetime would go in as timestamptz and be shifted by the
    # session time zone; UTCDateTime stores naive UTC like every other instant
    at = now if isinstance(now, BindParameter) else literal(now, type_=runs.c.started_at.type)
    return {
        "status": "running",
        "attempts": runs.c.attempts + 1,
        "started_at": func.coalesce(runs.c.started_at, at),
        "updated_at": now,
        "finished_at": None,
        "next_attempt_at": None,
    }


@dataclass(frozen=True, slots=True)
class RunLimits:
    """``max_concurrent`` of the app's workflows and schedules: at most that many of their runs
    ``running`` at once, counted in the database across workers (``schedule_of``: each limited
    schedule's workflow). A schedule's runs count for its workflow too."""

    workflows: Mapping[str, int] = field(default_factory=dict)
    schedules: Mapping[str, int] = field(default_factory=dict)
    schedule_of: Mapping[str, str] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.workflows or self.schedules)

    def by_scope(self) -> dict[str, int]:
        """The limits by scope (``workflow_runs.workflow_scope``): a workflow's limits its scope
        and its schedules' together, a schedule's its own scope."""
        out = {WORKFLOW_SCOPE_PREFIX + wid: n for wid, n in self.workflows.items()}
        for sid, n in self.schedules.items():
            out[f"{WORKFLOW_SCOPE_PREFIX}{self.schedule_of[sid]}/{sid}"] = n
        return out


def workflow_of(scope: str) -> str:
    """The scope of the workflow of a workflow run's ``scope`` (``app/wf:<workflow>``): the
    first two steps of its path."""
    return "/".join(scope.split("/", 2)[:2])


def claim_scoped_runs(
    tx: Tx,
    *,
    now: datetime,
    limit: int = 1,
    after: str = "",
    held: Mapping[str, int] | None = None,
    cap: int | None = None,
    own: Sequence[str] = (),
    actions: bool = True,
    busy: Collection[str] = (),
    share: int = 1,
    scopes: int | None = None,
    workflows: Sequence[str] = (),
    limits: RunLimits | None = None,
) -> list[Run]:
    """Claim up to ``limit`` pending runs of every kind, the scopes in turn: ``pending →
    running``, ``attempts + 1``: the one claim of the one queue. A table trigger's runs (kind
    ``actions``) are always claimable; the app's own runs (a lane attempt) only when their
    ``trigger_id`` (the lane) is one of ``own``, those this process can execute; with
    ``actions`` false, only those; the workflow runs (kind ``workflow``) of ``workflows`` (their
    ``trigger_id``), those this process has registered. ``Run.kind`` says which executor a
    claimed run goes to.

    Eligible: ``status = 'pending'`` and ``next_attempt_at`` NULL or ``<= now`` (a run waiting
    for its automatic-retry backoff is left alone). Fair: a run's scope is its table's
    ``scope:scope_id`` (``runs.scope``); the scopes with pending runs are visited in key order
    from the first one past ``after`` (the previous claim's last scope, :func:`next_turn`),
    wrapping around, ``limit`` scopes at most, and each gives its oldest ready runs (by
    ``updated_at``), about ``limit`` / scopes each: every visited scope's oldest run before
    any scope's second, and the next claim goes on with the scopes after these. Both come
    from ``ix_runs_pending_scope`` (one probe per scope; no pending run is sorted).

    ``held`` (a worker's running runs per tenant scope, :func:`tenant_of`) and ``cap``
    (``TOCSIN_MAX_RUNNING_PER_SCOPE``): a tenant gets no more than ``cap`` minus what it holds,
    none at the cap. A row-event trigger's ``max_concurrent`` (its runs' own scope, within their
    tenant's): no more than that less its runs running, counted in the database; on PostgreSQL
    two claimers at once could each take the room, so a claim that took such runs counts again
    under a transaction-scoped advisory lock of that scope and, past the limit, rolls back and
    is retried (``TransientStoreError``: ``runs.retry``).

    The app's own runs are of its tenant scope ``app``: a lane attempt's scope is ``app``, a
    workflow run's its workflow's ``app/wf:<workflow>`` (however many schedules fire it: one
    turn), a run of a schedule declaring ``max_concurrent`` ``app/wf:<workflow>/<schedule>``
    (decided at insert, ``workflow_runs.insert_runs``), each a scope of the visit, the app's cap
    theirs together. ``limits`` (the claimer's registry's, :class:`RunLimits`): a limited
    workflow's runs get no more than its limit less its running runs (its schedules' scopes
    counted in), a limited schedule's no more than its own less its; on PostgreSQL recounted
    under the same advisory locks. Without ``limits`` the statement leaves those counts out.

    A worker's pool counts ``held`` and ``cap`` in its threads (slots), each taking up to
    ``share`` runs of its scope (``runs.drain``): a tenant's room is then ``share`` runs per slot
    it has left. ``busy``: tenant scopes given nothing (a queue of this worker still holds runs
    of theirs). ``scopes``: at most that many scopes (default ``limit``), one slot each.

    On PostgreSQL rows locked by another claimer are skipped (``FOR UPDATE SKIP LOCKED``), on
    SQLite the caller holds ``BEGIN IMMEDIATE``. The outer ``status = 'pending'`` predicate is
    the fence either way. Returns the claimed runs as :class:`Run` values (a workflow run's JSON
    fields decoded; ``Run.scope`` the turn each was claimed in), in creation order (empty when
    none is claimable).
    """
    tx.require_writable()
    room = {s: max(0, cap - n) * share for s, n in (held or {}).items()} if cap else {}
    room.update(dict.fromkeys(busy, 0))
    full = sum(1 for left in room.values() if left == 0)
    visited = limit if scopes is None else max(1, min(scopes, limit))
    limited_scopes = limits.by_scope() if limits else {}
    params = {
        "now": now,
        "limit": limit,
        "scopes": visited,
        "after": after,
        "room": _ENCODE(room),
        "cap": limit if cap is None else cap * share,
        # the scopes at their cap (a tenant's, a limited workflow's) are visited and passed over
        "visit": visited + full + len(limited_scopes),
        "own": _ENCODE(sorted(own)),
        "actions": 1 if actions else 0,
        "workflows": _ENCODE(sorted(workflows)),
        "wf": 1 if workflows else 0,
        "limits": _ENCODE(limited_scopes),
    }
    with map_db_errors():
        if tx.is_postgres:
            ordered_scans_only(tx)  # index probes, never a bitmap scan of the pending runs
        statement = _claim_next(tx.is_postgres, CLAIM_COLUMNS, bool(limited_scopes))
        rows = list(driver_rows(tx.conn.execute(statement, params)))  # no Row made per row
        limited = {str(row[_SCOPE_AT]): int(row[_LIMIT_AT]) for row in rows if row[_LIMIT_AT]}
        held = _workflow_keys(rows, limited_scopes)
        if (limited or held) and tx.is_postgres:
            _recount(tx, limited, held)
        claimed = _claimed_runs(rows, now)
    return sorted(claimed, key=_claim_order)


def _claim_order(run: Run) -> tuple[datetime, datetime, str]:
    """Creation order; lane attempts created together (one tick's) by their run's instant."""
    due = run.scheduled_for if run.kind == "lane" and run.scheduled_for else run.created_at
    return run.created_at, due, run.id


def _workflow_keys(rows: Sequence[Any], limits: Mapping[str, int]) -> dict[str, int]:
    """The limited workflow and schedule scopes (scope → limit) of claimed workflow runs."""
    if not limits:
        return {}
    keys = {}
    for row in rows:
        if row[_KIND_AT] == WORKFLOW_KIND:
            scope = str(row[_SCOPE_AT])
            for key in {workflow_of(scope), scope}:
                if key in limits:
                    keys[key] = limits[key]
    return keys


# a workflow's running runs (its scope and its schedules'), read through ix_runs_workflow_status
_WORKFLOW_RUNNING = (
    "SELECT count(*) FROM runs WHERE kind = 'workflow' AND status <> 'pending'"
    " AND status = 'running' AND (scope = %s OR (scope >= %s AND scope < %s))"
)


def _recount(tx: Tx, limited: Mapping[str, int], held: Mapping[str, int]) -> None:
    """PostgreSQL, after a claim that took runs of limited triggers (``limited``: scope →
    limit) or of limited workflows or schedules (``held``: scope → limit): under each scope's
    advisory lock, taken in key order, their running runs (this claim's and every committed
    one's; a workflow's: its schedules' too); past a limit, ``TransientStoreError`` rolls the
    claim back (retried: the next claim sees the room the winner left, none, and takes none)."""
    keys = sorted({*limited, *held})
    tx.conn.exec_driver_sql(
        "SELECT pg_advisory_xact_lock(hashtext(k)) FROM (SELECT k FROM"
        " unnest(CAST(%s AS text[])) AS k ORDER BY k) AS s",
        (keys,),
    )
    over = False
    if limited:
        counted = tx.conn.exec_driver_sql(
            f"SELECT scope, count(*) FROM runs WHERE {RUNNING_LIMITED_WHERE}"
            " AND scope = ANY(CAST(%s AS text[])) GROUP BY scope",
            (sorted(limited),),
        )
        over = any(int(n) > limited[str(scope)] for scope, n in counted)
    for key, most in sorted(held.items()):
        if over:
            break
        # a workflow's scope counts its schedules' (``key/…``); a schedule's scope has none
        within = (f"{key}/", f"{key}0") if workflow_of(key) == key else (key, key)
        running = tx.conn.exec_driver_sql(_WORKFLOW_RUNNING, (key, *within)).scalar_one()
        over = int(running) > most
    if over:
        raise TransientStoreError(messages.CLAIM_PAST_LIMIT)


def tenant_of(scope: str) -> str:
    """The tenant scope (``scope:scope_id``) of a run's scope: a limited trigger's scope is
    within its tenant's (``scope:scope_id/table_id/trigger_id``)."""
    return scope.split("/", 1)[0]


def next_turn(after: str, scopes: Iterable[str]) -> str:
    """The ``after`` of the claim following one past ``after`` that took runs of ``scopes``:
    the last of them in the claim's visiting order (the keys past ``after``, then from the
    start). Keys compare by code point, as the database does (``runs.scope``: binary order)."""
    return max(scopes, key=lambda scope: (scope <= after, scope), default=after)


# The claim's pick (:func:`claim_scoped_runs`): ``fwd`` and ``wrap`` visit the scopes with pending
# runs, one probe of ``ix_runs_pending_scope`` each, from ``after`` on and then from the start
# (past the workflow scopes this claimer cannot run: all of them without ``:workflows``, else a
# workflow's schedules once one is seen; ``seen`` drops the rest); ``keyed`` and ``nested`` give
# a workflow's scopes their workflow's room (its limit less the running runs of its scope and its
# schedules'); ``turn`` gives each scope its room (its tenant's, from ``:room`` or ``:cap``; a
# limited trigger's scope: also its limit less its running runs; a workflow's scope: its
# workflow's room, a limited schedule's also its limit less its running runs); ``allowed`` keeps
# the first ``limit`` with room left (``shared``: its tenant or its workflow has another of
# them); ``ranked`` takes each one's oldest ready runs, numbered by age within the scope, up to
# its share (PostgreSQL: locked, skipping rows another claimer holds); the pick keeps each
# workflow, then each tenant, of a shared scope within its room (a scope alone in its tenant and
# workflow has a room no larger than theirs: its share is within it), and takes by rank, then
# visiting order.
_VISIT = """
fwd(scope, n) AS (
  SELECT (SELECT scope FROM runs AS r{by} WHERE status = 'pending'
          AND scope > :after AND {probe} ORDER BY scope LIMIT 1), 1
  UNION ALL
  SELECT (SELECT r.scope FROM runs AS r{by} WHERE r.status = 'pending'
          AND r.scope > {past_fwd} AND {probe} ORDER BY r.scope LIMIT 1), fwd.n + {counts_fwd}
  FROM fwd WHERE fwd.scope IS NOT NULL AND fwd.n + {counts_fwd} <= :visit
), wrap(scope, n) AS (
  SELECT (SELECT scope FROM runs AS r{by} WHERE status = 'pending'
          AND {probe} ORDER BY scope LIMIT 1), 1
  UNION ALL
  SELECT (SELECT r.scope FROM runs AS r{by} WHERE r.status = 'pending'
          AND r.scope > {past_wrap} AND {probe} ORDER BY r.scope LIMIT 1), wrap.n + {counts_wrap}
  FROM wrap WHERE wrap.scope IS NOT NULL AND wrap.scope <= :after
    AND wrap.n + {counts_wrap} <= :visit
), seen AS (
  SELECT u.scope, u.ord, {tenant} AS tenant,
    CASE WHEN {is_wf_u} THEN {wf_key_u} ELSE u.scope END AS grp FROM (
    SELECT scope, n AS ord FROM fwd WHERE scope IS NOT NULL
    UNION ALL
    SELECT scope, :visit + n FROM wrap WHERE scope IS NOT NULL AND scope <= :after
  ) AS u WHERE NOT ({is_wf_u}) OR {wf_id_u} IN ({workflows})
), keyed AS (
  SELECT s.scope, s.ord, s.tenant, s.grp, coalesce({room}, :cap) AS tenant_room,
    {limit_grp} AS glim, CASE WHEN s.grp <> s.scope THEN {limit_scope} END AS slim
  FROM seen AS s
), nested AS (
  SELECT k.scope, k.ord, k.tenant, k.grp, k.tenant_room, k.slim, {grp_room} AS grp_room
  FROM keyed AS k
), turn AS (
  SELECT t.scope, t.ord, t.tenant, t.tenant_room, t.grp, t.grp_room, CASE
    WHEN t.tenant = t.scope THEN t.tenant_room
    WHEN {is_wf_t} THEN {wf_room}
    ELSE coalesce({least}(t.tenant_room,
      (SELECT y.max_concurrent FROM runs AS y{by} WHERE y.status = 'pending'
       AND y.scope = t.scope ORDER BY y.updated_at, y.id LIMIT 1)
      - (SELECT count(*) FROM runs AS x{running} WHERE {running_where} AND x.scope = t.scope)),
      t.tenant_room) END AS room
  FROM nested AS t
), chosen AS (
  SELECT scope, ord, tenant, tenant_room, grp, grp_room, room,
    {least}(count(*) OVER (), :scopes) AS k
  FROM turn WHERE room > 0
  ORDER BY ord LIMIT :scopes
), allowed AS (
  SELECT scope, ord, tenant, tenant_room, grp, grp_room, room, k,
    CASE WHEN count(*) OVER (PARTITION BY tenant) > 1
      OR count(*) OVER (PARTITION BY grp) > 1 THEN 1 ELSE 0 END AS shared
  FROM chosen
)"""

# a workflow scope's room (``nested``, ``turn``): its workflow's limit less the running runs of
# its scope and its schedules', a limited schedule's scope also its own limit less its running
# runs; without ``:limits`` (a claimer of no limited workflow nor schedule) the tenant's room:
# the statement is built without these counts (fewer subqueries to plan per claim)
_GRP_ROOM = """CASE WHEN k.glim IS NULL
    THEN k.tenant_room ELSE {least}(k.tenant_room, k.glim
      - (SELECT count(*) FROM runs AS x{held} WHERE {held_where} AND x.scope = k.grp)
      - (SELECT count(*) FROM runs AS x{held} WHERE {held_where}
         AND x.scope >= k.grp || '/' AND x.scope < k.grp || '0')) END"""
_WF_ROOM = """CASE WHEN t.slim IS NULL THEN t.grp_room ELSE {least}(t.grp_room,
      t.slim - (SELECT count(*) FROM runs AS x{held} WHERE {held_where} AND x.scope = t.scope))
      END"""
_DUE = "(r.next_attempt_at IS NULL OR r.next_attempt_at <= :now)"
# a workflow scope (``schema.WORKFLOW_SCOPE_PREFIX``) in SQL: ``app/wf:``, both dialects
_WF = WORKFLOW_SCOPE_PREFIX
_IS_WF = f"substr({{s}}, 1, {len(_WF)}) = '{_WF}'"
_APP = _WF.split("/", 1)[0] + "/"  # the app's tenant scope and the path's separator: ``app/``
# its workflow's scope (the first two steps of its path: ``app/wf:<workflow>``) and workflow id
_PG_WF_KEY = "(split_part({s}, '/', 1) || '/' || split_part({s}, '/', 2))"
_SQLITE_WF_KEY = (
    f"('{_APP}' || substr(substr({{s}}, {len(_APP) + 1}), 1,"
    f" instr(substr({{s}}, {len(_APP) + 1}) || '/', '/') - 1))"
)
# the kinds a claimer executes: every table run (``:actions``), the app's own runs of ``:own``
# (lane attempts, their lane in ``trigger_id``) and of ``:workflows`` (workflow runs, their
# workflow in ``trigger_id``; JSON lists)
_PG_LIST = "SELECT jsonb_array_elements_text(CAST({} AS jsonb))"
_SQLITE_LIST = "SELECT value FROM json_each({})"
_OWN = (
    "((r.kind = 'actions' AND :actions = 1) OR (r.kind = 'lane' AND r.trigger_id IN ({own}))"
    " OR (r.kind = 'workflow' AND r.trigger_id IN ({workflows})))"
)
_PG_OWN = _OWN.format(own=_PG_LIST.format(":own"), workflows=_PG_LIST.format(":workflows"))
_SQLITE_OWN = _OWN.format(
    own=_SQLITE_LIST.format(":own"), workflows=_SQLITE_LIST.format(":workflows")
)
# a visit's probe: the first pending run of a scope in a workflow scope (whose runs are of its
# workflow: ``seen`` decides, by the scope), else one of the kinds the claimer executes
_PROBE = "(" + _IS_WF.format(s="r.scope") + " OR {own})"
# the next visit's lower bound past ``{s}``: past every workflow scope when the claimer runs no
# workflow, past a workflow's schedules when it does not run that workflow
_PAST = (
    "CASE WHEN NOT ({is_wf}) THEN {s} WHEN :wf = 0 THEN '" + _WF[:-1] + ";'"
    " WHEN {wf_id} IN ({workflows}) OR {s} = {wf_key} THEN {s}"
    " ELSE {wf_key} || '/' || {top} END"
)
# whether a visited scope ``{s}`` counts as one of the visit's (1) or not (0: a workflow scope the
# claimer cannot run, dropped by ``seen``; the visit goes on past it): a visited row's ``n`` is
# one more than the scopes counted before it (its ``ord`` when it counts), and the visit goes on
# while fewer than ``:visit`` counted
_COUNTS = "CASE WHEN ({is_wf}) AND (:wf = 0 OR {wf_id} NOT IN ({workflows})) THEN 0 ELSE 1 END"
# a workflow's or schedule's running runs: ``ix_runs_workflow_status``'s predicate, said so
_HELD_WHERE = "x.kind = 'workflow' AND x.status <> 'pending' AND x.status = 'running'"
_PER_SCOPE = "{least}(a.room, (:limit + a.k - 1) / a.k)"  # limit / scopes, rounded up
# the pick from ``ranked`` (``NOT MATERIALIZED``: each branch reads the scopes it keeps)
_RANKED = """
SELECT id FROM (
  SELECT id, rk, ord FROM ranked WHERE shared = 0
  UNION ALL
  SELECT id, rk, ord FROM (
    SELECT id, rk, ord, tenant_room,
      row_number() OVER (PARTITION BY tenant ORDER BY rk, ord) AS tk FROM (
        SELECT id, rk, ord, tenant, tenant_room, grp_room,
          row_number() OVER (PARTITION BY grp ORDER BY rk, ord) AS gk
        FROM ranked WHERE shared = 1
      ) AS grouped WHERE gk <= grp_room
  ) AS within WHERE tk <= tenant_room
) AS picked ORDER BY rk, ord LIMIT :limit"""
_RUNNING_WHERE = "x.status = 'running' AND x.max_concurrent IS NOT NULL"


def _visit(postgres: bool, limited: bool) -> str:
    """:data:`_VISIT` in ``postgres``' dialect or SQLite's; ``limited``: with the workflow
    scopes' limits (``:limits`` not empty)."""
    wf_key = _PG_WF_KEY if postgres else _SQLITE_WF_KEY
    workflows = (_PG_LIST if postgres else _SQLITE_LIST).format(":workflows")

    def wf_id(s: str) -> str:
        return f"substr({wf_key.format(s=s)}, {len(_WF) + 1})"

    def past(s: str) -> str:
        return _PAST.format(
            s=s,
            is_wf=_IS_WF.format(s=s),
            wf_id=wf_id(s),
            wf_key=wf_key.format(s=s),
            workflows=workflows,
            top="chr(1114111)" if postgres else "char(1114111)",  # past every schedule id
        )

    def counts(s: str) -> str:
        return _COUNTS.format(is_wf=_IS_WF.format(s=s), wf_id=wf_id(s), workflows=workflows)

    def limit_of(key: str) -> str:
        if postgres:
            return f"CAST(CAST(:limits AS jsonb) ->> {key} AS integer)"
        return f"(SELECT j.value FROM json_each(:limits) AS j WHERE j.key = {key})"

    held = "" if postgres else " INDEXED BY ix_runs_workflow_status"
    least = "least" if postgres else "min"
    rooms = {"grp_room": "k.tenant_room", "wf_room": "t.grp_room"}
    if limited:
        rooms = {
            "grp_room": _GRP_ROOM.format(least=least, held=held, held_where=_HELD_WHERE),
            "wf_room": _WF_ROOM.format(least=least, held=held, held_where=_HELD_WHERE),
        }
    return _VISIT.format(
        **rooms,
        by="" if postgres else " INDEXED BY ix_runs_pending_scope",
        running="" if postgres else " INDEXED BY ix_runs_running_limited",
        running_where=_RUNNING_WHERE,
        least=least,
        tenant=(
            "split_part(u.scope, '/', 1)"
            if postgres
            else "substr(u.scope, 1, instr(u.scope || '/', '/') - 1)"
        ),
        room=(
            "CAST(CAST(:room AS jsonb) ->> s.tenant AS integer)"
            if postgres
            else "(SELECT j.value FROM json_each(:room) AS j WHERE j.key = s.tenant)"
        ),
        probe=_PROBE.format(own=_PG_OWN if postgres else _SQLITE_OWN),
        past_fwd=past("fwd.scope"),
        past_wrap=past("wrap.scope"),
        counts_fwd=counts("fwd.scope"),
        counts_wrap=counts("wrap.scope"),
        is_wf_u=_IS_WF.format(s="u.scope"),
        wf_key_u=wf_key.format(s="u.scope"),
        wf_id_u=wf_id("u.scope"),
        workflows=workflows,
        limit_grp=limit_of("s.grp"),
        limit_scope=limit_of("s.scope"),
        is_wf_t=_IS_WF.format(s="t.scope"),
    )


def _pg_pick(limited: bool) -> str:
    """The claim's pick on PostgreSQL (``limited``: :func:`_visit`'s): each scope's share
    through a LATERAL limit, numbered as the index gives it."""
    return (
        "WITH RECURSIVE"
        + _visit(True, limited)
        + """, ranked AS NOT MATERIALIZED (
  SELECT c.id, c.rk, a.ord, a.tenant, a.tenant_room, a.grp, a.grp_room, a.shared
  FROM allowed AS a CROSS JOIN LATERAL (
    SELECT l.id, row_number() OVER (ORDER BY l.updated_at, l.id) AS rk FROM (
      SELECT r.id, r.updated_at FROM runs AS r
      WHERE r.status = 'pending' AND r.scope = a.scope AND """
        + _DUE
        + " AND "
        + _PG_OWN
        + """
      ORDER BY r.updated_at, r.id LIMIT """
        + _PER_SCOPE.format(least="least")
        + """ FOR UPDATE OF r SKIP LOCKED
    ) AS l
  ) AS c
)"""
        + _RANKED
    )


def _sqlite_pick(limited: bool) -> str:
    """The claim's pick on SQLite (``limited``: :func:`_visit`'s). No LATERAL, and a LIMIT
    cannot name the outer row: each scope's oldest ready runs (``:limit`` at most) are
    gathered, in the index's order, as one JSON array, whose ``json_each`` rows number them
    (``key``: the rank less one), then cut to the scope's share."""
    return (
        "WITH RECURSIVE"
        + _visit(False, limited)
        + """, ranked AS NOT MATERIALIZED (
  SELECT j.value AS id, j.key + 1 AS rk, a.ord, a.tenant, a.tenant_room, a.grp, a.grp_room,
    a.shared
  FROM allowed AS a, json_each((SELECT json_group_array(o.id) FROM (
    SELECT r.id FROM runs AS r INDEXED BY ix_runs_pending_scope
    WHERE r.status = 'pending' AND r.scope = a.scope AND """
        + _DUE
        + " AND "
        + _SQLITE_OWN
        + """
    ORDER BY r.updated_at, r.id LIMIT :limit) AS o)) AS j
  WHERE j.key < """
        + _PER_SCOPE.format(least="min")
        + """
)"""
        + _RANKED
    )


@cache
def _claim_next(postgres: bool, columns: tuple[ColumnElement[Any], ...], limited: bool) -> Any:
    """:func:`claim_scoped_runs`' statement, built once per dialect, columns and whether with
    the workflow scopes' limits (a worker claims each pass)."""
    at = bindparam("now", type_=runs.c.updated_at.type)
    if postgres:
        # the picked ids go to the UPDATE as one array (an init plan, evaluated once: a semi-join
        # could re-run the pick and claim past ``limit``), found by the primary key: the fence
        # is kept off the pending index (an unanalyzed table had the UPDATE scan every pending
        # run per claim)
        where = f"runs.id = ANY(ARRAY({_pg_pick(limited)})) AND (runs.status || '') = 'pending'"
    else:
        where = f"runs.id IN ({_sqlite_pick(limited)}) AND +runs.status = 'pending'"
    claim = update(runs).where(text(where).bindparams(at)).values(**_claim_values(at))
    return claim.returning(*columns, runs.c.max_concurrent)


def _attempt_due(now: datetime | BindParameter[Any]) -> ColumnElement[bool]:
    """The run is not waiting for an automatic-retry backoff past ``now``."""
    return or_(runs.c.next_attempt_at.is_(None), runs.c.next_attempt_at <= now)


def claim_run(tx: Tx, *, run_id: str, now: datetime) -> Run | None:
    """Claim one run by id: ``pending → running`` only if it is still pending and its
    automatic-retry backoff (if any) has passed (else None)."""
    tx.require_writable()
    stmt = (
        update(runs)
        .where(runs.c.id == run_id, runs.c.status == "pending", _attempt_due(now))
        .values(**_claim_values(now))
        .returning(*RUN_COLUMNS)
    )
    with map_db_errors():
        row = tx.conn.execute(stmt).first()
    return None if row is None else _run_value(row)


def _fence(run_id: str, attempts: int) -> ColumnElement[bool]:
    return and_(runs.c.id == run_id, runs.c.status == "running", runs.c.attempts == attempts)


# Hot statements are built once with bind parameters: a worker executes them for every action.
_FENCE = and_(
    runs.c.id == bindparam("p_run_id"),
    runs.c.status == "running",
    runs.c.attempts == bindparam("p_attempts"),
)

_SAVE_RECEIPTS = (
    update(runs)
    .where(_FENCE)
    .values(
        action_results=bindparam("p_receipts", type_=runs.c.action_results.type),
        updated_at=bindparam("p_now", type_=runs.c.updated_at.type),
    )
)


def save_receipt(
    tx: Tx, *, run_id: str, attempts: int, receipts: list[dict[str, Any]], now: datetime
) -> bool:
    """Store the run's whole receipt list (replacing it); False when the claim was lost."""
    tx.require_writable()
    params = {"p_run_id": run_id, "p_attempts": attempts, "p_receipts": receipts, "p_now": now}
    with map_db_errors():
        return tx.conn.execute(_SAVE_RECEIPTS, params).rowcount == 1


class FinishRow(NamedTuple):
    """The finish of one claimed run, of any kind, as plain values (:func:`finish_runs`): made as
    the run ends, it holds no object of the run (a group's runs are not kept alive until their
    one finish statement); its JSON columns are their text (``jsontext.json_text``)."""

    run_id: str
    attempts: int  # the claim's: the fence
    # the kind's word: done | failed (a table trigger's run); success | failed | suspended, or
    # pending for a workflow run's automatic retry (with ``next_attempt_at`` and ``attempt``)
    status: str
    at: datetime  # updated_at, and finished_at when the status ends the run (done|success|failed)
    steps: str | None = None  # action_results (receipts, a workflow run's steps); None: kept
    error: str | None = None
    # a workflow run's own columns, written as given; a table trigger's run holds NULL there and
    # has no attempt number: None says which kind a row is (``finish_runs``: SQLite leaves these
    # columns out of a finish none of whose rows names an attempt; PostgreSQL says the kind)
    output: str | None = None
    suspend_payload: str | None = None  # a suspended run's
    next_attempt_at: datetime | None = None  # when a retried run's next attempt may start
    attempt: int | None = None  # the run's current attempt (when retried, its next one)


_ENDS = frozenset({"done", "success", "failed"})  # the final statuses a finish writes
_FINISH_STATUSES = _ENDS | {"suspended", "pending"}

# one run by its key, in the parameters' order (a finish of one run)
_FINISH_ONE = (
    "UPDATE runs SET status = ?, action_results = COALESCE(?, action_results), error = ?,"
    " updated_at = ?, finished_at = ?, output = ?, suspend_payload = ?, next_attempt_at = ?,"
    " attempt = ? WHERE id = ? AND status = 'running' AND attempts = ?"
)
_PG_FINISH_ONE = _FINISH_ONE.replace("?", "%s")
# more runs: ``UPDATE … FROM`` the rows (``bulk.with_columns``; a value alike in every row, as a
# batch's status, fence attempts or NULL output usually is, sent once); ``finished_at`` is the
# row's instant when its status ends the run, so the instant travels once per row
_FINISH_FROM_V = (
    "UPDATE runs SET status = v.st, action_results = COALESCE({sp}, runs.action_results),"
    " error = v.e, updated_at = v.u,"
    f" finished_at = CASE WHEN v.st IN ({', '.join(map(repr, sorted(_ENDS)))}) THEN v.u END,"
    " output = {o}, suspend_payload = {su}, next_attempt_at = v.nx, attempt = v.n"
    " FROM v WHERE runs.id = v.rid AND runs.status = 'running' AND runs.attempts = v.att{kind}"
)
# SQLite: no RETURNING (buffering the ids cost ~10% of the statement); the rows it changed,
# counted by the connection, say whether every fence let its run through
_SQLITE_FINISH = _FINISH_FROM_V.format(sp="v.sp", o="v.o", su="v.su", kind="")
# PostgreSQL: the kind said in SQL text when every row is of one (a planner's hint: the fence
# names the row), so the planner reads that kind's running runs from its partial index
# (``ix_runs_workflow_status``; a table run's ``ix_runs_stuck``) and hashes them. Without it,
# over a burst of runs its statistics have not seen (none running), it joined the rows with a
# scan of every run, once per row: 22,000 runs claimed, ~200 ms per 500 rows instead of ~8 ms.
# (``dialects.keyed_access_only`` instead forced a nested loop, which on the worker bench's small
# table put the scan of every run outside: its group finishes took 5-10x as long.)
_PG_JSON = {"sp": "CAST(v.sp AS json)", "o": "CAST(v.o AS json)", "su": "CAST(v.su AS json)"}
_PG_FINISH = _FINISH_FROM_V.format(**_PG_JSON, kind="") + " RETURNING runs.id"
_PG_FINISH_TABLE_RUNS = (
    _FINISH_FROM_V.format(**_PG_JSON, kind=" AND runs.kind <> 'workflow'") + " RETURNING runs.id"
)
_PG_FINISH_WORKFLOWS = (
    _FINISH_FROM_V.format(**_PG_JSON, kind=" AND runs.kind = 'workflow'") + " RETURNING runs.id"
)
_FINISH_COLUMNS = (  # in the order of _FINISH_ONE's parameters, but ``finished_at``'s
    ("st", "text"),
    ("sp", "text"),
    ("e", "text"),
    ("u", "timestamp"),
    ("o", "text"),
    ("su", "text"),
    ("nx", "timestamp"),
    ("n", "int"),
    ("rid", "text"),
    ("att", "int"),
)


def finish_runs(tx: Tx, *, rows: Sequence[FinishRow]) -> set[str]:
    """Finish claimed runs of any kind (a table trigger's, a workflow run) in one statement, each
    under its own claim fence ``(id, status = 'running', attempts)``, which names the row whatever
    its kind. Each row's values are written as :class:`FinishRow` says: ``updated_at`` its
    instant, ``finished_at`` too for a final status (else NULL).

    One run: by its key. More: ``UPDATE … FROM`` the rows (``bulk.with_columns``: PostgreSQL, one
    statement; SQLite, one per chunk of rows), PostgreSQL saying the kind when all are of one (a
    workflow run names an ``attempt``, a table trigger's run none). Returns the ids the fence
    let through (PostgreSQL: RETURNING; SQLite: all of them when it changed as many rows as it
    was given, else those now at their finish's status and attempts, read in the same
    transaction; one run: whether it changed a row)."""
    tx.require_writable()
    if not rows:
        return set()
    wrong = {row.status for row in rows} - _FINISH_STATUSES
    if wrong:
        raise ValueError(messages.finish_status_invalid(sorted(wrong)[0]))
    bind = instant_binder(tx)
    with map_db_errors():
        if len(rows) == 1:
            r = rows[0]
            at = bind(r.at)
            one = (
                *(r.status, r.steps, r.error, at, at if r.status in _ENDS else None, r.output),
                *(
                    r.suspend_payload,
                    None if r.next_attempt_at is None else bind(r.next_attempt_at),
                ),
                *(r.attempt, r.run_id, r.attempts),
            )
            sql = _PG_FINISH_ONE if tx.is_postgres else _FINISH_ONE
            return {r.run_id} if tx.conn.exec_driver_sql(sql, one).rowcount == 1 else set()
        # a column per field, in FinishRow's order (no iterator per row, as zip(*rows) makes)
        cells: list[list[Any]] = [
            list(map(itemgetter(k), rows)) for k in range(len(FinishRow._fields))
        ]
        rid, att, st, ats, sp, e, o, su, nx, n = cells
        u = list(map(bind, ats))
        nx = [None if x is None else bind(x) for x in nx] if nx.count(None) != len(nx) else nx
        columns = (st, sp, e, u, o, su, nx, n, rid, att)
        if tx.is_postgres:
            named = len(n) - n.count(None)  # workflow runs
            body = _PG_FINISH_WORKFLOWS if named == len(rows) else _PG_FINISH
            body = _PG_FINISH_TABLE_RUNS if named == 0 else body
            return {str(r[0]) for r in with_columns(tx, _FINISH_COLUMNS, body, columns)}
        driver: Any = tx.conn.connection.dbapi_connection  # sqlite3: its changed-row count
        before = driver.total_changes
        with_columns(tx, _FINISH_COLUMNS, _SQLITE_FINISH, columns)
        if driver.total_changes - before == len(rows):  # each id is one row: every fence held
            return set(rid)
        wanted = {row.run_id: (row.status, row.attempts) for row in rows}
        ids = sorted(wanted)
        won: set[str] = set()
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            marks = ", ".join("?" * len(chunk))
            sql = f"SELECT id, status, attempts FROM runs WHERE id IN ({marks})"
            found = tx.conn.exec_driver_sql(sql, tuple(chunk)).fetchall()
            won.update(str(i) for i, s, a in found if wanted[str(i)] == (s, a))
        return won


def schedule_retry(
    tx: Tx,
    *,
    run_id: str,
    attempts: int,
    error: str,
    receipts: list[dict[str, Any]],
    next_attempt_at: datetime,
    now: datetime,
) -> bool:
    """``running → pending`` after a failed attempt that the trigger's retry policy retries:
    the error and receipts are kept (the next attempt resumes after the successful actions) and
    no worker claims the run before ``next_attempt_at``. False if fenced out."""
    tx.require_writable()
    stmt = (
        update(runs)
        .where(_fence(run_id, attempts))
        .values(
            status="pending",
            error=error,
            action_results=receipts,
            next_attempt_at=next_attempt_at,
            updated_at=now,
            enqueued_at=now,
        )
    )
    with map_db_errors():
        return tx.conn.execute(stmt).rowcount == 1


def touch_run(tx: Tx, *, run_id: str, attempts: int, now: datetime) -> bool:
    """Heartbeat: ``updated_at = now`` on a run this worker still holds; False if fenced out."""
    tx.require_writable()
    stmt = update(runs).where(_fence(run_id, attempts)).values(updated_at=now)
    with map_db_errors():
        return tx.conn.execute(stmt).rowcount == 1


def release_run(tx: Tx, *, run_id: str, attempts: int, now: datetime) -> bool:
    """``running → pending`` for a worker that was asked to stop; receipts are kept."""
    tx.require_writable()
    stmt = (
        update(runs)
        .where(_fence(run_id, attempts))
        .values(status="pending", updated_at=now, enqueued_at=now)
    )
    with map_db_errors():
        moved = tx.conn.execute(stmt).rowcount == 1
    tx.wake_workers(moved)
    return moved


def renew_runs(tx: Tx, *, runs_: Sequence[tuple[str, int]], now: datetime) -> None:
    """Stamp ``updated_at`` (the stale sweep's heartbeat) of claimed runs of any kind a live
    worker still holds (``(run_id, attempts)`` each, under its claim fence): in a slow step or
    action, or run and waiting for their group's finish. A run whose claim was lost meanwhile is
    left alone, and so is one a finish is writing (PostgreSQL: ``SKIP LOCKED``; waiting for it,
    the renewal could deadlock with a finish that waits for a row the renewal holds)."""
    tx.require_writable()
    at = instant_binder(tx)(now)
    update_rows(
        tx,
        (("rid", "text"), ("att", "int"), ("u", "timestamp")),
        "UPDATE runs SET updated_at = v.u FROM v WHERE runs.id = v.rid"
        " AND runs.status = 'running' AND runs.attempts = v.att"
        " AND runs.id IN (SELECT w.id FROM runs w JOIN v ON w.id = v.rid"
        " FOR UPDATE OF w SKIP LOCKED)",
        [(rid, att, at) for rid, att in runs_],
        "UPDATE runs SET updated_at = ?3 WHERE id = ?1 AND status = 'running' AND attempts = ?2",
    )


def reset_for_retry(
    tx: Tx, *, run_id: str, expected_status: str, expected_updated_at: datetime, now: datetime
) -> Run | None:
    """``failed | pending | stale running → pending``, clearing the top-level error: the one
    requeue of one run, of any kind (a table run's retry, a lane attempt's requeue; which
    statuses a kind allows is the caller's, ``runs.retry.requeue_run``).

    Compare-and-set on (status, updated_at) so a worker that moved the run meanwhile wins. A clock
    run is not reset while another run of its trigger (in its table) is pending or running (the
    one-active-run fence); then None is returned. Receipts are kept: the next attempt resumes
    after them.
    """
    tx.require_writable()
    other = runs.alias("other")
    another_active = exists().where(
        other.c.table_id == runs.c.table_id,
        other.c.table_id != literal_column("''"),  # ix_runs_table_created's predicate
        other.c.trigger_id == runs.c.trigger_id,
        other.c.id != runs.c.id,
        other.c.clock.is_(True),
        other.c.status.in_(ACTIVE_STATUSES),
    )
    stmt = (
        update(runs)
        .where(
            runs.c.id == run_id,
            runs.c.status == expected_status,
            runs.c.updated_at == expected_updated_at,
            or_(runs.c.clock.is_(False), ~another_active),
        )
        .values(
            status="pending",
            error=None,
            updated_at=now,
            enqueued_at=now,
            finished_at=None,
            next_attempt_at=None,
        )
        .returning(*RUN_COLUMNS)
    )
    try:
        with map_db_errors():
            row = tx.conn.execute(stmt).first()
    except IntegrityError:  # the one-active-run index refused: a racing run became active
        return None
    tx.wake_workers(row is not None)
    return None if row is None else _run_value(row)


def requeue_runs(
    tx: Tx,
    *,
    now: datetime,
    status: str,
    older_than_s: float,
    table_id: str | None = None,
    kinds: Sequence[str] = ("actions",),
) -> dict[str, int]:
    """Hand lost work back to the workers, in one statement; how many runs moved, per kind of
    ``kinds`` (a table trigger's runs unless told: the operator's requeue; the tick's sweep of
    dead workers' runs hands back every kind, ``schema.RUN_KINDS``).

    - ``status='pending'``: pending runs last (re-)enqueued longer than ``older_than_s`` ago
      (their delivery was lost): re-stamped ``enqueued_at = now``, still pending.
    - ``status='running'``: running runs whose ``updated_at`` is older than ``older_than_s``
      (their worker died): ``running → pending``; receipts kept so a worker resumes them.
    """
    tx.require_writable()
    if status not in ("pending", "running"):
        raise ValueError(messages.requeue_runs_status_invalid(status))
    if status == "running":
        stmt = _requeue_running(tx.is_postgres, table_id is not None, tuple(kinds))
    else:
        stmt = _requeue_pending(tx.is_postgres, table_id is not None, tuple(kinds))
    params: dict[str, Any] = {"cutoff": now - timedelta(seconds=older_than_s), "now": now}
    if table_id is not None:
        params["of_table"] = table_id
    moved = dict.fromkeys(kinds, 0)
    with map_db_errors():
        for (kind,) in tx.conn.execute(stmt, params):  # the moved runs: none on most ticks
            moved[kind] += 1
    tx.wake_workers(any(moved.values()))
    return moved


def _kinds_in(kinds: tuple[str, ...], alias: str) -> str:
    """``kind IN (…)`` of ``alias`` for an internal tuple of kind words (bound ``:kind_<n>``)."""
    return f"{alias}.kind IN ({', '.join(f':kind_{n}' for n in range(len(kinds)))})"


def _sweep_where(where: str, kinds: tuple[str, ...]) -> Any:
    """A sweep's WHERE text with its binds: ``cutoff`` (an instant), ``kind_<n>`` (``kinds``)."""
    return text(where).bindparams(
        bindparam("cutoff", type_=runs.c.updated_at.type),
        *(bindparam(f"kind_{n}", kind) for n, kind in enumerate(kinds)),
    )


# The stale-run sweep's pick (:func:`requeue_runs`): the running runs older than ``cutoff``, one
# arm per index that holds them, each said in its index's own words (a partial index is matched
# by the WHERE's terms on SQLite): the table runs and lane attempts in ``ix_runs_stuck``
# ``(status, updated_at, id)``, the workflow runs in ``ix_runs_workflow_status``
# ``(status, scope, updated_at)``. Both planners read each arm as a seek to the running runs of
# its index, their age tested on the index entries (none is stale on most ticks).
_STALE_QUEUE_RUNS = (
    "SELECT q.id FROM runs AS q WHERE q.status = 'running' AND q.kind <> 'workflow'"
    " AND q.updated_at < :cutoff AND {kinds}{table}"
)
_STALE_WORKFLOW_RUNS = (
    "SELECT w.id FROM runs AS w WHERE w.kind = 'workflow' AND w.status <> 'pending'"
    " AND w.status = 'running' AND w.updated_at < :cutoff{table}"
)


@cache
def _requeue_running(postgres: bool, by_table: bool, kinds: tuple[str, ...]) -> Any:
    """The stale-run sweep's statement (``running → pending``), built once per dialect and
    shape: the ids of the running runs of ``kinds`` older than ``cutoff``, picked through the
    index of their kind (``UNION ALL`` of the two arms when ``kinds`` names a workflow run and
    another kind), then each run by its primary key. The status and the age are tested again
    on the row written: a run finished or renewed while the statement waited for its lock
    (PostgreSQL) is not moved."""
    queue_kinds = tuple(kind for kind in kinds if kind != WORKFLOW_KIND)
    of_table = " AND {}.table_id = :of_table" if by_table else ""
    arms = []
    if queue_kinds:
        kinds_in = _kinds_in(queue_kinds, "q")
        arms.append(_STALE_QUEUE_RUNS.format(kinds=kinds_in, table=of_table.format("q")))
    if WORKFLOW_KIND in kinds:
        arms.append(_STALE_WORKFLOW_RUNS.format(table=of_table.format("w")))
    pick = " UNION ALL ".join(arms)
    where = f"runs.id = ANY(ARRAY({pick}))" if postgres else f"runs.id IN ({pick})"
    where += " AND runs.status = 'running' AND runs.updated_at < :cutoff"
    now = bindparam("now", type_=runs.c.updated_at.type)
    return (
        update(runs)
        .where(_sweep_where(where, queue_kinds))
        .values(status="pending", updated_at=now, enqueued_at=now)
        .returning(runs.c.kind)
    )


# The lost-pending sweep's pick (:func:`requeue_runs`): ``pend`` visits the scopes with pending runs
# (one probe of ``ix_runs_pending_scope`` each, past the workflow scopes' range at once: a
# workflow run is never swept here, and the probes read the index alone), and each scope gives its
# pending runs older than ``cutoff``, a range of that index (no other index holds a pending run).
# On a backlog both planners seek each scope's range (SQLite, with statistics, may skip-scan the
# scopes instead); PostgreSQL reads a few thousand pending entries whole (a hash join), which
# costs as little.
_LOST_PENDING = """
WITH RECURSIVE pend(scope) AS (
  SELECT (SELECT scope FROM runs{by} WHERE status = 'pending' ORDER BY scope LIMIT 1)
  UNION ALL
  SELECT (SELECT r.scope FROM runs AS r{by} WHERE r.status = 'pending'
          AND r.scope > CASE WHEN {is_wf} THEN '{past_wf}' ELSE pend.scope END
          ORDER BY r.scope LIMIT 1)
  FROM pend WHERE pend.scope IS NOT NULL
)
SELECT r.id FROM pend JOIN runs AS r{by} ON r.scope = pend.scope
  WHERE NOT ({is_wf}) AND r.status = 'pending' AND r.kind <> 'workflow'
    AND r.updated_at < :cutoff AND coalesce(r.enqueued_at, r.updated_at) < :cutoff
    AND (r.next_attempt_at IS NULL OR r.next_attempt_at < :cutoff) AND {kinds}{table}"""


@cache
def _requeue_pending(postgres: bool, by_table: bool, kinds: tuple[str, ...]) -> Any:
    """The lost-pending sweep's statement (re-stamps ``enqueued_at``; ``updated_at`` is kept, so
    a re-stamped run keeps its place in the claim order), built once per dialect and shape.

    Every way into pending stamps ``enqueued_at`` with ``updated_at`` (or leaves it NULL at
    insert) and a re-stamp only moves ``enqueued_at`` later, so a pending run's ``enqueued_at``
    is NULL or >= its ``updated_at``: the coalesce test implies ``updated_at < cutoff``, said
    explicitly so each scope's probe reads only its old pending runs. A run waiting for its
    automatic-retry backoff was not lost: its turn has not come."""
    pick = _LOST_PENDING.format(
        by="" if postgres else " INDEXED BY ix_runs_pending_scope",
        is_wf=_IS_WF.format(s="pend.scope"),
        past_wf=_WF[:-1] + ";",
        kinds=_kinds_in(kinds, "r"),
        table=" AND r.table_id = :of_table" if by_table else "",
    )
    if postgres:  # as the claim: the ids as one array, found by the primary key
        where = f"runs.id = ANY(ARRAY({pick})) AND (runs.status || '') = 'pending'"
    else:
        where = f"runs.id IN ({pick}) AND +runs.status = 'pending'"
    now = bindparam("now", type_=runs.c.updated_at.type)
    return (
        update(runs)
        .where(_sweep_where(where, kinds))
        .values(enqueued_at=now)
        .returning(runs.c.kind)
    )


__all__ = ["RUN_TRANSITIONS"]  # re-exported: the store checks the core's transitions
