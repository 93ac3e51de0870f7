"""``notify``: post a templated message to a chatroom's message feed (SPEC §10).

The chatroom is the table's own: a table in a chatroom scope posts to its ``scope_id``, and
``chatroom_id`` may only name that chatroom (a tenant never posts into another tenant's
feed). Saving a config is refused otherwise; a stored config that predates the rule
fails here, before anything is rendered or written (``core.config.targets.notify_chatroom``). A
table in a workspace or user scope has no chatroom feed: its notify actions are refused.

Recordless runs render ``$row.*`` as ``""`` (SPEC §4.5). The message is written in the same
transaction as the action's receipt (a :class:`~tocsin.actions.base.TransactionalAction`), so
a crash never posts it twice.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tocsin.actions.base import ActionContext, ActionError, sortable_id
from tocsin.core.config.targets import notify_chatroom
from tocsin.errors import ConfigError
from tocsin.store.chat import insert_message
from tocsin.store.tx import Tx


class Notify:
    type = "notify"

    def execute(self, ctx: ActionContext, config: Mapping[str, Any]) -> str:
        with ctx.env.store.begin() as tx:
            return self.execute_in(tx, ctx, config)

    def execute_in(self, tx: Tx, ctx: ActionContext, config: Mapping[str, Any]) -> str:
        table = ctx.table
        try:
            chatroom_id = notify_chatroom(
                config.get("chatroom_id"), scope=table.get("scope"), scope_id=table.get("scope_id")
            )
        except ConfigError as exc:
            raise ActionError(exc.detail) from None
        message = ctx.render(config.get("message", ""))
        text = message if isinstance(message, str) else str(message)
        insert_message(
            tx,
            message_id=sortable_id(ctx.now),
            chatroom_id=chatroom_id,
            text=text,
            now=ctx.now,
            table_id=ctx.run.get("table_id"),
            run_id=ctx.run.get("id"),
        )
        return f"notified chatroom {chatroom_id}"
