"""User tables and their records (SPEC §1–§2): one named statement per function (STYLE R4).

Tables are :class:`~tocsin.core.model.Table` values, built here only (:func:`table_value`);
``Table.as_dict()`` is the table dict (``id, scope, scope_id, name, columns, triggers,
scp_rules, requires_approval, trashed, next_due_at, last_ticked_at, created_at, updated_at``).
Record dicts: ``id, table_id, data, trashed, created_at, updated_at``.
Datetimes are aware UTC. Writes take ``now``; nothing here reads the clock.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import RowMapping, false, func, literal, null, select, tuple_, update

from tocsin.core.model import Table
from tocsin.store.coltypes import UTCDateTime
from tocsin.store.schema import records, tables
from tocsin.store.tx import Tx

RECORD_FIELDS = ("id", "table_id", "data", "trashed", "created_at", "updated_at")


def table_value(row: RowMapping) -> Table:
    """A ``tables`` row as a :class:`Table`: the one place a table value is built."""
    return Table(
        id=row["id"],
        scope=row["scope"],
        scope_id=row["scope_id"],
        name=row["name"],
        columns=row["columns"],
        triggers=row["triggers"],
        scp_rules=row["scp_rules"],
        requires_approval=bool(row["requires_approval"]),
        trashed=bool(row["trashed"]),
        next_due_at=row["next_due_at"],
        last_ticked_at=row["last_ticked_at"],
        created_at=row["created_at"],
        updated_at=row["updated_at"],
    )


def record_dict(row: RowMapping) -> dict[str, Any]:
    """A ``records`` row as a plain dict."""
    return {name: row[name] for name in RECORD_FIELDS}


def _json_or_null(value: object) -> object:
    """Python None → SQL NULL (never JSON ``null``)."""
    return null() if value is None else value


# ── tables ──────────────────────────────────────────────────────────────────────────────────


def insert_table(
    tx: Tx,
    *,
    id: str,
    scope: str,
    scope_id: str,
    name: str,
    columns: Mapping[str, str],
    now: datetime,
    requires_approval: bool = False,
    scp_rules: list[Any] | None = None,
) -> Table:
    """Create a live table without triggers; returns it."""
    tx.require_writable()
    stmt = (
        tables.insert()
        .values(
            id=id,
            scope=scope,
            scope_id=scope_id,
            name=name,
            columns=dict(columns),
            triggers=null(),
            scp_rules=_json_or_null(scp_rules),
            requires_approval=requires_approval,
            trashed=False,
            created_at=now,
            updated_at=now,
        )
        .returning(*tables.c)
    )
    return table_value(tx.conn.execute(stmt).mappings().one())


def get_table(tx: Tx, *, table_id: str, include_trashed: bool = False) -> Table | None:
    """One table by id; None when missing (or trashed, unless ``include_trashed``)."""
    stmt = select(tables).where(tables.c.id == table_id)
    if not include_trashed:
        stmt = stmt.where(tables.c.trashed == false())
    row = tx.conn.execute(stmt).mappings().one_or_none()
    return None if row is None else table_value(row)


def table_names(tx: Tx, *, table_ids: Iterable[str]) -> dict[str, str]:
    """The names of those of ``table_ids`` that exist (trashed ones too), by id."""
    wanted = sorted(set(table_ids))
    if not wanted:
        return {}
    stmt = select(tables.c.id, tables.c.name).where(tables.c.id.in_(wanted))
    return {str(r.id): str(r.name) for r in tx.conn.execute(stmt)}


def list_tables(tx: Tx, *, scope: str, scope_id: str, include_trashed: bool = False) -> list[Table]:
    """The tables of one scope, oldest first."""
    stmt = select(tables).where(tables.c.scope == scope, tables.c.scope_id == scope_id)
    if not include_trashed:
        stmt = stmt.where(tables.c.trashed == false())
    stmt = stmt.order_by(tables.c.created_at, tables.c.id)
    return [table_value(row) for row in tx.conn.execute(stmt).mappings()]


def page_tables(
    tx: Tx, *, scope: str | None, scope_id: str | None, skip: int, limit: int
) -> tuple[list[Table], int]:
    """A page of live tables (of one scope when given), oldest first; and the total. The scope
    filter uses ``ix_tables_scope``; only ``limit`` rows are read."""
    where = [tables.c.trashed == false()]
    if scope is not None:
        where.append(tables.c.scope == scope)
    if scope_id is not None:
        where.append(tables.c.scope_id == scope_id)
    total = tx.conn.execute(select(func.count()).select_from(tables).where(*where)).scalar_one()
    stmt = (
        select(tables)
        .where(*where)
        .order_by(tables.c.created_at, tables.c.id)
        .offset(skip)
        .limit(limit)
    )
    return [table_value(row) for row in tx.conn.execute(stmt).mappings()], int(total)


def set_table_trashed(tx: Tx, *, table_id: str, trashed: bool, now: datetime) -> bool:
    """Trash or restore a table; True only when its state changed (conditional write)."""
    tx.require_writable()
    stmt = (
        update(tables)
        .where(tables.c.id == table_id, tables.c.trashed != trashed)
        .values(trashed=trashed, updated_at=now)
    )
    return tx.conn.execute(stmt).rowcount == 1


def set_table_triggers(
    tx: Tx, *, table_id: str, triggers: list[dict[str, Any]] | None, now: datetime
) -> bool:
    """Replace a table's triggers config (None → SQL NULL) and reset next_due_at; True if found."""
    tx.require_writable()
    stmt = (
        update(tables)
        .where(tables.c.id == table_id)
        .values(triggers=_json_or_null(triggers), next_due_at=None, updated_at=now)
    )
    return tx.conn.execute(stmt).rowcount == 1


