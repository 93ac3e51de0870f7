"""The table-run claim takes the scopes in turn and leaves a scope no more running runs than
``TOCSIN_MAX_RUNNING_PER_SCOPE`` (``store.runs.claim_next_runs``): one tenant's backlog, however
old, never holds another tenant's ready run back, and its slow runs never take every slot."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import insert, select

from tocsin.core.model import Table
from tocsin.store import Store
from tocsin.store.run_claims import claim_next_runs
from tocsin.store.runs import finish_run
from tocsin.store.schema import runs

from .helpers import NOW, make_table, new_id

LATER = NOW + timedelta(minutes=5)


def _pending_runs(store: Store, table_id: str, count: int, start: datetime = NOW) -> list[str]:
    """``count`` pending row-event runs, the i-th last updated ``i`` ms after ``start``."""
    rows: list[dict[str, Any]] = [
        {
            "id": new_id(), "table_id": table_id, "trigger_id": "trg_rows", "record_id": None,
            "source": "created", "clock": False, "status": "pending", "attempts": 0,
            "payload": {}, "action_results": [], "created_at": start,
            "updated_at": start + timedelta(milliseconds=i),
        }
        for i in range(count)
    ]  # fmt: skip
    with store.begin() as tx:
        tx.conn.execute(insert(runs), rows)
    return [row["id"] for row in rows]


def _claim(store: Store, limit: int, per_scope: int | None = None) -> list[str]:
    with store.begin() as tx:
        claimed = claim_next_runs(tx, now=LATER, limit=limit, per_scope=per_scope)
    return [run.table_id for run in claimed]


def test_ready_runs_of_different_scopes_interleave(store: Store, table: Table) -> None:
    """A's 50 runs are all older than B's and C's: a claim of 6 still takes two of each scope,
    the oldest of each first (rank in its scope, then age), not A's six oldest."""
    other_b, other_c = make_table(store), make_table(store)
    a_ids = _pending_runs(store, table.id, 50)
    after = NOW + timedelta(minutes=1)  # B's and C's runs come after every one of A's
    b_ids, c_ids = (_pending_runs(store, t.id, 3, start=after) for t in (other_b, other_c))
    with store.begin() as tx:
        claimed = claim_next_runs(tx, now=LATER, limit=6)
    taken = {run.id for run in claimed}
    assert taken == {*a_ids[:2], *b_ids[:2], *c_ids[:2]}


def test_a_scope_of_two_tables_is_one_scope(store: Store, table: Table) -> None:
    """Two tables of one chatroom share its turn: 4 runs each, one run of another chatroom."""
    same = make_table(store, scope_id=table.scope_id)
    other = make_table(store)
    _pending_runs(store, table.id, 4)
    _pending_runs(store, same.id, 4)
    _pending_runs(store, other.id, 1, start=NOW + timedelta(minutes=1))
    tables = _claim(store, limit=3)
    assert tables.count(other.id) == 1 and len(tables) == 3  # one for the other scope


def test_a_scope_at_its_cap_gets_nothing_until_a_run_ends(store: Store, table: Table) -> None:
    other = make_table(store)
    _pending_runs(store, table.id, 16)
    first = _claim(store, limit=8, per_scope=7)
    assert first == [table.id] * 7  # the eighth slot is left for another scope
    assert _claim(store, limit=8, per_scope=7) == []  # A holds 7 running: none more
    _pending_runs(store, other.id, 1, start=NOW + timedelta(minutes=1))
    assert _claim(store, limit=1, per_scope=7) == [other.id]  # B's run is taken at once
    with store.begin() as tx:  # one of A's runs ends: A may take one more, not two
        held = select(runs.c.id, runs.c.attempts).where(
            runs.c.status == "running", runs.c.table_id == table.id
        )
        run_id, attempts = tx.conn.execute(held.limit(1)).one()
        finish_run(tx, run_id=run_id, attempts=attempts, status="done", error=None, now=LATER)
    assert _claim(store, limit=8, per_scope=7) == [table.id]


def test_without_a_cap_one_scope_may_take_the_whole_claim(store: Store, table: Table) -> None:
    _pending_runs(store, table.id, 12)
    assert _claim(store, limit=10) == [table.id] * 10
