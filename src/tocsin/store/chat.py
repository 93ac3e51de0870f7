"""The chatroom message feed that ``notify`` writes (SPEC §10)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import func, select

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
_KEYS = ("id", "chatroom_id", "table_id", "run_id", "text", "created_at")


def _write(tx: Tx, rows: list[dict[str, Any]]) -> None:
    """Messages (``insert_message``'s rows) in one statement (``store.bulk``)."""
    bind = instant_binder(tx)
    values = [(*(row[key] for key in _KEYS[:5]), bind(row["created_at"])) for row in rows]
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
) -> dict[str, Any]:
    """Append one message to a chatroom's feed; returns it. In a batch's transaction it is
    written with the batch's other messages, before the commit (``Tx.append``)."""
    row = {
        "id": message_id,
        "chatroom_id": chatroom_id,
        "table_id": table_id,
        "run_id": run_id,
        "text": text,
        "created_at": now,
    }
    tx.append(_write, row)
    return row


def list_messages(tx: Tx, *, chatroom_id: str, skip: int, limit: int) -> dict[str, Any]:
    """One page of a chatroom's feed, newest first (as runs are): ``{"items", "total", "skip",
    "limit"}``. Ids are time-sortable, so messages of one instant come newest first too."""
    where = chat_messages.c.chatroom_id == chatroom_id
    page = (
        select(chat_messages)
        .where(where)
        .order_by(chat_messages.c.created_at.desc(), chat_messages.c.id.desc())
        .offset(skip)
        .limit(limit)
    )
    with map_db_errors():
        items = [dict(r._mapping) for r in tx.conn.execute(page)]
        total = tx.conn.execute(select(func.count()).where(where)).scalar_one()
    return {"items": items, "total": int(total), "skip": skip, "limit": limit}