def set_table_scp_rules(
    tx: Tx, *, table_id: str, scp_rules: list[Any] | None, now: datetime
) -> bool:
    """Replace a table's channel SCP rules (None → SQL NULL); True if found."""
    tx.require_writable()
    stmt = (
        update(tables)
        .where(tables.c.id == table_id)
        .values(scp_rules=_json_or_null(scp_rules), updated_at=now)
    )
    return tx.conn.execute(stmt).rowcount == 1


def set_table_next_due(tx: Tx, *, table_id: str, next_due_at: datetime | None) -> None:
    """Record when the table may next have due work (None = evaluate at every tick)."""
    tx.require_writable()
    stmt = update(tables).where(tables.c.id == table_id).values(next_due_at=next_due_at)
    tx.conn.execute(stmt)


def lower_table_next_due(tx: Tx, *, table_id: str, next_due_at: datetime) -> bool:
    """Move the table's ``next_due_at`` earlier (never later); True when it changed.

    Eligibility: ``next_due_at`` is later than the new value (NULL already means "evaluate").
    """
    tx.require_writable()
    stmt = (
        update(tables)
        .where(tables.c.id == table_id, tables.c.next_due_at > next_due_at)
        .values(next_due_at=next_due_at)
    )
    return tx.conn.execute(stmt).rowcount == 1


# ── records ─────────────────────────────────────────────────────────────────────────────────


def insert_records(
    tx: Tx, *, table_id: str, rows: Sequence[Mapping[str, Any]], now: datetime
) -> list[dict[str, Any]]:
    """Insert live records (each ``{"id", "data"}``) in one statement; returns their dicts."""
    tx.require_writable()
    values = [
        {
            "id": row["id"],
            "table_id": table_id,
            "data": dict(row["data"]),
            "trashed": False,
            "created_at": now,
            "updated_at": now,
        }
        for row in rows
    ]
    if values:
        tx.conn.execute(records.insert(), values)
    return [{name: value[name] for name in RECORD_FIELDS} for value in values]


def get_record(
    tx: Tx, *, table_id: str, record_id: str, include_trashed: bool = False
) -> dict[str, Any] | None:
    """One record of a table; None when missing (or trashed, unless ``include_trashed``)."""
    stmt = select(records).where(records.c.table_id == table_id, records.c.id == record_id)
    if not include_trashed:
        stmt = stmt.where(records.c.trashed == false())
    row = tx.conn.execute(stmt).mappings().one_or_none()
    return None if row is None else record_dict(row)


