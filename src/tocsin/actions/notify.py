"""``notify``: post a templated message to a chatroom's message feed (SPEC §10).

The chatroom is the action's ``chatroom_id``, else the table's own scope id when the table lives
in a chatroom scope. Recordless runs render ``$row.*`` as ``""`` (SPEC §4.5). The message is
written in the same transaction as the action's receipt (a
:class:`~tocsin.actions.base.TransactionalAction`), so a crash never posts it twice.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tocsin.actions.base import ActionContext, ActionError, sortable_id
from tocsin.store.messages import insert_message
from tocsin.store.tx import Tx


class Notify:
    type = "notify"

    def execute(self, ctx: ActionContext, config: Mapping[str, Any]) -> str:
        with ctx.env.store.begin() as tx:
            return self.execute_in(tx, ctx, config)

    def execute_in(self, tx: Tx, ctx: ActionContext, config: Mapping[str, Any]) -> str:
        chatroom_id = config.get("chatroom_id")
        if not chatroom_id and ctx.table.get("scope") == "chatroom":
            chatroom_id = ctx.table.get("scope_id")
        if not isinstance(chatroom_id, str) or not chatroom_id:
            raise ActionError("notify needs a 'chatroom_id' (the table is not in a chatroom scope)")
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
