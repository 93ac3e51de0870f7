"""Claiming workflow runs for a worker (SPEC §12) as driver rows: the one claim of the run queue
(``store.runs.claimed_rows``, which ``claim_scoped_runs`` returns as ``Run`` values), for the
workflow runner until it takes those: ``pending → running`` with ``attempts + 1``, in one
conditional UPDATE that returns what executing each run reads (PostgreSQL: the pick is ``FOR
UPDATE SKIP LOCKED``; SQLite: the caller holds ``store.begin()``, which is ``BEGIN
IMMEDIATE``). Every later write of the run is fenced by ``(status = 'running', attempts)``
(``store.workflow_runs``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import Text, cast

from tocsin.core.model import Run
from tocsin.store.bulk import instant_reader
from tocsin.store.jsontext import json_value
from tocsin.store.runs import RunLimits, claim_scoped_runs, claimed_rows
from tocsin.store.schema import runs
from tocsin.store.tx import Tx
from tocsin.store.workflow_runs import COLUMN_OF, JSON_COLUMNS

ClaimedRow = tuple[Any, ...]
"""A claimed run as the driver's row (:data:`CLAIMED_COLUMNS`, JSON as its text): a tuple of
plain values, which the collector stops tracking, where a dict of the run would be walked by
every pass while it waits in a claim's queue."""


def claim_next_rows(
    tx: Tx,
    *,
    now: datetime,
    limit: int,
    workflow_ids: Sequence[str],
    limits: RunLimits | None = None,
) -> list[ClaimedRow]:
    """Claim up to ``limit`` pending runs of ``workflow_ids`` whose ``next_attempt_at`` (an
    automatic retry's) is not after ``now`` (``pending → running``, attempts + 1) by the one claim
    (``store.runs.claimed_rows``: a workflow's and each schedule's runs are scopes taken in turn,
    the oldest of each first; ``limits``, a limited workflow's or schedule's runs up to its
    ``max_concurrent`` less its runs running, the rest pending until one ends): the driver's
    rows of :data:`CLAIMED_COLUMNS` (what executing a run reads), oldest first (``created_at``,
    ``id``), each decoded by a :func:`run_reader` when its run starts
    (``workflows.runner.Claim``); ``fence(row)`` is its ``(id, attempts)``."""
    if not workflow_ids:
        return []
    rows = claimed_rows(
        tx, _CLAIMED, now=now, limit=limit, actions=False, workflows=workflow_ids, limits=limits
    )
    out: list[ClaimedRow] = [tuple(row[:_WIDTH]) for row in rows]
    instant = instant_reader()
    out.sort(key=lambda row: (instant(row[_MADE]), row[0]))
    return out


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
_WIDTH = len(CLAIMED_COLUMNS)
# what the claim returns of each run: JSON as its text (PostgreSQL too: decoded once, by
# json_value, as its run starts)
_CLAIMED = tuple(
    cast(runs.c[COLUMN_OF.get(n, n)], Text).label(n)
    if n in JSON_COLUMNS
    else runs.c[COLUMN_OF.get(n, n)].label(n)
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
    """The one claim (``store.runs.claim_scoped_runs``) of workflow runs only: run values of the
    one queue (kind ``workflow``: the workflow in ``trigger_id``, the step receipts in
    ``action_results``), in creation order."""
    if not workflow_ids:
        return []
    claimed = claim_scoped_runs(
        tx, now=now, limit=limit, actions=False, workflows=workflow_ids, limits=limits
    )
    return [run for run, _scope in claimed]


__all__ = [
    "CLAIMED_COLUMNS",
    "ClaimedRow",
    "RunLimits",
    "claim_next_rows",
    "claim_workflow_runs",
    "fence",
    "run_reader",
]
