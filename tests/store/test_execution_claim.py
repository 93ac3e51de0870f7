"""The worker's batch claim (SPEC §9.1): ``claim_scoped_runs`` takes at most ``limit`` runs.

On PostgreSQL ``UPDATE … WHERE id IN (SELECT … LIMIT n FOR UPDATE SKIP LOCKED)`` may be planned
as a semi-join that re-runs the limited subquery and claims every pending run; the claim must
take exactly ``limit`` of them, the oldest first.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from sqlalchemy import insert

from tocsin.core.model import Table
from tocsin.store import Store
from tocsin.store.run_queries import count_runs
from tocsin.store.runs import claim_scoped_runs
from tocsin.store.schema import runs

from .helpers import NOW, new_id

PENDING = 1000


def _pending_runs(store: Store, table_id: str, count: int) -> list[str]:
    """``count`` pending row-event runs, the i-th last updated ``i`` ms after NOW."""
    rows: list[dict[str, Any]] = [
        {
            "id": new_id(),
            "table_id": table_id,
            "trigger_id": "trg_rows",
            "record_id": None,
            "source": "created",
            "clock": False,
            "status": "pending",
            "attempts": 0,
            "payload": {},
            "action_results": [],
            "created_at": NOW,
            "updated_at": NOW + timedelta(milliseconds=i),
        }
        for i in range(count)
    ]
    with store.begin() as tx:
        tx.conn.execute(insert(runs), rows)
    return [row["id"] for row in rows]


def test_a_claim_of_ten_out_of_a_thousand_takes_exactly_ten(store: Store, table: Table) -> None:
    ids = _pending_runs(store, table.id, PENDING)
    with store.begin() as tx:
        claimed = claim_scoped_runs(tx, now=NOW + timedelta(seconds=5), limit=10)
    assert len(claimed) == 10
    assert {run.id for run in claimed} == set(ids[:10])  # the oldest updated_at first
    assert all(run.status == "running" and run.attempts == 1 for run in claimed)
    with store.read() as tx:
        assert count_runs(tx, status="running") == 10
        assert count_runs(tx, status="pending") == PENDING - 10


def test_repeated_claims_never_take_more_than_their_limit(store: Store, table: Table) -> None:
    _pending_runs(store, table.id, 200)
    taken: set[str] = set()
    for _ in range(20):
        with store.begin() as tx:
            batch = claim_scoped_runs(tx, now=NOW + timedelta(seconds=5), limit=7)
        assert 1 <= len(batch) <= 7
        assert not taken & {run.id for run in batch}
        taken |= {run.id for run in batch}
    assert len(taken) == 140
    with store.read() as tx:
        assert count_runs(tx, status="running") == 140
