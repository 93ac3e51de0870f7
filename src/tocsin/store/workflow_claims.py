"""Claiming workflow runs for a worker (SPEC §12): ``pending → running`` with ``attempts + 1``, the
oldest first, in one conditional UPDATE that returns what executing each run reads
(PostgreSQL: the pick is ``FOR UPDATE SKIP LOCKED``; SQLite: the caller holds ``store.begin()``,
which is ``BEGIN IMMEDIATE``). Every later write of the run is fenced by ``(status = 'running',
attempts)`` (``store.workflow_runs``). A workflow run is a row of ``runs``, kind ``workflow``:
every pick says so in SQL text (``kind = 'workflow'``), so it walks the workflow runs' own
partial indexes (``ix_runs_workflow_status``, ``ix_runs_workflow_schedule``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from tocsin.core.model import Run, RunStatus
from tocsin.store.bulk import driver_rows, instant_binder, instant_reader
from tocsin.store.dialects import ordered_scans_only
from tocsin.store.jsontext import json_value
from tocsin.store.schema import WORKFLOW_KIND, WORKFLOW_WHERE
from tocsin.store.tx import Tx
from tocsin.store.workflow_runs import COLUMN_OF, JSON_COLUMNS

# a pending workflow run (the pick's first tests, as the claim order index has them)
_PENDING = f"{WORKFLOW_WHERE} AND status = 'pending'"

ClaimedRow = tuple[Any, ...]
"""A claimed run as the driver's row (:data:`CLAIMED_COLUMNS`, JSON as its text): a tuple of
plain values, which the collector stops tracking, where a dict of the run would be walked by
every pass while it waits in a claim's queue."""


@dataclass(frozen=True, slots=True)
class RunLimits:
    """``max_concurrent`` of the app's workflows and schedules: at most that many of their runs
    ``running`` at once, counted in the database across workers (``schedule_of``: each limited
    schedule's workflow)."""

    workflows: Mapping[str, int] = field(default_factory=dict)
    schedules: Mapping[str, int] = field(default_factory=dict)
    schedule_of: Mapping[str, str] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.workflows or self.schedules)


def claim_next_rows(
    tx: Tx,
    *,
    now: datetime,
    limit: int,
    workflow_ids: Sequence[str],
    limits: RunLimits | None = None,
) -> list[ClaimedRow]:
    """Claim up to ``limit`` of the oldest pending runs of ``workflow_ids`` whose
    ``next_attempt_at`` (an automatic retry's) is not after ``now`` (``pending →
    running``, attempts + 1) in one driver statement: the driver's rows of
    :data:`CLAIMED_COLUMNS` (what executing a run reads), oldest first (``created_at``, ``id``),
    each decoded by a :func:`run_reader` when its run starts (``workflows.runner.Claim``);
    ``fence(row)`` is its ``(id, attempts)``.

    With ``limits``, a limited workflow's or schedule's runs are claimed apart: up to its
    ``max_concurrent`` less its runs running now; the rest stay pending until one ends. Claimers
    of one limited workflow or schedule take turns (PostgreSQL: a transaction-scoped advisory
    lock, taken before counting; SQLite: ``BEGIN IMMEDIATE`` already does)."""
    tx.require_writable()
    wanted = list(workflow_ids)
    if not wanted:
        return []
    if tx.is_postgres:
        ordered_scans_only(tx)
    if not limits:
        rows = _claimed(tx, _free_pick(tx, wanted, (), limit, instant_binder(tx)(now)), now)
    else:
        free = [w for w in wanted if w not in limits.workflows]
        apart = sorted(  # the limited schedules of free workflows are claimed apart too
            sid
            for sid, wid in limits.schedule_of.items()
            if sid in limits.schedules and wid in free
        )
        limited = [w for w in wanted if w in limits.workflows]
        ids = _limited_ids(tx, limited, apart, limits, limit, instant_binder(tx)(now))
        rows = _claimed(tx, _ids_pick(tx, ids), now) if ids else []
        if free and len(rows) < limit:
            at = instant_binder(tx)(now)
            rows += _claimed(tx, _free_pick(tx, free, apart, limit - len(rows), at), now)
    instant = instant_reader()
    rows.sort(key=lambda row: (instant(row[_MADE]), row[0]))
    return rows


