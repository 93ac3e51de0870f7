"""Store-test helpers: a fixed ``NOW`` and table/record builders (SPEC §2)."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

import pytest
from sqlalchemy import event

from tocsin.core.model import Table
from tocsin.store import Store
from tocsin.store.records import insert_table
from tocsin.store.runs import NewRun, claim_scoped_runs, insert_runs
from tocsin.store.tx import Tx

NOW = datetime(2026, 8, 27, 5, 2, 13, tzinfo=UTC)

# run a test on PostgreSQL only (overrides the ``backend`` matrix of tests/conftest.py)
PG_ONLY = pytest.mark.parametrize(
    "backend", [pytest.param("postgresql", marks=pytest.mark.pg)], indirect=True
)
SQLITE_ONLY = pytest.mark.parametrize("backend", ["sqlite"], indirect=True)


def new_id() -> str:
    return str(uuid.uuid4())


def make_table(store: Store, **overrides: Any) -> Table:
    """Insert a live table (scope chatroom, columns Due/Status) and return it."""
    fields: dict[str, Any] = {
        "id": new_id(),
        "scope": "chatroom",
        "scope_id": new_id(),
        "name": "Cases",
        "columns": {"Due": "datetime", "Status": "text"},
        "now": NOW,
    }
    fields.update(overrides)
    with store.begin() as tx:
        return insert_table(tx, **fields)


T = TypeVar("T")


def plans_of(
    store: Store, matches: Callable[[str], bool], probe: Callable[[Tx], T]
) -> tuple[list[str], T]:
    """The plans of the statements ``probe(tx)`` executes that ``matches``, each planned on its
    own cursor as it is sent (in the probe's transaction, under its settings: PostgreSQL
    ``EXPLAIN``, SQLite ``EXPLAIN QUERY PLAN``, a plan's lines joined), and what ``probe``
    answered."""
    plans: list[str] = []
    explain = "EXPLAIN" if store.is_postgres else "EXPLAIN QUERY PLAN"

    def capture(conn: Any, cursor: Any, statement: str, params: Any, *_: Any) -> None:
        if matches(statement):
            cursor.execute(f"{explain} {statement}", params)
            plans.append("\n".join(str(row[-1]) for row in cursor.fetchall()))

    event.listen(store.engine, "before_cursor_execute", capture)
    try:
        with store.begin() as tx:
            answer = probe(tx)
    finally:
        event.remove(store.engine, "before_cursor_execute", capture)
    return plans, answer


def query_plan(store: Store, probe: Callable[[Tx], object], *, scans_off: bool = True) -> str:
    """The query plan of the one statement ``probe(tx)`` executes, as text.

    PostgreSQL: with sequential and bitmap scans off (``scans_off``), so that on tiny test
    tables any usable index wins and the plan shows which one (and whether its condition is a
    seek); on a populated table the planner's own choice (``scans_off=False``).
    """
    seen: list[tuple[str, Any]] = []

    def capture(conn: Any, cursor: Any, statement: str, params: Any, *args: Any) -> None:
        seen.append((statement, params))

    with store.begin() as tx:
        event.listen(tx.conn, "before_cursor_execute", capture)
        probe(tx)
        event.remove(tx.conn, "before_cursor_execute", capture)
        [(statement, params)] = seen
        if tx.is_postgres:
            if scans_off:
                tx.conn.exec_driver_sql("SET LOCAL enable_seqscan = off")
                tx.conn.exec_driver_sql("SET LOCAL enable_bitmapscan = off")
            rows = tx.conn.exec_driver_sql("EXPLAIN " + statement, params).all()
        else:
            rows = tx.conn.exec_driver_sql("EXPLAIN QUERY PLAN " + statement, params).all()
    return "\n".join(str(row[-1]) for row in rows)


CLAIM_AT = NOW + timedelta(minutes=5)  # when the claim tests claim: past every run they make


def pending_table_runs(
    store: Store, table: Table, count: int, *, trigger: dict[str, Any] | None = None, at: Any = NOW
) -> list[str]:
    """``count`` pending row-event runs of ``table``, created at ``at`` (one by one: in order)."""
    definition = trigger or {"id": "trg", "on": "created", "actions": []}
    ids = []
    for i in range(count):
        run = NewRun(
            id=new_id(), table_id=table.id, trigger_id=str(definition["id"]), record_id=None,
            source="created", clock=False, payload={}, definition=definition, identity=None,
            scheduled_for=None,
        )  # fmt: skip
        with store.begin() as tx:
            insert_runs(tx, runs_=[run], now=at + timedelta(milliseconds=i))
        ids.append(run.id)
    return ids


def claim_ids(store: Store, limit: int, **kw: Any) -> list[tuple[str, str]]:
    """One claim (``claim_scoped_runs`` at ``kw['now']``, else :data:`CLAIM_AT`): its runs' ids
    and scopes."""
    with store.begin() as tx:
        claimed = claim_scoped_runs(tx, now=kw.pop("now", CLAIM_AT), limit=limit, **kw)
    return [(run.id, run.scope) for run in claimed]
