"""Trigger state: one durable row per schedule trigger id (SPEC §5.1–§5.2).

The scheduler derives nothing from the run log; this row (with the ledger) is the memory:

- clock kinds (interval/daily/cron): ``anchor`` (windows start here), ``last_consumed`` (the last
  window claimed; a failed run's window counts), ``schedule_hash`` (detects re-anchoring edits)
- date kind: the rotating cursor ``(cursor_created_at, cursor_id)`` over live records
- ``retired``: the trigger was removed; state and ledger are kept and revived by its id
- ``next_due_at``: when this trigger may next be due (DESIGN §5)

State dicts: ``trigger_id, table_id, kind, anchor, last_consumed, cursor_created_at, cursor_id,
schedule_hash, retired, next_due_at, updated_at``. Writes take ``now``.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from sqlalchemy import RowMapping, String, bindparam, false, or_, select, true, update

from tocsin.store.dialects import upsert_insert
from tocsin.store.tables import trigger_state
from tocsin.store.tx import Tx

STATE_FIELDS = (
    "trigger_id",
    "table_id",
    "kind",
    "anchor",
    "last_consumed",
    "cursor_created_at",
    "cursor_id",
    "schedule_hash",
    "retired",
    "next_due_at",
    "updated_at",
)


def state_dict(row: RowMapping) -> dict[str, Any]:
    """A ``trigger_state`` row as a plain dict."""
    return {name: row[name] for name in STATE_FIELDS}


def get_states(tx: Tx, *, table_id: str) -> dict[str, dict[str, Any]]:
    """Every state row of a table (retired ones included), keyed by trigger id."""
    stmt = select(trigger_state).where(trigger_state.c.table_id == table_id)
    return {row["trigger_id"]: state_dict(row) for row in tx.conn.execute(stmt).mappings()}


def get_state(tx: Tx, *, trigger_id: str) -> dict[str, Any] | None:
    """One state row by trigger id, or None."""
    stmt = select(trigger_state).where(trigger_state.c.trigger_id == trigger_id)
    row = tx.conn.execute(stmt).mappings().one_or_none()
    return None if row is None else state_dict(row)


def upsert_state(
    tx: Tx,
    *,
    trigger_id: str,
    table_id: str,
    kind: str,
    anchor: datetime | None,
    schedule_hash: str | None,
    now: datetime,
    next_due_at: datetime | None,
) -> dict[str, Any] | None:
    """Create a trigger's state, or overwrite its config fields and un-retire it; None (nothing
    written) when the id's state belongs to another table.

    An existing row keeps its history: ``last_consumed`` and the date cursor are not touched.
    The ownership check is part of the statement, so two transactions that both saw no state for
    an id cannot hand one table's state to the other (PostgreSQL: the later one waits on the key,
    then finds the row taken).
    """
    tx.require_writable()
    fields = {
        "table_id": table_id,
        "kind": kind,
        "anchor": anchor,
        "schedule_hash": schedule_hash,
        "retired": False,
        "next_due_at": next_due_at,
        "updated_at": now,
    }
    stmt = (
        upsert_insert(tx, trigger_state)
        .values(trigger_id=trigger_id, **fields)
        .on_conflict_do_update(
            index_elements=["trigger_id"],
            set_=fields,
            where=trigger_state.c.table_id == table_id,
        )
        .returning(*trigger_state.c)
    )
    row = tx.conn.execute(stmt).mappings().one_or_none()
    return None if row is None else state_dict(row)


def retire_states(tx: Tx, *, table_id: str, keep_ids: Iterable[str], now: datetime) -> set[str]:
    """Retire the table's live states whose id is not in ``keep_ids``; returns the retired ids."""
    tx.require_writable()
    stmt = update(trigger_state).where(
        trigger_state.c.table_id == table_id, trigger_state.c.retired == false()
    )
    keep = sorted(set(keep_ids))
    if keep:
        stmt = stmt.where(trigger_state.c.trigger_id.not_in(keep))
    stmt = stmt.values(retired=True, updated_at=now).returning(trigger_state.c.trigger_id)
    return set(tx.conn.execute(stmt).scalars())


