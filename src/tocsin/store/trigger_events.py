"""The event outbox, compound-trigger schedule state and workflow definition hashes (SPEC §13).

Named statements only; the rules live in ``tocsin.engine.trees``.

- An event row is inserted in the transaction of its cause (a record write, a workflow run's
  success, a sync that changed a definition): it exists exactly when its cause committed.
- The tick claims events (PostgreSQL ``FOR UPDATE SKIP LOCKED``: two schedulers claim disjoint
  events) and deletes them in the transaction that updates the latches they set, so an event
  counts once.
- The schedules with a trigger tree are locked in id order, waiting (not skipping) when events
  were claimed: two schedulers update the latches one after the other, never over each other.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from functools import cache
from itertools import chain
from typing import Any

from sqlalchemy import (
    RowMapping,
    String,
    all_,
    bindparam,
    delete,
    exists,
    func,
    insert,
    or_,
    select,
    text,
    update,
)
from sqlalchemy.dialects.postgresql import ARRAY

from tocsin.core.model import TriggerEvent, WorkflowSchedule
from tocsin.store.bulk import instant_binder, with_rows
from tocsin.store.coltypes import UTCDateTime
from tocsin.store.dialects import keyed_access_only, upsert_insert
from tocsin.store.schedules import schedule_value
from tocsin.store.schema import (
    trigger_events,
    workflow_definitions,
    workflow_schedules,
)
from tocsin.store.tx import Tx

E = trigger_events
S = workflow_schedules
D = workflow_definitions
IN_CHUNK = 500
MAX_PATTERNS = 100  # more distinct events in one claim: lock every tree schedule instead


_LISTENED = exists().where(  # the tree schedules only (``ix_workflow_schedules_listening``)
    S.c.trigger_keys.is_not(None), S.c.trigger_keys.like(bindparam("p_pattern"), escape="\\")
)
_INSERT_IF_LISTENED = insert(E).from_select(
    ["kind", "subject", "occurred_at"],
    select(
        bindparam("p_kind", type_=String()),
        bindparam("p_subject", type_=String()),
        bindparam("p_at", type_=UTCDateTime()),
    ).where(_LISTENED),
)


def _pattern(kind: str, subject: str) -> str:
    text = f"{kind}:{subject}".replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"% {text} %"


def insert_events(tx: Tx, *, events: Iterable[tuple[str, str]], now: datetime) -> None:
    """Record ``(kind, subject)`` events that happened at ``now`` — each only when some
    schedule's tree listens to it (``trigger_keys``), in the same statement: a write nobody
    listens to leaves no row behind."""
    rows = [
        {"p_kind": k, "p_subject": s, "p_at": now, "p_pattern": _pattern(k, s)} for k, s in events
    ]
    if rows:
        tx.require_writable()
        tx.conn.execute(_INSERT_IF_LISTENED, rows)


_EVENT_COLUMNS = (("k", "text"), ("s", "text"), ("at", "timestamp"), ("p", "text"))
_INSERT_MANY_IF_LISTENED = (  # the listened keys read once per statement, not once per event
    ", keys AS MATERIALIZED (SELECT trigger_keys FROM workflow_schedules"
    " WHERE trigger_keys IS NOT NULL)"
    " INSERT INTO trigger_events (kind, subject, occurred_at) SELECT v.k, v.s, v.at FROM v"
    " WHERE EXISTS (SELECT 1 FROM keys WHERE keys.trigger_keys LIKE v.p ESCAPE '\\')"
)


# in the partial index's order, so it is walked even while the statistics do not know the table
# (PostgreSQL then read every plain schedule of a fresh burst, as bench/workflow_bench.py writes)
_ANY_LISTENER = select(S.c.id).where(S.c.trigger_keys.is_not(None)).order_by(S.c.id).limit(1)


def insert_events_at(tx: Tx, *, events: Iterable[tuple[str, str, datetime]]) -> None:
    """:func:`insert_events` for many ``(kind, subject, occurred_at)`` events (a batch of
    finished runs'), in one statement per chunk (``bulk.with_rows``): each row only when some
    schedule's tree listens to it, judged in that statement. With no tree schedule at all (the
    usual case), nothing is sent: measured ~7 ms per 1,000 finished runs on PostgreSQL. ``events``
    may be lazy: it is read only when some schedule listens."""
    found = iter(events)
    first = next(found, None)
    if first is None:
        return
    tx.require_writable()
    if tx.conn.execute(_ANY_LISTENER).first() is None:  # one index probe instead of the batch
        return
    bind = instant_binder(tx)
    rows = [(k, s, bind(at), _pattern(k, s)) for k, s, at in chain((first,), found)]
    with_rows(tx, _EVENT_COLUMNS, _INSERT_MANY_IF_LISTENED, rows)


_PASS_LOCK = text(
    "SELECT pg_advisory_xact_lock(hashtextextended('tocsin-compound:' || current_schema(), 0))"
)


def serialize_pass(tx: Tx) -> None:
    """PostgreSQL: wait until no other scheduler is in its compound pass (a transaction-level
    advisory lock of this schema, released at commit). Without it, a scheduler whose event claim
    skipped the events another holds could evaluate a due time trigger before those earlier
    events were latched (``AND(T1, E1)`` would lose its fire at T1), and two schedulers holding
    different events could apply them to one tree out of order. SQLite has one writer anyway."""
    if tx.is_postgres:
        tx.require_writable()
        tx.conn.execute(_PASS_LOCK)


def event_value(row: RowMapping) -> TriggerEvent:
    """An outbox row as a :class:`TriggerEvent`: the one place an event value is built."""
    return TriggerEvent(
        id=int(row["id"]), kind=row["kind"], subject=row["subject"], occurred_at=row["occurred_at"]
    )


def claim_events(tx: Tx, *, limit: int) -> list[TriggerEvent]:
    """Up to ``limit`` events, oldest first, locked (PostgreSQL: skipping locked ones)."""
    tx.require_writable()
    stmt = _claim_events(tx.is_postgres, limit)
    return [event_value(r) for r in tx.conn.execute(stmt).mappings()]


@cache
def _claim_events(postgres: bool, limit: int) -> Any:
    """:func:`claim_events`'s statement, built once per dialect and page size (every tick)."""
    stmt = select(E).order_by(E.c.id).limit(limit)
    return stmt.with_for_update(skip_locked=True) if postgres else stmt


