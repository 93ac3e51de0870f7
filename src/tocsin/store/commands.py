"""``invoke_command`` idempotency keys on ``command_results`` (SPEC §9.5, §10).

Row states: *reserved* (an attempt is calling the command) → *succeeded* (result stored).
A failed attempt deletes its reservation, so a retry with the same key calls again; a key that
already succeeded answers with its stored result and the command is not called again. A
reservation older than the stale window belongs to a crashed worker and may be taken over.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import delete, select, update
from sqlalchemy.dialects import postgresql, sqlite

from tocsin.core.model import CommandResult, CommandSlot
from tocsin.store.errors import map_db_errors
from tocsin.store.schema import command_results
from tocsin.store.tx import Tx


def _insert(tx: Tx) -> Any:
    return postgresql.insert(command_results) if tx.is_postgres else sqlite.insert(command_results)


def reserve_command(
    tx: Tx, *, key: str, command: str, now: datetime, stale_after_s: float
) -> CommandSlot:
    """Reserve ``key`` for one call: ``reserved``, ``succeeded`` (with the stored result) or
    ``busy``.

    - new key, or a reservation older than ``stale_after_s``: reserved for this caller;
    - a key that already succeeded: ``succeeded`` with its stored result (do not call again);
    - a live reservation of another attempt: ``busy``.
    """
    tx.require_writable()
    stmt = (
        _insert(tx)
        .values(key_row(key, command, now))
        .on_conflict_do_nothing(index_elements=["idempotency_key"])
        .returning(command_results.c.idempotency_key)
    )
    with map_db_errors():
        if tx.conn.execute(stmt).first() is not None:
            return CommandSlot("reserved")
        row = tx.conn.execute(
            select(command_results).where(command_results.c.idempotency_key == key)
        ).first()
    if row is None:  # released between our insert and read: try again next attempt
        return CommandSlot("busy")
    if row.status == "succeeded":
        return CommandSlot("succeeded", row.result)
    return _take_over_stale(tx, key=key, now=now, stale_after_s=stale_after_s)


def key_row(key: str, command: str, now: datetime) -> dict[str, Any]:
    return {
        "idempotency_key": key,
        "command": command,
        "status": "reserved",
        "result": None,
        "created_at": now,
        "updated_at": now,
    }


def _take_over_stale(tx: Tx, *, key: str, now: datetime, stale_after_s: float) -> CommandSlot:
    cutoff = now - timedelta(seconds=stale_after_s)
    stmt = (
        update(command_results)
        .where(
            command_results.c.idempotency_key == key,
            command_results.c.status == "reserved",
            command_results.c.updated_at < cutoff,
        )
        .values(updated_at=now)
    )
    with map_db_errors():
        taken = tx.conn.execute(stmt).rowcount == 1
    return CommandSlot("reserved" if taken else "busy")


def complete_command(tx: Tx, *, key: str, result: Any, now: datetime) -> None:
    """``reserved → succeeded`` with the command's (JSON) result."""
    tx.require_writable()
    stmt = (
        update(command_results)
        .where(command_results.c.idempotency_key == key)
        .values(status="succeeded", result=result, updated_at=now)
    )
    with map_db_errors():
        tx.conn.execute(stmt)


def release_command(tx: Tx, *, key: str) -> None:
    """Drop a reservation after a failed attempt, so the same key may be tried again."""
    tx.require_writable()
    stmt = delete(command_results).where(
        command_results.c.idempotency_key == key, command_results.c.status == "reserved"
    )
    with map_db_errors():
        tx.conn.execute(stmt)


def get_command_result(tx: Tx, *, key: str) -> CommandResult | None:
    """The stored row of ``key`` (tests and operators read it)."""
    with map_db_errors():
        row = tx.conn.execute(
            select(command_results).where(command_results.c.idempotency_key == key)
        ).first()
    return None if row is None else CommandResult(**row._mapping)
