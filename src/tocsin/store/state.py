"""Trigger state: one durable row per schedule trigger id of a table (SPEC §5.1–§5.2).

A trigger id is unique within its table only: every function here is keyed by
``(table_id, trigger_id)`` (two tables, two tenants, may use the same id independently).

The scheduler derives nothing from the run log; this row (with the ledger) is the memory:

- clock kinds (interval/daily/cron): ``anchor`` (windows start here), ``last_consumed`` (the last
  window claimed; a failed run's window counts), ``schedule_hash`` (detects re-anchoring edits)
- date kind: the rotating cursor ``(cursor_created_at, cursor_id)`` over live records
- ``retired``: the trigger was removed; state and ledger are kept and revived by its id
- ``next_due_at``: when this trigger may next be due (DESIGN §5)

Reads answer :class:`~tocsin.core.model.TriggerState` values (``trigger_id, table_id, kind,
anchor, last_consumed, cursor_created_at, cursor_id, schedule_hash, retired, next_due_at,
updated_at, paused_at, pause_windows, definition_hash``), built here only
(:func:`state_value`, for typed rows and the tick's raw driver rows alike). Writes take
``now``.

Pause: ``paused_at`` is set while a trigger is paused; it lives here, not in the
triggers config, so a config save never unpauses (retiring the id does). A date trigger's past
pauses are kept in ``pause_windows`` (JSON ``[[from, until], ...]``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Generator, Iterable, Iterator, Mapping, Sequence
from dataclasses import fields
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import ColumnElement, RowMapping, false, select, true, update

from tocsin.core.model import TriggerState
from tocsin.store.bulk import driver_rows, instant_binder, instant_reader, update_rows
from tocsin.store.dialects import upsert_insert
from tocsin.store.schema import trigger_state
from tocsin.store.tx import Tx

STATE_FIELDS = tuple(f.name for f in fields(TriggerState))  # its columns: the value's fields
_COLUMNS = ", ".join(STATE_FIELDS)
IN_CHUNK = 500  # ids per IN (...) list on SQLite: well under its bound-parameter limit
_STAMP = ("t", "timestamp")  # the bulk rows' updated_at
_V_KEY = "trigger_state.table_id = v.tab AND trigger_state.trigger_id = v.tid"  # the bulk rows' key


def _as_is(value: datetime | None) -> datetime | None:
    return value  # a row read through ``UTCDateTime``: its instants are aware already


def state_value(
    values: Sequence[Any], instant: Callable[[Any], datetime | None] = _as_is
) -> TriggerState:
    """One ``trigger_state`` row (its values in :data:`STATE_FIELDS` order) as a
    :class:`TriggerState`, the one place a state value is built; ``instant`` reads its datetimes
    (raw driver rows: ``bulk.instant_reader()``; rows read through ``UTCDateTime``: as is)."""
    tid, tab, kind, anchor, last, cur_at, cur_id, sh, retired, nxt, upd, paused, pw, dh = values
    head = (str(tid), str(tab), kind, instant(anchor), instant(last), instant(cur_at), cur_id, sh)
    tail = (bool(retired), instant(nxt), instant(upd), instant(paused), read_windows(pw), dh)
    return TriggerState(*head, *tail)


def _state(row: RowMapping) -> TriggerState:
    return state_value([row[name] for name in STATE_FIELDS])


def read_windows(value: object) -> tuple[tuple[datetime, datetime], ...]:
    """Stored ``pause_windows`` (JSON, its text on a raw SQLite read, or NULL) as instant pairs."""
    if isinstance(value, str):
        value = json.loads(value)
    if not isinstance(value, list):
        return ()
    return tuple((_instant(a), _instant(b)) for a, b in value)


def _instant(text: str) -> datetime:
    at = datetime.fromisoformat(text)
    return at.replace(tzinfo=UTC) if at.tzinfo is None else at.astimezone(UTC)


def write_windows(windows: Sequence[tuple[datetime, datetime]]) -> list[list[str]] | None:
    """``pause_windows`` as stored: ISO pairs (None when there is none)."""
    return [[a.isoformat(), b.isoformat()] for a, b in windows] or None


def stream_states(
    tx: Tx, *, table_ids: Iterable[str]
) -> Generator[tuple[str, dict[str, TriggerState]], None, None]:
    """Every state row (retired ones included) of ``table_ids``, one table at a time in table id
    order: ``(table id, trigger id → state)``, each id once (``{}`` when it has none), read as
    the caller consumes them (the tick holds one table's states at a time)."""
    ids = sorted({str(i) for i in table_ids})
    instant = instant_reader()
    rows = _state_rows(tx, ids)
    row = next(rows, None)
    for table_id in ids:
        states: dict[str, TriggerState] = {}
        while row is not None and row[1] == table_id:
            state = state_value(row, instant)
            states[state.trigger_id] = state
            row = next(rows, None)
        yield table_id, states


def _state_rows(tx: Tx, ids: list[str]) -> Iterator[Sequence[Any]]:
    """The state rows of ``ids`` (sorted) in the primary key's order, as driver rows."""
    order = " ORDER BY table_id, trigger_id"
    if tx.is_postgres:
        sql = f"SELECT {_COLUMNS} FROM trigger_state WHERE table_id = ANY(%s){order}"
        yield from driver_rows(tx.conn.exec_driver_sql(sql, (ids,)))
        return
    for start in range(0, len(ids), IN_CHUNK):
        chunk = ids[start : start + IN_CHUNK]
        marks = ", ".join("?" * len(chunk))
        sql = f"SELECT {_COLUMNS} FROM trigger_state WHERE table_id IN ({marks}){order}"
        yield from driver_rows(tx.conn.exec_driver_sql(sql, tuple(chunk)))


def states_of_tables(tx: Tx, *, table_ids: Sequence[str]) -> dict[str, dict[str, TriggerState]]:
    """:func:`stream_states` as one mapping: table id → trigger id → state."""
    return dict(stream_states(tx, table_ids=table_ids))


def get_states(tx: Tx, *, table_id: str) -> dict[str, TriggerState]:
    """Every state row of a table (retired ones included), keyed by trigger id."""
    return states_of_tables(tx, table_ids=[table_id])[table_id]


def _key(table_id: str, trigger_id: str) -> tuple[ColumnElement[bool], ColumnElement[bool]]:
    return trigger_state.c.table_id == table_id, trigger_state.c.trigger_id == trigger_id


def get_state(tx: Tx, *, table_id: str, trigger_id: str) -> TriggerState | None:
    """One state row by table and trigger id, or None."""
    stmt = select(trigger_state).where(*_key(table_id, trigger_id))
    row = tx.conn.execute(stmt).mappings().one_or_none()
    return None if row is None else _state(row)


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
) -> TriggerState:
    """Create a table's trigger state, or overwrite its config fields and un-retire it.

    An existing row keeps its history: ``last_consumed`` and the date cursor are not touched.
    """
    tx.require_writable()
    fields = {
        "kind": kind,
        "anchor": anchor,
        "schedule_hash": schedule_hash,
        "retired": False,
        "next_due_at": next_due_at,
        "updated_at": now,
    }
    stmt = (
        upsert_insert(tx, trigger_state)
        .values(table_id=table_id, trigger_id=trigger_id, **fields)
        .on_conflict_do_update(index_elements=["table_id", "trigger_id"], set_=fields)
        .returning(*trigger_state.c)
    )
    return _state(tx.conn.execute(stmt).mappings().one())


