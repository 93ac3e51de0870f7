"""Claiming workflow runs for a worker (SPEC §12): ``pending → running`` with ``attempts + 1``, the
oldest first, in one conditional UPDATE that returns what executing each run reads
(PostgreSQL: the pick is ``FOR UPDATE SKIP LOCKED``; SQLite: the caller holds ``store.begin()``,
which is ``BEGIN IMMEDIATE``). Every later write of the run is fenced by ``(status = 'running',
attempts)`` (``store.workflow_runs``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

from tocsin.store.bulk import driver_rows, instant_binder, instant_reader
from tocsin.store.dialects import ordered_scans_only
from tocsin.store.jsontext import json_value
from tocsin.store.tx import Tx
from tocsin.store.workflow_runs import JSON_COLUMNS

ClaimedRow = tuple[Any, ...]
"""A claimed run as the driver's row (:data:`CLAIMED_COLUMNS`, JSON as its text): a tuple of
plain values, which the collector stops tracking, where a dict of the run would be walked by
every pass while it waits in a claim's queue."""


def claim_next_rows(
    tx: Tx, *, now: datetime, limit: int, workflow_ids: Sequence[str]
) -> list[ClaimedRow]:
    """Claim up to ``limit`` of the oldest pending runs of ``workflow_ids`` whose
    ``next_attempt_at`` (an automatic retry's) is not after ``now`` (``pending →
    running``, attempts + 1) in one driver statement: the driver's rows of
    :data:`CLAIMED_COLUMNS` (what executing a run reads), oldest first (``created_at``, ``id``),
    each decoded by a :func:`run_reader` when its run starts (``workflows.runner.Claim``);
    ``fence(row)`` is its ``(id, attempts)``."""
    tx.require_writable()
    wanted = list(workflow_ids)
    if not wanted:
        return []
    mark = "%s" if tx.is_postgres else "?"
    at = instant_binder(tx)(now)
    pick = (
        "SELECT id FROM workflow_runs WHERE status = 'pending'"
        f" AND workflow_id IN ({', '.join([mark] * len(wanted))})"
        f" AND (next_attempt_at IS NULL OR next_attempt_at <= {mark})"
        f" ORDER BY updated_at, id LIMIT {mark}"
    )
    if tx.is_postgres:
        pick += " FOR UPDATE SKIP LOCKED"
        where = f"id = ANY(ARRAY({pick})) AND (status || '') = 'pending'"
    else:
        where = f"id IN ({pick}) AND +status = 'pending'"
    sql = (
        f"UPDATE workflow_runs SET status = 'running', attempts = attempts + 1,"
        f" started_at = COALESCE(started_at, {mark}), updated_at = {mark},"
        " next_attempt_at = NULL"
        f" WHERE {where} RETURNING {_RETURNING}"
    )
    if tx.is_postgres:
        ordered_scans_only(tx)
    # the outer UPDATE goes by the primary key (the status test kept as the fence, but off the
    # status index, through which it walked every pending run per claim): PostgreSQL takes the
    # picked ids as one array (an init plan) instead of hash-joining every pending run
    rows: list[ClaimedRow] = list(
        driver_rows(tx.conn.exec_driver_sql(sql, (at, at, *wanted, at, limit)))
    )
    instant = instant_reader()
    rows.sort(key=lambda row: (instant(row[_MADE]), row[0]))
    return rows


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
    f'CAST("{n}" AS text)' if n in JSON_COLUMNS else f'"{n}"' for n in CLAIMED_COLUMNS
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


__all__ = [
    "CLAIMED_COLUMNS",
    "ClaimedRow",
    "claim_next_rows",
    "fence",
    "run_reader",
]