def _limited_ids(
    tx: Tx, workflows: list[str], schedules: list[str], limits: RunLimits, limit: int, at: Any
) -> list[str]:
    """The pending runs to claim of limited ``workflows`` (each within its own and its limited
    schedules' room) and of limited ``schedules`` (of free workflows), ``limit`` at most."""
    mark = "%s" if tx.is_postgres else "?"
    keys = [f"workflow:{w}" for w in workflows] + [f"schedule:{s}" for s in limits.schedules]
    if tx.is_postgres and keys and (workflows or schedules):  # claimers of one take turns
        tx.conn.exec_driver_sql(
            "SELECT pg_advisory_xact_lock(hashtext(k)) FROM (SELECT k FROM"
            " unnest(CAST(%s AS text[])) AS k ORDER BY k) AS s",
            (sorted(keys),),
        )
    due = f"(next_attempt_at IS NULL OR next_attempt_at <= {mark})"  # an automatic retry's wait
    room_w = _room(tx, "trigger_id", workflows, limits.workflows)
    room_s = _room(tx, "schedule_id", list(limits.schedules), limits.schedules)
    full = [sid for sid, left in room_s.items() if left <= 0]
    ids: list[str] = []
    for wid in workflows:
        want = min(room_w[wid], limit - len(ids))
        if want <= 0:
            continue
        sql = f"SELECT id, schedule_id FROM runs WHERE {_PENDING}"
        sql += f" AND trigger_id = {mark} AND {due}"
        if full:
            sql += _not_of(mark, len(full))
        sql += f" ORDER BY updated_at, id LIMIT {mark}"
        for run_id, sid in driver_rows(tx.conn.exec_driver_sql(sql, (wid, at, *full, want))):
            if sid in room_s:
                if room_s[sid] <= 0:
                    continue
                room_s[sid] -= 1
            ids.append(str(run_id))
    for sid in schedules:
        want = min(room_s[sid], limit - len(ids))
        if want > 0:
            sql = f"SELECT id FROM runs WHERE {_PENDING}"
            sql += f" AND schedule_id = {mark} AND {due} ORDER BY updated_at, id LIMIT {mark}"
            got = driver_rows(tx.conn.exec_driver_sql(sql, (sid, at, want)))
            ids += [str(r[0]) for r in got]
    return ids


def _not_of(mark: str, count: int) -> str:
    """`` AND`` the run is of none of ``count`` schedules (parameters)."""
    return f" AND (schedule_id IS NULL OR schedule_id NOT IN ({', '.join([mark] * count)}))"


def _room(tx: Tx, column: str, keys: list[str], most: Mapping[str, int]) -> dict[str, int]:
    """For each of ``keys`` (of ``column``: the workflow, ``trigger_id``, or ``schedule_id``):
    its limit less its runs running now."""
    if not keys:
        return {}
    mark = "%s" if tx.is_postgres else "?"
    sql = (
        f"SELECT {column}, count(*) FROM runs WHERE {WORKFLOW_WHERE} AND status = 'running'"
        f" AND {column} IN ({', '.join([mark] * len(keys))}) GROUP BY {column}"
    )
    running = dict(driver_rows(tx.conn.exec_driver_sql(sql, tuple(keys))))
    return {key: most[key] - int(running.get(key, 0)) for key in keys}


def _free_pick(
    tx: Tx, wanted: Sequence[str], apart: Sequence[str], limit: int, at: Any
) -> tuple[str, tuple[Any, ...]]:
    """The pick of the oldest pending runs of ``wanted`` (none of the ``apart`` schedules)."""
    mark = "%s" if tx.is_postgres else "?"
    pick = (
        f"SELECT id FROM runs WHERE {_PENDING}"
        f" AND trigger_id IN ({', '.join([mark] * len(wanted))})"
        f" AND (next_attempt_at IS NULL OR next_attempt_at <= {mark})"
    )
    if apart:
        pick += _not_of(mark, len(apart))
    pick += f" ORDER BY updated_at, id LIMIT {mark}"
    if tx.is_postgres:
        pick += " FOR UPDATE SKIP LOCKED"
        where = f"id = ANY(ARRAY({pick})) AND (status || '') = 'pending'"
    else:
        where = f"id IN ({pick}) AND +status = 'pending'"
    return where, (*wanted, at, *apart, limit)


def _ids_pick(tx: Tx, ids: Sequence[str]) -> tuple[str, tuple[Any, ...]]:
    mark = "%s" if tx.is_postgres else "?"
    return f"id IN ({', '.join([mark] * len(ids))}) AND status = 'pending'", tuple(ids)