def peek_events(tx: Tx, *, limit: int | None) -> list[TriggerEvent]:
    """Up to ``limit`` events (None: every one), oldest first, as :func:`claim_events` would
    take them, without locking (for the global dry run)."""
    stmt = select(E).order_by(E.c.id).limit(limit)
    return [event_value(r) for r in tx.conn.execute(stmt).mappings()]


def delete_events(tx: Tx, *, ids: Sequence[int]) -> None:
    tx.require_writable()
    for start in range(0, len(ids), IN_CHUNK):
        tx.conn.execute(delete(E).where(E.c.id.in_(list(ids[start : start + IN_CHUNK]))))


def count_events(tx: Tx) -> int:
    return int(tx.conn.execute(select(func.count()).select_from(E)).scalar_one())


def lock_trigger_schedules(
    tx: Tx, *, events: Iterable[tuple[str, str]], now: datetime
) -> list[WorkflowSchedule]:
    """The unpaused schedules with a trigger tree that listen to one of ``events`` (``(kind,
    subject)``) or are due at ``now``, locked in id order (waiting for locks)."""
    tx.require_writable()
    pairs = sorted(set(events))
    stmt = select(S).where(S.c.trigger_tree.is_not(None), S.c.paused_at.is_(None)).order_by(S.c.id)
    if len(pairs) <= MAX_PATTERNS:
        wanted = [S.c.next_fire_at <= now]
        wanted += [S.c.trigger_keys.like(_pattern(k, s), escape="\\") for k, s in pairs]
        stmt = stmt.where(or_(*wanted))
    if tx.is_postgres:
        stmt = stmt.with_for_update()
        keyed_access_only(tx)  # ix_workflow_schedules_trees: the tree schedules only
    return [schedule_value(r) for r in tx.conn.execute(stmt).mappings()]


def claim_due_trigger_schedules(
    tx: Tx,
    *,
    now: datetime,
    limit: int,
    only: str | None = None,
    skip: Sequence[str] = (),
    claimed: list[str] | None = None,
) -> list[WorkflowSchedule]:
    """Unpaused schedules with a trigger tree and ``next_fire_at <= now``, the earliest due
    first (``next_fire_at, id``: the order of the cron schedules' claim, and of an index
    ``(next_fire_at, id)`` over the running tree schedules, so a page stops at ``limit``),
    locked (PostgreSQL: skipping rows another scheduler holds). Only the schedule ``only`` when
    given, none of ``skip``: filters of the claim statement, which still reads that index in
    its order. The id of each row claimed is appended to ``claimed`` (when given) before any
    row is decoded."""
    tx.require_writable()
    if tx.is_postgres:
        # ix_workflow_schedules_tree_due in its order, not every plain schedule (the planner,
        # without statistics, read the whole table on every tick; EXPLAIN in 0032_treedue)
        keyed_access_only(tx)
    stmt = _claim_due_trees(tx.is_postgres, limit, only is not None, bool(skip))
    params: dict[str, Any] = {"now": now}
    if only is not None:
        params["only"] = only
    if skip:  # one parameter however many: an array; SQLite, a JSON list read as a set
        params["skip"] = list(skip) if tx.is_postgres else json.dumps(list(skip))
    rows = tx.conn.execute(stmt, params).mappings().all()
    if claimed is not None:
        claimed += [r["id"] for r in rows]
    return [schedule_value(r) for r in rows]


