"""Reads of the global dry run and the why-not views: named statements only."""

from __future__ import annotations

from sqlalchemy import select

from tocsin.core.model import Table, WorkflowSchedule
from tocsin.store.records import table_value
from tocsin.store.schedules import schedule_value
from tocsin.store.schema import tables, workflow_schedules
from tocsin.store.tx import Tx


def tables_with_triggers(tx: Tx) -> list[Table]:
    """Every table with a triggers config, trashed ones too, by id."""
    stmt = select(tables).where(tables.c.triggers.is_not(None)).order_by(tables.c.id)
    return [table_value(row) for row in tx.conn.execute(stmt).mappings()]


def all_schedules(tx: Tx) -> list[WorkflowSchedule]:
    """Every workflow schedule, by id."""
    stmt = select(workflow_schedules).order_by(workflow_schedules.c.id)
    return [schedule_value(r) for r in tx.conn.execute(stmt).mappings()]


__all__ = ["all_schedules", "tables_with_triggers"]
