"""``create_record``, ``update_record``, ``delete_record`` (SPEC §10) and the approval gate (§9.6).

Writes go through the facade's :class:`~tocsin.actions.base.RecordWriter`, so validation and row
events apply as for any write. The target table is ``table_id`` (default: the run's table); it
must be live and in the run's table's scope (another scope's table is another tenant's). A
target table marked ``requires_approval`` gets a *staged change* instead of the write; the action
succeeds with the change id in its receipt, and the write happens when a moderator approves and a
worker applies it (``tocsin.runs.approvals``).

``record`` is ``"$row"`` (the run's record; also the default) or a templated record id.
Recordless runs (interval/daily) have no ``$row``: delete fails with the SPEC §4.5 text, update
with its counterpart.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tocsin import messages
from tocsin.actions.base import ActionContext, ActionError, sortable_id
from tocsin.core.model import Table
from tocsin.store.approvals import stage_change
from tocsin.store.records import get_table


def target_table(ctx: ActionContext, config: Mapping[str, Any]) -> Table:
    table_id = str(ctx.render(config.get("table_id") or ctx.run["table_id"]))
    return scoped_table(ctx, table_id)


def scoped_table(ctx: ActionContext, table_id: str) -> Table:
    """The live table ``table_id`` if it is in the run's own scope (checked at every attempt).

    A table of another scope is another tenant's: it is reported exactly like a missing one, so
    an action cannot probe which table ids exist elsewhere.
    """
    with ctx.env.store.read() as tx:
        table = get_table(tx, table_id=table_id)
    own = (ctx.table.get("scope"), ctx.table.get("scope_id"))
    if table is None or (table.scope, table.scope_id) != own:
        raise ActionError(messages.target_table_missing(table_id))
    return table


def record_values(
    ctx: ActionContext, config: Mapping[str, Any], action_type: str
) -> dict[str, Any]:
    values = ctx.render(config.get("values", {}))
    if not isinstance(values, Mapping):
        raise ActionError(messages.record_values_not_object(action_type))
    return dict(values)


def target_record(ctx: ActionContext, config: Mapping[str, Any], needs_row: str) -> str:
    raw = config.get("record", config.get("record_id", "$row"))
    if raw == "$row":
        if ctx.recordless or not ctx.run.get("record_id"):
            raise ActionError(needs_row)
        return str(ctx.run["record_id"])
    rendered = ctx.render(raw)
    if not isinstance(rendered, str) or not rendered:
        raise ActionError(messages.RECORD_ID_EMPTY)
    return rendered


def staged(
    ctx: ActionContext,
    table: Table,
    operation: str,
    record_id: str | None,
    values: dict[str, Any],
) -> str:
    change = {
        "id": sortable_id(ctx.now),
        "table_id": table.id,
        "run_id": ctx.run["id"],
        "action_id": ctx.action_id,
        "operation": operation,
        "record_id": record_id,
        "values": values,
    }
    with ctx.env.store.begin() as tx:
        row = stage_change(tx, change=change, now=ctx.now)
    return messages.change_staged(row.id, operation)


class CreateRecord:
    type = "create_record"

    def execute(self, ctx: ActionContext, config: Mapping[str, Any]) -> str:
        table = target_table(ctx, config)
        values = record_values(ctx, config, self.type)
        if table.requires_approval:
            return staged(ctx, table, "create", None, values)
        record_id = ctx.env.records.create_record(table.id, values, now=ctx.now)
        return messages.record_written("created", record_id, table.id)


class UpdateRecord:
    type = "update_record"

    def execute(self, ctx: ActionContext, config: Mapping[str, Any]) -> str:
        record_id = target_record(ctx, config, messages.UPDATE_RECORD_NEEDS_ROW)
        table = target_table(ctx, config)
        values = record_values(ctx, config, self.type)
        if table.requires_approval:
            return staged(ctx, table, "update", record_id, values)
        ctx.env.records.update_record(table.id, record_id, values, now=ctx.now)
        return messages.record_written("updated", record_id, table.id)


class DeleteRecord:
    type = "delete_record"

    def execute(self, ctx: ActionContext, config: Mapping[str, Any]) -> str:
        record_id = target_record(ctx, config, messages.DELETE_RECORD_NEEDS_ROW)
        table = target_table(ctx, config)
        if table.requires_approval:
            return staged(ctx, table, "delete", record_id, {})
        ctx.env.records.delete_record(table.id, record_id, now=ctx.now)
        return messages.record_written("deleted", record_id, table.id)
