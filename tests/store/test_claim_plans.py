"""The run claims walk its ordered index on PostgreSQL (``dialects.ordered_scans_only``), and
the tick reads active clock runs through the partial index (both backends).

A burst of pending runs that the statistics have not seen (here: a fresh, never analyzed table) is
estimated at a few rows; without the hint the planner bitmap-scanned and sorted every pending run
for each claim. The hint is ``SET LOCAL``: it must end with the claim's transaction.
"""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

from sqlalchemy import insert

from tocsin.core.model import Table
from tocsin.engine.schedules import new_run
from tocsin.store import Store
from tocsin.store import workflow_runs as store_runs
from tocsin.store.approvals import requeue_changes
from tocsin.store.dialects import ordered_scans_only
from tocsin.store.runs import active_clock_triggers, claim_scoped_runs
from tocsin.store.schema import runs, staged_changes

from .helpers import NOW, PG_ONLY, new_id, plans_of, query_plan
from .test_execution_claim import _pending_runs

PENDING = 4000


def _pending(store: Store) -> None:
    rows = [
        new_run(run_id=new_id(), workflow_id="wf", input={}, now=NOW, trigger="manual")
        for _ in range(PENDING)
    ]
    with store.begin() as tx:
        store_runs.insert_runs(tx, rows=rows)


def _claim_plans(store: Store, **kw: Any) -> tuple[list[str], int]:
    """The plans of the one claim's statement, planned under its own transaction's settings,
    and how many runs it claimed."""
    plans, claimed = plans_of(
        store,
        lambda statement: "fwd(scope" in statement,
        lambda tx: claim_scoped_runs(tx, now=NOW + timedelta(seconds=1), **kw),
    )
    return plans, len(claimed)


@PG_ONLY
def test_the_claim_walks_the_ordered_index_and_the_hint_ends_with_its_transaction(
    store: Store,
) -> None:
    """A burst of workflow runs the statistics have not seen: the one claim visits their scope
    and takes its oldest through ``ix_runs_pending_scope`` (no bitmap scan, no hash join, no sort
    of the pending runs); its hint holds within its transaction only."""
    _pending(store)
    plans, claimed = _claim_plans(store, limit=50, actions=False, workflows=["wf"])
    assert claimed == 50 and len(plans) == 1
    plan = plans[0]
    assert "Bitmap" not in plan and "Hash" not in plan, plan
    assert "Index Scan using ix_runs_pending_scope on runs r " in plan, plan
    with store.begin() as tx:
        ordered_scans_only(tx)
        assert tx.conn.exec_driver_sql("SHOW enable_bitmapscan").scalar_one() == "off"
    with store.read() as tx:  # the pooled connection is back to the server's default
        assert tx.conn.exec_driver_sql("SHOW enable_bitmapscan").scalar_one() == "on"


@PG_ONLY
def test_the_table_run_claim_walks_its_ordered_index_too(store: Store, table: Table) -> None:
    _pending_runs(store, table.id, PENDING)
    plans, claimed = plans_of(  # the claim itself, planned under the same settings
        store,
        lambda statement: "fwd(scope" in statement,
        lambda tx: claim_scoped_runs(tx, now=NOW + timedelta(seconds=5), limit=10),
    )
    assert len(claimed) == 10 and len(plans) == 1
    # fair (the scopes in turn): the scopes and each one's oldest runs are index probes of
    # ix_runs_pending_scope; what is sorted is the few candidates, never a scan of the pending
    # runs; the UPDATE takes the picked ids as one array, no join of the pending runs
    plan = plans[0]
    assert "Bitmap" not in plan and "Hash" not in plan, plan
    assert plan.count("Index Scan using ix_runs_pending_scope on runs r ") == 1, plan
    assert "ANY" in plan, plan
    with store.read() as tx:
        assert tx.conn.exec_driver_sql("SHOW enable_bitmapscan").scalar_one() == "on"


def _clock_history(store: Store, table_id: str, done: int) -> None:
    """``done`` finished clock runs of one trigger (a long history) and one pending run."""
    rows: list[dict[str, Any]] = [
        {
            "id": new_id(), "table_id": table_id, "trigger_id": "trg_hourly", "record_id": None,
            "source": "schedule", "clock": True, "status": "done" if i < done else "pending",
            "attempts": 1, "payload": {}, "action_results": [], "identity": f"w{i}",
            "created_at": NOW + timedelta(seconds=i), "updated_at": NOW + timedelta(seconds=i),
        }
        for i in range(done + 1)
    ]  # fmt: skip
    with store.begin() as tx:
        tx.conn.execute(insert(runs), rows)


def test_active_clock_runs_are_read_through_the_partial_index(store: Store, table: Table) -> None:
    """The tick reads its tables' active clock runs per table through ``uq_runs_one_active_clock``
    (a handful of rows), never a table's whole run history (``ix_runs_table_created``)."""
    _clock_history(store, table.id, 3000)
    with store.begin() as tx:
        if store.is_postgres:
            tx.conn.exec_driver_sql("ANALYZE runs")
    plans, found = plans_of(
        store,
        lambda statement: "uq_runs_one_active_clock" in statement or "LATERAL" in statement,
        lambda tx: active_clock_triggers(tx, table_ids=[table.id, "no-such-table"]),
    )
    assert found == {(table.id, "trg_hourly")}
    [plan] = plans
    assert "uq_runs_one_active_clock" in plan and "ix_runs_table_created" not in plan, plan


def test_the_tick_sweep_of_lost_applications_seeks_its_index(store: Store) -> None:
    """Every tick sweeps ``applying`` changes older than the stale window: it seeks
    ``ix_staged_changes_status`` to those, never reads every change kept as history."""
    rows = [
        {
            "id": new_id(), "table_id": new_id(), "operation": "create", "values": {},
            "status": "applied", "created_at": NOW, "updated_at": NOW + timedelta(seconds=i),
        }
        for i in range(500)
    ]  # fmt: skip
    with store.begin() as tx:
        tx.conn.execute(insert(staged_changes), rows)
    later = NOW + timedelta(hours=1)
    plan = query_plan(store, lambda tx: requeue_changes(tx, now=later, stale_after_s=300))
    assert "ix_staged_changes_status" in plan, plan
    assert re.search(r"updated_at ?<", plan), plan  # a range on updated_at, not status alone