def retire_states(tx: Tx, *, table_id: str, keep_ids: Iterable[str], now: datetime) -> set[str]:
    """Retire the table's live states whose id is not in ``keep_ids`` (a pause ends with its
    trigger: a revived id starts unpaused); returns the retired ids."""
    tx.require_writable()
    stmt = update(trigger_state).where(
        trigger_state.c.table_id == table_id, trigger_state.c.retired == false()
    )
    keep = sorted(set(keep_ids))
    if keep:
        stmt = stmt.where(trigger_state.c.trigger_id.not_in(keep))
    stmt = stmt.values(retired=True, paused_at=None, updated_at=now)
    stmt = stmt.returning(trigger_state.c.trigger_id)
    return set(tx.conn.execute(stmt).scalars())


def revive_state(tx: Tx, *, table_id: str, trigger_id: str, now: datetime) -> bool:
    """Un-retire a trigger's state (ledger and history intact); True when it was retired."""
    tx.require_writable()
    stmt = (
        update(trigger_state)
        .where(*_key(table_id, trigger_id), trigger_state.c.retired == true())
        .values(retired=False, updated_at=now)
    )
    return tx.conn.execute(stmt).rowcount == 1


def reanchor_state(
    tx: Tx,
    *,
    table_id: str,
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
        .where(*_key(table_id, trigger_id))
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


# (table_id, trigger_id, cursor_created_at, cursor_id)
Cursor = tuple[str, str, datetime | None, str | None]


def advance_cursors(tx: Tx, *, cursors: Sequence[Cursor], now: datetime) -> None:
    """Move date triggers' cursors to their last examined record (None, None = the start)."""
    bind = instant_binder(tx)
    update_rows(
        tx,
        (("tab", "text"), ("tid", "text"), ("c", "timestamp"), ("i", "text"), _STAMP),
        "UPDATE trigger_state SET cursor_created_at = v.c, cursor_id = v.i, updated_at = v.t"
        f" FROM v WHERE {_V_KEY}",
        [(tab, tid, bind(at), rid, bind(now)) for tab, tid, at, rid in cursors],
        "UPDATE trigger_state SET cursor_created_at = ?3, cursor_id = ?4, updated_at = ?5"
        " WHERE table_id = ?1 AND trigger_id = ?2",
    )


Consumed = tuple[str, str, datetime, datetime | None]  # (table_id, trigger_id, window, next_due)


def consume_windows(tx: Tx, *, consumed: Sequence[Consumed], now: datetime) -> None:
    """Mark clock windows consumed, with each trigger's next due instant; a row's
    ``last_consumed`` only moves forward (null or earlier than the window)."""
    bind = instant_binder(tx)
    update_rows(
        tx,
        (("tab", "text"), ("tid", "text"), ("w", "timestamp"), ("n", "timestamp"), _STAMP),
        "UPDATE trigger_state SET last_consumed = v.w, next_due_at = v.n, updated_at = v.t"
        f" FROM v WHERE {_V_KEY}"
        " AND (trigger_state.last_consumed IS NULL OR trigger_state.last_consumed < v.w)",
        [(tab, tid, bind(w), bind(n), bind(now)) for tab, tid, w, n in consumed],
        "UPDATE trigger_state SET last_consumed = ?3, next_due_at = ?4, updated_at = ?5"
        " WHERE table_id = ?1 AND trigger_id = ?2"
        " AND (last_consumed IS NULL OR last_consumed < ?3)",
    )


def lower_next_due(tx: Tx, *, table_id: str, kind: str, next_due_at: datetime) -> int:
    """Move the ``next_due_at`` of a table's live states of ``kind`` earlier (never later).

    Eligibility: not retired, not paused, ``next_due_at`` later than the new value. Returns the
    row count.
    """
    tx.require_writable()
    stmt = (
        update(trigger_state)
        .where(
            trigger_state.c.table_id == table_id,
            trigger_state.c.kind == kind,
            trigger_state.c.retired == false(),
            trigger_state.c.paused_at.is_(None),
            trigger_state.c.next_due_at > next_due_at,
        )
        .values(next_due_at=next_due_at)
    )
    return int(tx.conn.execute(stmt).rowcount)


def pause_state(tx: Tx, *, table_id: str, trigger_id: str, now: datetime) -> bool:
    """Pause a live trigger at ``now``; False (nothing written) when it is already paused.

    Eligibility: not retired, ``paused_at`` unset (idempotent: the first pause instant stays).
    """
    tx.require_writable()
    stmt = (
        update(trigger_state)
        .where(
            *_key(table_id, trigger_id),
            trigger_state.c.retired == false(),
            trigger_state.c.paused_at.is_(None),
        )
        .values(paused_at=now, updated_at=now)
    )
    return tx.conn.execute(stmt).rowcount == 1


def resume_state(
    tx: Tx,
    *,
    table_id: str,
    trigger_id: str,
    last_consumed: datetime | None,
    pause_windows: Sequence[tuple[datetime, datetime]],
    next_due_at: datetime | None,
    now: datetime,
) -> bool:
    """Resume a paused trigger: ``paused_at`` cleared, with what the pause consumed (clock:
    ``last_consumed``; date: ``pause_windows``) and the next due instant computed from ``now``.

    Eligibility: ``paused_at`` set (idempotent: False when it was not paused).
    """
    tx.require_writable()
    stmt = (
        update(trigger_state)
        .where(*_key(table_id, trigger_id), trigger_state.c.paused_at.is_not(None))
        .values(
            paused_at=None,
            last_consumed=last_consumed,
            pause_windows=write_windows(pause_windows),
            next_due_at=next_due_at,
            updated_at=now,
        )
    )
    return tx.conn.execute(stmt).rowcount == 1


def set_next_dues(tx: Tx, *, next_dues: Sequence[tuple[str, str, datetime | None]]) -> None:
    """``(table_id, trigger_id, next_due_at)``: when each trigger may next be due (None:
    unknown)."""
    bind = instant_binder(tx)
    update_rows(
        tx,
        (("tab", "text"), ("tid", "text"), ("n", "timestamp")),
        f"UPDATE trigger_state SET next_due_at = v.n FROM v WHERE {_V_KEY}",
        [(tab, tid, bind(n)) for tab, tid, n in next_dues],
        "UPDATE trigger_state SET next_due_at = ?3 WHERE table_id = ?1 AND trigger_id = ?2",
    )


def set_definition_hashes(tx: Tx, *, table_id: str, hashes: Mapping[str, str]) -> None:
    """Each trigger's current definition (trigger id → its ``trigger_definitions`` hash)."""
    update_rows(
        tx,
        (("tab", "text"), ("tid", "text"), ("h", "text")),
        f"UPDATE trigger_state SET definition_hash = v.h FROM v WHERE {_V_KEY}",
        [(table_id, tid, digest) for tid, digest in hashes.items()],
        "UPDATE trigger_state SET definition_hash = ?3 WHERE table_id = ?1 AND trigger_id = ?2",
    )


__all__ = [
    "Consumed",
    "Cursor",
    "advance_cursors",
    "consume_windows",
    "get_state",
    "get_states",
    "lower_next_due",
    "pause_state",
    "read_windows",
    "reanchor_state",
    "resume_state",
    "retire_states",
    "revive_state",
    "set_definition_hashes",
    "set_next_dues",
    "state_value",
    "states_of_tables",
    "stream_states",
    "upsert_state",
]