def update_record_data(
    tx: Tx, *, table_id: str, record_id: str, data: Mapping[str, Any], now: datetime
) -> dict[str, Any] | None:
    """Replace a record's whole ``data`` (the caller merges patches); None when missing."""
    tx.require_writable()
    stmt = (
        update(records)
        .where(records.c.table_id == table_id, records.c.id == record_id)
        .values(data=dict(data), updated_at=now)
        .returning(*records.c)
    )
    row = tx.conn.execute(stmt).mappings().one_or_none()
    return None if row is None else record_dict(row)


def set_record_trashed(
    tx: Tx, *, table_id: str, record_id: str, trashed: bool, now: datetime
) -> dict[str, Any] | None:
    """Trash or restore a record; its dict only when its state changed, else None."""
    tx.require_writable()
    stmt = (
        update(records)
        .where(
            records.c.table_id == table_id,
            records.c.id == record_id,
            records.c.trashed != trashed,
        )
        .values(trashed=trashed, updated_at=now)
        .returning(*records.c)
    )
    row = tx.conn.execute(stmt).mappings().one_or_none()
    return None if row is None else record_dict(row)


def list_records(
    tx: Tx, *, table_id: str, skip: int, limit: int, include_trashed: bool = False
) -> tuple[list[dict[str, Any]], int]:
    """A page of a table's records ordered by (created_at, id), and the total count."""
    where = [records.c.table_id == table_id]
    if not include_trashed:
        where.append(records.c.trashed == false())
    total = tx.conn.execute(select(func.count()).select_from(records).where(*where)).scalar_one()
    stmt = (
        select(records)
        .where(*where)
        .order_by(records.c.created_at, records.c.id)
        .offset(skip)
        .limit(limit)
    )
    items = [record_dict(row) for row in tx.conn.execute(stmt).mappings()]
    return items, int(total)


def count_live_records(tx: Tx, *, table_id: str) -> int:
    """How many live (not trashed) records a table has."""
    stmt = (
        select(func.count())
        .select_from(records)
        .where(records.c.table_id == table_id, records.c.trashed == false())
    )
    return int(tx.conn.execute(stmt).scalar_one())


def page_live_records(
    tx: Tx, *, table_id: str, after: tuple[datetime, str] | None, limit: int
) -> list[dict[str, Any]]:
    """The tick's cursor page: live records strictly after ``after`` in (created_at, id) order
    (a range seek of ``ix_records_page`` on both backends: docs/INTERNALS.md, "The tick")."""
    stmt = select(records).where(records.c.table_id == table_id, records.c.trashed == false())
    if after is not None:
        created_at, record_id = after
        key = tuple_(records.c.created_at, records.c.id)
        stmt = stmt.where(key > tuple_(literal(created_at, UTCDateTime()), literal(record_id)))
    stmt = stmt.order_by(records.c.created_at, records.c.id).limit(limit)
    return [record_dict(row) for row in tx.conn.execute(stmt).mappings()]


page_records = page_live_records  # the name docs/INTERNALS.md lists


def lock_table(tx: Tx, *, table_id: str) -> Table | None:
    """Lock one live table row for a config write and return it; None when missing or trashed.

    Serialises config writes (triggers, SCP rules) with each other and with the tick, so the
    SPEC §2 exclusivity and the kind-change guard read the config they replace. PostgreSQL:
    ``SELECT … FOR UPDATE`` (waits for a tick or another config write holding it). SQLite: call
    inside ``store.begin()`` (``BEGIN IMMEDIATE``: one writer at a time).
    """
    tx.require_writable()
    stmt = select(tables).where(tables.c.id == table_id, tables.c.trashed == false())
    if tx.is_postgres:
        stmt = stmt.with_for_update(of=tables)
    row = tx.conn.execute(stmt).mappings().one_or_none()
    return None if row is None else table_value(row)


__all__ = [
    "count_live_records",
    "get_record",
    "get_table",
    "insert_records",
    "insert_table",
    "list_records",
    "list_tables",
    "lock_table",
    "lower_table_next_due",
    "page_live_records",
    "page_records",
    "page_tables",
    "record_dict",
    "set_record_trashed",
    "set_table_next_due",
    "set_table_scp_rules",
    "set_table_trashed",
    "set_table_triggers",
    "table_names",
    "table_value",
]