def revive_state(tx: Tx, *, trigger_id: str, now: datetime) -> bool:
    """Un-retire a trigger's state (ledger and history intact); True when it was retired."""
    tx.require_writable()
    stmt = (
        update(trigger_state)
        .where(trigger_state.c.trigger_id == trigger_id, trigger_state.c.retired == true())
        .values(retired=False, updated_at=now)
    )
    return tx.conn.execute(stmt).rowcount == 1


def reanchor_state(
    tx: Tx,
    *,
    trigger_id: str,
    anchor: datetime | None,
    schedule_hash: str | None,
    now: datetime,
    next_due_at: datetime | None,
) -> bool:
    """Apply a schedule edit (SPEC §5.2): new anchor and hash, cursor restarted.

    Clock kinds: windows re-anchor at ``anchor``; ``last_consumed`` stays (it is history).
    Date kind: the rotating cursor restarts; the ledger keeps consumed values consumed.
    """
    tx.require_writable()
    stmt = (
        update(trigger_state)
        .where(trigger_state.c.trigger_id == trigger_id)
        .values(
            anchor=anchor,
            schedule_hash=schedule_hash,
            cursor_created_at=None,
            cursor_id=None,
            next_due_at=next_due_at,
            updated_at=now,
        )
    )
    return tx.conn.execute(stmt).rowcount == 1


def advance_cursor(
    tx: Tx,
    *,
    trigger_id: str,
    created_at: datetime | None,
    record_id: str | None,
    now: datetime,
) -> None:
    """Move a date trigger's cursor to the last examined record (None, None = back to start)."""
    tx.require_writable()
    stmt = (
        update(trigger_state)
        .where(trigger_state.c.trigger_id == trigger_id)
        .values(cursor_created_at=created_at, cursor_id=record_id, updated_at=now)
    )
    tx.conn.execute(stmt)


def consume_window(
    tx: Tx, *, trigger_id: str, window: datetime, now: datetime, next_due_at: datetime | None
) -> bool:
    """Mark a clock window consumed; True unless a later window was already consumed.

    Eligibility: ``last_consumed`` is null or earlier than ``window`` (monotonic).
    """
    tx.require_writable()
    params = {"p_trigger_id": trigger_id, "p_window": window, "p_next": next_due_at, "p_now": now}
    return tx.conn.execute(_CONSUME, params).rowcount == 1


def _at(name: str) -> Any:
    return bindparam(name, type_=trigger_state.c.updated_at.type)


# prebuilt (the tick runs it once per fired clock trigger): values travel as parameters
_CONSUME = (
    update(trigger_state)
    .where(
        trigger_state.c.trigger_id == bindparam("p_trigger_id", type_=String()),
        or_(
            trigger_state.c.last_consumed.is_(None),
            trigger_state.c.last_consumed < _at("p_window"),
        ),
    )
    .values(last_consumed=_at("p_window"), next_due_at=_at("p_next"), updated_at=_at("p_now"))
)


def lower_next_due(tx: Tx, *, table_id: str, kind: str, next_due_at: datetime) -> int:
    """Move the ``next_due_at`` of a table's live states of ``kind`` earlier (never later).

    Eligibility: not retired, ``next_due_at`` later than the new value. Returns the row count.
    """
    tx.require_writable()
    stmt = (
        update(trigger_state)
        .where(
            trigger_state.c.table_id == table_id,
            trigger_state.c.kind == kind,
            trigger_state.c.retired == false(),
            trigger_state.c.next_due_at > next_due_at,
        )
        .values(next_due_at=next_due_at)
    )
    return int(tx.conn.execute(stmt).rowcount)


def set_next_due(tx: Tx, *, trigger_id: str, next_due_at: datetime | None) -> None:
    """Record when a trigger may next be due (None = unknown)."""
    tx.require_writable()
    stmt = (
        update(trigger_state)
        .where(trigger_state.c.trigger_id == trigger_id)
        .values(next_due_at=next_due_at)
    )
    tx.conn.execute(stmt)


__all__ = [
    "advance_cursor",
    "consume_window",
    "get_state",
    "get_states",
    "lower_next_due",
    "reanchor_state",
    "retire_states",
    "revive_state",
    "set_next_due",
    "state_dict",
    "upsert_state",
]