def _claimed(tx: Tx, pick: tuple[str, tuple[Any, ...]], now: datetime) -> list[ClaimedRow]:
    """``pending → running`` of the runs ``pick`` (a WHERE and its parameters) names."""
    where, params = pick
    mark = "%s" if tx.is_postgres else "?"
    at = instant_binder(tx)(now)
    sql = (
        f"UPDATE runs SET status = 'running', attempts = attempts + 1,"
        f" started_at = COALESCE(started_at, {mark}), updated_at = {mark},"
        " next_attempt_at = NULL"
        f" WHERE {where} RETURNING {_RETURNING}"
    )
    # the outer UPDATE goes by the primary key (the status test kept as the fence, but off the
    # status index, through which it walked every pending run per claim): PostgreSQL takes the
    # picked ids as one array (an init plan) instead of hash-joining every pending run
    return list(driver_rows(tx.conn.exec_driver_sql(sql, (at, at, *params))))


def fence(row: ClaimedRow) -> tuple[str, int]:
    """A claimed row's ``(id, attempts)``: what every later write of its run is fenced by."""
    return str(row[0]), int(row[3])


def run_reader() -> Callable[[ClaimedRow], dict[str, Any]]:
    """A decoder of claimed rows into dicts of :data:`CLAIMED_COLUMNS` (JSON decoded, instants
    aware, ``steps`` a list of its own), its instants memoized: a claim's rows share stamps."""
    instant = instant_reader()
    return lambda row: _decoded(row, instant)


# what executing a claimed run reads (``workflows.runner``, ``workflows.execute``), in this order:
# a claim returns these columns only (a 500-run claim's rows cross the wire and are decoded)
CLAIMED_COLUMNS = (
    "id",
    "workflow_id",
    "schedule_id",
    "attempts",
    "input",
    "steps",
    "initial_state",
    "request_context",
    "resume_data",
    "scheduled_for",
    "created_at",
    "updated_at",
    "attempt",
)
_MADE = CLAIMED_COLUMNS.index("created_at")
_RETURNING = ", ".join(  # JSON as its text (PostgreSQL too: decoded once, by json_value)
    f'CAST("{COLUMN_OF.get(n, n)}" AS text)' if n in JSON_COLUMNS else f'"{COLUMN_OF.get(n, n)}"'
    for n in CLAIMED_COLUMNS
)


def _decoded(row: Sequence[Any], instant: Callable[[Any], datetime | None]) -> dict[str, Any]:
    """A raw claimed row (:data:`CLAIMED_COLUMNS`) as a dict: JSON decoded, instants aware,
    ``steps`` a list of its own."""
    rid, wf, schedule, attempts, data, steps, state, context, resume, due, made, stamped, n = row
    return {
        "id": rid,
        "workflow_id": wf,
        "schedule_id": schedule,
        "attempts": attempts,
        "input": json_value(data),
        "steps": json_value(steps) or [],  # json_value makes a fresh list (run_dict's rule)
        "initial_state": json_value(state),
        "request_context": json_value(context),
        "resume_data": json_value(resume),
        "scheduled_for": instant(due),
        "created_at": instant(made),
        "updated_at": instant(stamped),
        "attempt": n,
    }


def claim_workflow_runs(
    tx: Tx,
    *,
    now: datetime,
    limit: int,
    workflow_ids: Sequence[str],
    limits: RunLimits | None = None,
) -> list[Run]:
    """:func:`claim_next_rows` as run values of the one queue (kind ``workflow``: the workflow
    in ``trigger_id``, the step receipts in ``action_results``)."""
    rows = claim_next_rows(tx, now=now, limit=limit, workflow_ids=workflow_ids, limits=limits)
    return [_run_value(run) for run in map(run_reader(), rows)]


def _run_value(run: dict[str, Any]) -> Run:
    return Run(
        id=str(run["id"]),
        table_id="",
        trigger_id=str(run["workflow_id"]),
        record_id=None,
        source="",
        clock=False,
        status=RunStatus.RUNNING,
        attempts=int(run["attempts"]),
        error=None,
        action_results=run["steps"],
        payload=None,
        definition=None,
        identity=None,
        scheduled_for=run["scheduled_for"],
        enqueued_at=None,
        created_at=run["created_at"],
        updated_at=run["updated_at"],
        started_at=None,
        finished_at=None,
        next_attempt_at=None,
        kind=WORKFLOW_KIND,
        schedule_id=run["schedule_id"],
        input=run["input"],
        initial_state=run["initial_state"],
        request_context=run["request_context"],
        resume_data=run["resume_data"],
        attempt=run["attempt"],
    )


__all__ = [
    "CLAIMED_COLUMNS",
    "ClaimedRow",
    "claim_next_rows",
    "claim_workflow_runs",
    "fence",
    "run_reader",
]
