"""A schedule's history (a workflow schedule, a lane, a table trigger): its fires interleaved
with its skip ledger, newest first. Each kind pages its own fires (a table trigger's are its
scheduled runs, :func:`trigger_history`: no row of their own); :func:`history` interleaves them.

Two sources, one paging: the fires are paged exactly as the schedule's own fires are paged;
a page also carries the skip ranges whose ``last_instant`` falls in its share of time, from its
oldest fire (inclusive) up to the previous page's oldest fire (exclusive). The first page has
no upper bound (skips newer than every fire show there), the last page no lower bound (skips
older than every fire show there), so the shares partition time and each range shows on
exactly one page. A range sorts at its ``last_instant``, after a fire at the same instant.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from tocsin.core.schedules.skips import SCHEDULE, TRIGGER
from tocsin.service.whynot import skip_view
from tocsin.store import run_queries as store_run_queries
from tocsin.store import schedules as store_schedules
from tocsin.store import skips as store_skips
from tocsin.store.skips import NO_TABLE
from tocsin.store.tx import Tx

PAGE_SKIPS = 200  # the skip ranges one page shows at most (the newest of its share)

# ``(skip, limit) -> (fires newest scheduled instant first, total)``: each fire carries its
# ``scheduled_for``
FirePage = Callable[[int, int], tuple[list[dict[str, Any]], int]]


def schedule_history(tx: Tx, schedule_id: str, skip: int, limit: int) -> dict[str, Any]:
    """A workflow schedule's page (see :func:`history`)."""

    def fires(offset: int, count: int) -> tuple[list[dict[str, Any]], int]:
        page, total = store_schedules.list_fires(
            tx, schedule_id=schedule_id, skip=offset, limit=count
        )
        return [f.as_dict() for f in page], total

    return history(tx, fires, SCHEDULE, schedule_id, skip, limit)


def trigger_history(
    tx: Tx, table_id: str, trigger_id: str, skip: int, limit: int
) -> dict[str, Any]:
    """A table trigger's page (see :func:`history`), its fires read from its runs."""

    def fires(offset: int, count: int) -> tuple[list[dict[str, Any]], int]:
        page, total = store_run_queries.list_trigger_fires(
            tx, table_id=table_id, trigger_id=trigger_id, skip=offset, limit=count
        )
        return [f.as_dict() for f in page], total

    return history(tx, fires, TRIGGER, trigger_id, skip, limit, table_id=table_id)


def history(
    tx: Tx,
    fires: FirePage,
    target_kind: str,
    target_id: str,
    skip: int,
    limit: int,
    *,
    table_id: str = NO_TABLE,
) -> dict[str, Any]:
    """One page of a target's fires with its skips (see the module docstring): ``{"items",
    "total", "skip", "limit", "skips_left_off"}``; an item is a fire (``kind: "fire"``, the
    fire's own fields) or a skip range (``kind: "skip"``, the fields of
    ``Tocsin.schedules.skips``); ``total`` counts the fires (the pages); ``skips_left_off`` the
    ranges of the page's share beyond :data:`PAGE_SKIPS`."""
    before = max(skip - 1, 0)  # one fire more: the previous page's oldest bounds this share
    rows, total = fires(before, limit + (skip - before))
    upper: datetime | None = None
    if skip:
        if not rows or len(rows) == 1:  # past the last page: its share was shown there
            return _page([], total, skip, limit, 0)
        upper, rows = rows[0]["scheduled_for"], rows[1:]
    lower = rows[-1]["scheduled_for"] if rows and skip + len(rows) < total else None
    ranges, in_share = store_skips.list_skips(
        tx,
        target_kind=target_kind,
        table_id=table_id,
        target_id=target_id,
        limit=PAGE_SKIPS,
        last_from=lower,
        last_before=upper,
    )
    keyed = [((f["scheduled_for"], 1), {"kind": "fire", **f}) for f in rows]
    keyed += [((r.last, 0), {"kind": "skip", **skip_view(r)}) for r in ranges]
    keyed.sort(key=lambda pair: pair[0], reverse=True)  # stable: fires keep their order
    return _page([item for _, item in keyed], total, skip, limit, in_share - len(ranges))


def _page(items: list[Any], total: int, skip: int, limit: int, left_off: int) -> dict[str, Any]:
    return {
        "items": items,
        "total": total,
        "skip": skip,
        "limit": limit,
        "skips_left_off": left_off,
    }


__all__ = ["PAGE_SKIPS", "FirePage", "history", "schedule_history", "trigger_history"]
