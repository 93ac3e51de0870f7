"""Backfill of a workflow schedule: one run per instant of ``[start, end)``, in order.

Idempotent through its own ledger namespace ``"backfill"``: an instant backfilled once is
claimed (``(backfill, schedule_id, instant)``) and never runs again, whatever the number of
calls; it never touches the scheduled namespace (``"workflow"``), so backfilled instants and
scheduled fires never consume each other. Written in chunks of :data:`CHUNK` instants, one
transaction each (a progress callback after each).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta

from tocsin.core.model import DueSchedule
from tocsin.core.time.instants import MIN_UTC
from tocsin.engine import fire
from tocsin.engine.ids import uuid7s
from tocsin.engine.schedule_rows import next_fire_after
from tocsin.engine.schedules import schedule_run
from tocsin.store import workflow_runs as store_runs
from tocsin.store.tx import Store, Tx

LEDGER_NAMESPACE = "backfill"
MAX_WITHOUT_FORCE = 10_000
CHUNK = 500
Progress = Callable[[int, int], None]


def backfill_instants(row: DueSchedule, start: datetime, end: datetime, cap: int) -> list[datetime]:
    """The schedule's instants in ``[start, end)``, oldest first, at most ``cap + 1``."""
    out: list[datetime] = []
    # the instant just before ``start``, so that ``start`` itself counts; the earliest datetime
    # has none (and lies before the years cron evaluates anyway)
    at: datetime | None = start - timedelta(microseconds=1) if start > MIN_UTC else start
    while len(out) <= cap:
        at = next_fire_after(row.cron, row.timezone, at) if at is not None else None
        if at is None or at >= end:
            break
        out.append(at)
    return out


def run_backfill(
    store: Store,
    row: DueSchedule,
    instants: list[datetime],
    *,
    now: datetime,
    progress: Progress | None = None,
) -> dict[str, int]:
    """Claim and start a run for each instant not backfilled before: ``{"instants",
    "created", "existing"}``."""
    created = 0
    for begin in range(0, len(instants), CHUNK):
        chunk = instants[begin : begin + CHUNK]
        with store.begin() as tx:
            created += _backfill_chunk(tx, row, chunk, now)
        if progress is not None:
            progress(begin + len(chunk), len(instants))
    return {"instants": len(instants), "created": created, "existing": len(instants) - created}


def _backfill_chunk(tx: Tx, row: DueSchedule, chunk: list[datetime], now: datetime) -> int:
    """Fire ``chunk``'s instants not backfilled before; the runs created."""
    ids = uuid7s(now, len(chunk))
    firings = [
        (LEDGER_NAMESPACE, row.id, at.isoformat(), rid) for at, rid in zip(chunk, ids, strict=True)
    ]

    def write(claimed: list[int]) -> tuple[str, ...]:
        runs = [schedule_run(row, ids[i], chunk[i], now, trigger="backfill") for i in claimed]
        store_runs.insert_runs(tx, rows=runs)
        return ()

    return sum(map(bool, fire.fire(tx, firings, write, now=now)))


__all__ = ["LEDGER_NAMESPACE", "MAX_WITHOUT_FORCE", "backfill_instants", "run_backfill"]