@cache
def _claim_due_trees(postgres: bool, limit: int, only: bool, skip: bool) -> Any:
    """:func:`claim_due_trigger_schedules`'s statement, built once per dialect, page size and
    filters (every tick); binds ``now`` (and ``only``, ``skip``)."""
    stmt = (
        select(S)
        .where(S.c.trigger_tree.is_not(None), S.c.paused_at.is_(None))
        .where(
            S.c.next_fire_at.is_not(None),
            S.c.next_fire_at <= bindparam("now", type_=S.c.next_fire_at.type),
        )
        .order_by(S.c.next_fire_at, S.c.id)
        .limit(limit)
    )
    if only:
        stmt = stmt.where(S.c.id == bindparam("only", type_=String))
    if skip and postgres:
        stmt = stmt.where(S.c.id != all_(bindparam("skip", type_=ARRAY(String))))
    elif skip:
        listed = func.json_each(bindparam("skip", type_=String)).table_valued("value")
        stmt = stmt.where(S.c.id.not_in(select(listed.c.value)))
    return stmt.with_for_update(skip_locked=True) if postgres else stmt


_SAVE = (
    update(S)
    .where(S.c.id == bindparam("p_id"))
    .values(
        latches=bindparam("p_latches"),
        evaluated_at=bindparam("p_evaluated"),
        next_fire_at=bindparam("p_next"),
        last_fire_id=bindparam("p_fire"),
        updated_at=bindparam("p_now"),
    )
)


def save_trigger_states(tx: Tx, *, states: Sequence[Mapping[str, Any]], now: datetime) -> None:
    """Write back each schedule's ``latches``, ``evaluated_at``, ``next_fire_at`` and
    ``last_fire_id`` (``states``: dicts with those keys and ``id``)."""
    if not states:
        return
    tx.require_writable()
    rows = [
        {
            "p_id": s["id"],
            "p_latches": s["latches"],
            "p_evaluated": s["evaluated_at"],
            "p_next": s["next_fire_at"],
            "p_fire": s["last_fire_id"],
            "p_now": now,
        }
        for s in states
    ]
    tx.conn.execute(_SAVE, rows)


def definition_hashes(tx: Tx, *, workflow_ids: Iterable[str]) -> dict[str, str]:
    """The stored definition hash of each workflow that has one, locked (PostgreSQL): two
    processes syncing at once compare one after the other, so a change emits one event."""
    wanted = sorted(set(workflow_ids))
    if not wanted:
        return {}
    stmt = select(D.c.workflow_id, D.c.hash).where(D.c.workflow_id.in_(wanted))
    stmt = stmt.order_by(D.c.workflow_id)
    if tx.is_postgres:
        stmt = stmt.with_for_update()
    return {r.workflow_id: r.hash for r in tx.conn.execute(stmt)}


def put_definition_hash(tx: Tx, *, workflow_id: str, digest: str, now: datetime) -> None:
    tx.require_writable()
    stmt = upsert_insert(tx, D).values(workflow_id=workflow_id, hash=digest, updated_at=now)
    stmt = stmt.on_conflict_do_update(
        index_elements=["workflow_id"], set_={"hash": digest, "updated_at": now}
    )
    tx.conn.execute(stmt)


def schedule_ids_exist(tx: Tx, *, ids: Iterable[str]) -> set[str]:
    wanted = sorted(set(ids))
    if not wanted:
        return set()
    return set(tx.conn.execute(select(S.c.id).where(S.c.id.in_(wanted))).scalars())


__all__ = [
    "claim_due_trigger_schedules",
    "claim_events",
    "count_events",
    "definition_hashes",
    "delete_events",
    "event_value",
    "insert_events",
    "insert_events_at",
    "lock_trigger_schedules",
    "peek_events",
    "put_definition_hash",
    "save_trigger_states",
    "schedule_ids_exist",
    "serialize_pass",
]
