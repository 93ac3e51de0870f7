"""The chatroom message feed that ``notify`` writes (SPEC §10)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import func, select

from tocsin.core.model import ChatMessage
from tocsin.store.bulk import instant_binder, with_rows
from tocsin.store.errors import map_db_errors
from tocsin.store.schema import chat_messages
from tocsin.store.tx import Tx

_INSERT = (
    "INSERT INTO chat_messages (id, chatroom_id, table_id, run_id, text, created_at)"
    " SELECT mid, room, tab, rid, txt, ca FROM v"
)
_COLUMNS = (
    *(("mid", "text"), ("room", "text"), ("tab", "text"), ("rid", "text"), ("txt", "text")),
    ("ca", "timestamp"),
)


def _write(tx: Tx, rows: list[ChatMessage]) -> None:
    """Messages (``insert_message``'s) in one statement (``store.bulk``)."""
    bind = instant_binder(tx)
    values = [(m.id, m.chatroom_id, m.table_id, m.run_id, m.text, bind(m.created_at)) for m in rows]
    with_rows(tx, _COLUMNS, _INSERT, values)


def insert_message(
    tx: Tx,
    *,
    message_id: str,
    chatroom_id: str,
    text: str,
    now: datetime,
    table_id: str | None = None,
    run_id: str | None = None,
) -> ChatMessage:
    """Append one message to a chatroom's feed; returns it. In a batch's transaction it is
    written with the batch's other messages, before the commit (``Tx.append``)."""
    message = ChatMessage(message_id, chatroom_id, table_id, run_id, text, now)
    tx.append(_write, message)
    return message


def list_messages(
    tx: Tx, *, chatroom_id: str, skip: int, limit: int
) -> tuple[list[ChatMessage], int]:
    """One page of a chatroom's feed, newest first (as runs are); and how many there are. Ids
    are time-sortable, so messages of one instant come newest first too."""
    where = chat_messages.c.chatroom_id == chatroom_id
    page = (
        select(chat_messages)
        .where(where)
        .order_by(chat_messages.c.created_at.desc(), chat_messages.c.id.desc())
        .offset(skip)
        .limit(limit)
    )
    with map_db_errors():
        items = [ChatMessage(**r._mapping) for r in tx.conn.execute(page)]
        total = tx.conn.execute(select(func.count()).where(where)).scalar_one()
    return items, int(total)
