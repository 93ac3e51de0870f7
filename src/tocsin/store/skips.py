"""The skip ledger: due occurrences that did not fire, one row per range.

A row is ``(target_kind, table_id, target_id, reason, first_instant, last_instant, count)``: a
target is a table's trigger (a trigger id is unique within its table only), a workflow schedule
or a lane (``table_id`` ``''``). Writing a batch of ranges (:func:`record_skips`) is two set-based
statements whatever its size:

1. merge: a range whose ``after`` (the occurrence just before its first) is the
   ``last_instant`` of a row of the same target and reason extends that row (adjacent runs of
   one reason are one row);
2. insert the others; a range already recorded (same target, reason and first instant) keeps
   the wider of the two (a range seen again by a later tick is never counted twice).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import RowMapping, func, select

from tocsin.core.schedules import skips as core_skips
from tocsin.core.schedules.skips import SkipRange
from tocsin.store.bulk import instant_binder, with_rows
from tocsin.store.schema import skips
from tocsin.store.tx import Tx

_COLUMNS = (
    ("kind", "text"),
    ("tid", "text"),
    ("reason", "text"),
    ("fst", "timestamp"),
    ("lst", "timestamp"),
    ("cnt", "bigint"),
    ("aft", "timestamp"),
    ("al", "boolean"),
    ("tab", "text"),
    ("ua", "timestamp"),
)
_KEY = (
    "s.target_kind = v.kind AND s.table_id = v.tab AND s.target_id = v.tid AND s.reason = v.reason"
)
NO_TABLE = ""  # the table_id of a workflow schedule's or a lane's rows
_MERGE = (
    "UPDATE skips AS s SET last_instant = v.lst, count = s.count + v.cnt,"
    " at_least = (s.at_least OR v.al), updated_at = v.ua FROM v"
    f" WHERE {_KEY} AND v.aft IS NOT NULL AND s.last_instant = v.aft"
)
_INSERT = (
    "INSERT INTO skips (target_kind, target_id, reason, first_instant, last_instant, count,"
    " at_least, table_id, updated_at)"
    " SELECT kind, tid, reason, fst, lst, cnt, al, tab, ua FROM v WHERE NOT EXISTS"
    f" (SELECT 1 FROM skips AS s WHERE {_KEY} AND s.last_instant = v.lst)"
    " ON CONFLICT (target_kind, table_id, target_id, reason, first_instant) DO UPDATE SET"
    " count = CASE WHEN excluded.last_instant > skips.last_instant"
    " THEN excluded.count ELSE skips.count END,"
    " last_instant = CASE WHEN excluded.last_instant > skips.last_instant"
    " THEN excluded.last_instant ELSE skips.last_instant END,"
    " updated_at = excluded.updated_at"
)


def record_skips(tx: Tx, *, ranges: Sequence[SkipRange], now: datetime) -> None:
    """Record ``ranges`` (see the module docstring): two statements per batch."""
    tx.require_writable()
    if not ranges:
        return
    bind = instant_binder(tx)
    stamp = bind(now)
    rows = [
        (
            r.target_kind,
            r.target_id,
            r.reason,
            bind(r.first),
            bind(r.last),
            r.count,
            bind(r.after),
            r.at_least if tx.is_postgres else int(r.at_least),
            r.table_id or NO_TABLE,
            stamp,
        )
        for r in core_skips.merge_adjacent(ranges)
    ]
    merge = _MERGE
    if not tx.is_postgres:  # SQLite: no alias on the UPDATE target
        merge = merge.replace("skips AS s", "skips").replace("s.", "skips.")
    with_rows(tx, _COLUMNS, merge, rows)
    with_rows(tx, _COLUMNS, _INSERT, rows)


def list_skips(
    tx: Tx,
    *,
    target_kind: str,
    target_id: str,
    table_id: str = NO_TABLE,
    skip: int = 0,
    limit: int = 50,
    last_from: datetime | None = None,
    last_before: datetime | None = None,
) -> tuple[list[SkipRange], int]:
    """A target's skip ranges (a trigger: of ``table_id``), newest first; and how many there
    are. ``last_from`` (inclusive) and ``last_before`` (exclusive) narrow both to the ranges
    whose ``last_instant`` falls in that span (a history page's share of the ledger)."""
    where = [
        skips.c.target_kind == target_kind,
        skips.c.table_id == table_id,
        skips.c.target_id == target_id,
    ]
    if last_from is not None:
        where.append(skips.c.last_instant >= last_from)
    if last_before is not None:
        where.append(skips.c.last_instant < last_before)
    total = tx.conn.execute(select(func.count()).select_from(skips).where(*where)).scalar_one()
    stmt = (
        select(skips)
        .where(*where)
        .order_by(skips.c.last_instant.desc(), skips.c.reason)
        .offset(skip)
        .limit(limit)
    )
    return [skip_value(r) for r in tx.conn.execute(stmt).mappings()], int(total)


def skip_value(row: RowMapping) -> SkipRange:
    """A ``skips`` row as a :class:`SkipRange` (its ``table_id`` ``''`` for a schedule or a
    lane): the one place a stored range is read."""
    return SkipRange(
        target_kind=row["target_kind"],
        target_id=row["target_id"],
        reason=row["reason"],
        first=row["first_instant"],
        last=row["last_instant"],
        count=int(row["count"]),
        at_least=bool(row["at_least"]),
        table_id=row["table_id"],
    )


__all__ = ["NO_TABLE", "list_skips", "record_skips", "skip_value"]
