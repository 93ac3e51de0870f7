"""Reads of the global dry run and the why-not views: named statements only."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from tocsin.core.model import WorkflowSchedule
from tocsin.store.schedules import schedule_value
from tocsin.store.schema import tables, workflow_schedules
from tocsin.store.tx import Tx


def tables_with_triggers(tx: Tx) -> list[dict[str, Any]]:
    """Every table with a triggers config, trashed ones too: ``{id, columns, triggers, trashed,
    next_due_at}``, by id."""
    stmt = (
        select(
            tables.c.id,
            tables.c.columns,
            tables.c.triggers,
            tables.c.trashed,
            tables.c.next_due_at,
        )
        .where(tables.c.triggers.is_not(None))
        .order_by(tables.c.id)
    )
    out = []
    for row in tx.conn.execute(stmt).mappings():
        item = dict(row)
        item["id"] = str(item["id"])
        out.append(item)
    return out


def all_schedules(tx: Tx) -> list[WorkflowSchedule]:
    """Every workflow schedule, by id."""
    stmt = select(workflow_schedules).order_by(workflow_schedules.c.id)
    return [schedule_value(r) for r in tx.conn.execute(stmt).mappings()]


__all__ = ["all_schedules", "tables_with_triggers"]
