"""Backfill of a workflow schedule: one run per instant of ``[start, end)``, in order.

The instants are the one decision's (:func:`tocsin.core.schedules.backfill.backfill`: the tick's
decision caught up in full over the range, the schedule's DST policy kept), and so are the skip
ranges recorded with them (``dst_gap``: a spring-forward gap inside the range whose wall times the
schedule matches), in the first chunk's transaction (recorded again, a range is kept once).

Idempotent through its own ledger namespace ``"backfill"``: an instant backfilled once is
claimed (``(backfill, schedule_id, instant)``) and never runs again, whatever the number of
calls; it never touches the scheduled namespace (``"workflow"``), so backfilled instants and
scheduled fires never consume each other. Written in chunks of :data:`CHUNK` instants, one
transaction each (a progress callback after each).
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from datetime import datetime

from tocsin.core.model import DueSchedule
from tocsin.core.schedules import backfill as decided
from tocsin.core.schedules.backfill import Backfill
from tocsin.core.schedules.skips import SkipRange
from tocsin.engine import fire
from tocsin.engine.ids import uuid7s
from tocsin.engine.schedule_rows import schedule_of
from tocsin.engine.schedules import schedule_run
from tocsin.store import workflow_runs as store_runs
from tocsin.store.tx import Store, Tx

LEDGER_NAMESPACE = "backfill"
MAX_WITHOUT_FORCE = 10_000
CHUNK = 500
Progress = Callable[[int, int], None]


def backfill_plan(row: DueSchedule, start: datetime, end: datetime, cap: int) -> Backfill:
    """The schedule's backfill over ``[start, end)``: its instants, oldest first (at most
    ``cap + 1``), and the skip ranges between them."""
    return decided.backfill(schedule_of(row), start, end, cap)


def run_backfill(
    store: Store,
    row: DueSchedule,
    plan: Backfill,
    *,
    now: datetime,
    progress: Progress | None = None,
    limited: Collection[str] = (),
) -> dict[str, int]:
    """Claim and start a run for each instant of ``plan`` not backfilled before, and record
    its skips: ``{"instants", "created", "existing"}``."""
    instants, created = list(plan.fires), 0
    for begin in range(0, len(instants), CHUNK):
        chunk = instants[begin : begin + CHUNK]
        ranges = plan.skips if begin == 0 else ()
        with store.begin() as tx:
            created += _backfill_chunk(tx, row, chunk, ranges, now, limited)
        if progress is not None:
            progress(begin + len(chunk), len(instants))
    return {"instants": len(instants), "created": created, "existing": len(instants) - created}


def _backfill_chunk(
    tx: Tx,
    row: DueSchedule,
    chunk: list[datetime],
    ranges: tuple[SkipRange, ...],
    now: datetime,
    limited: Collection[str] = (),
) -> int:
    """Fire ``chunk``'s instants not backfilled before, with ``ranges``; the runs created."""
    ids = uuid7s(now, len(chunk))
    firings = [
        (LEDGER_NAMESPACE, row.id, at.isoformat(), rid) for at, rid in zip(chunk, ids, strict=True)
    ]

    def write(claimed: list[int]) -> tuple[str, ...]:
        runs = [schedule_run(row, ids[i], chunk[i], now, trigger="backfill") for i in claimed]
        store_runs.insert_runs(tx, rows=runs, limited=limited)
        return ()

    return sum(map(bool, fire.fire(tx, firings, write, skips=ranges, now=now)))


__all__ = ["LEDGER_NAMESPACE", "MAX_WITHOUT_FORCE", "backfill_plan", "run_backfill"]
