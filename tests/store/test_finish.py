"""The one finish of every kind of run (``store.runs.finish_runs``, SPEC §8, §12): one statement
finishes table runs and workflow runs together, each under its own claim fence."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import update

from tocsin.core.model import RunStatus, Table
from tocsin.engine.schedules import new_run
from tocsin.store import Store
from tocsin.store import workflow_runs as store_wf
from tocsin.store.jsontext import json_text
from tocsin.store.runs import FinishRow, claim_scoped_runs, finish_runs, get_run
from tocsin.store.schema import runs

from .helpers import CLAIM_AT, NOW, new_id, pending_table_runs

ENDED = CLAIM_AT + timedelta(seconds=3)
RETRY_AT = CLAIM_AT + timedelta(minutes=2)
RECEIPTS = [{"action_id": "act_1", "type": "notify", "ok": True, "detail": {"n": 1}}]


def _claimed(store: Store, table: Table, tables: int) -> tuple[list[str], list[str]]:
    """``tables`` table runs and two workflow runs, pending, then claimed: their ids."""
    table_ids = pending_table_runs(store, table, tables)
    rows = [
        new_run(run_id=new_id(), workflow_id="wf", input={}, now=NOW, trigger="manual")
        for _ in range(2)
    ]
    with store.begin() as tx:
        store_wf.insert_runs(tx, rows=rows)
        claimed = claim_scoped_runs(tx, now=CLAIM_AT, limit=10, workflows=["wf"])
    assert {run.id for run in claimed} == {*table_ids, *(r["id"] for r in rows)}
    assert {run.attempts for run in claimed} == {1}
    return table_ids, [r["id"] for r in rows]


def test_one_finish_writes_table_and_workflow_runs_and_skips_a_lost_fence(
    store: Store, table: Table
) -> None:
    (done, lost), (succeeded, retried) = _claimed(store, table, 2)
    with store.begin() as tx:  # requeued and claimed again meanwhile: its claim is gone
        tx.conn.execute(update(runs).where(runs.c.id == lost).values(attempts=2))
    output = {"total": 3, "names": ["a", "é"]}
    steps = [{"id": "s1", "status": "success", "output": output}]
    finishes = [
        FinishRow(done, 1, "done", ENDED, json_text(RECEIPTS)),
        FinishRow(lost, 1, "failed", ENDED, json_text(RECEIPTS), "late"),
        store_wf.finish_row(
            succeeded,
            1,
            {"status": "success", "steps": steps, "output": output, "error": None}
            | {"suspend_payload": None, "attempt": 1},
            ENDED,
        ),
        store_wf.finish_row(
            retried,
            1,
            {"status": "pending", "steps": [], "output": None, "error": "step s1 failed"}
            | {"suspend_payload": None, "next_attempt_at": RETRY_AT, "attempt": 2},
            ENDED,
        ),
    ]
    with store.begin() as tx:
        assert finish_runs(tx, rows=finishes) == {done, succeeded, retried}
    with store.read() as tx:
        table_done, table_lost = get_run(tx, run_id=done), get_run(tx, run_id=lost)
        wf = store_wf.runs_by_id(tx, run_ids=[succeeded, retried])
    assert table_done is not None and table_lost is not None
    assert (table_done.status, table_done.action_results, table_done.error) == (
        RunStatus.DONE,
        RECEIPTS,
        None,
    )
    assert table_done.updated_at == table_done.finished_at == ENDED
    assert table_done.next_attempt_at is None
    assert (table_lost.status, table_lost.attempts, table_lost.action_results) == (
        RunStatus.RUNNING,
        2,
        [],
    )
    assert table_lost.error is None and table_lost.finished_at is None
    assert table_lost.updated_at == CLAIM_AT
    won, again = wf[succeeded], wf[retried]
    assert (won.status, won.steps, won.output, won.error) == ("success", steps, output, None)
    assert won.ended_at == won.updated_at == ENDED and won.attempt == 1
    assert (again.status, again.next_attempt_at, again.attempt) == ("pending", RETRY_AT, 2)
    assert again.error == "step s1 failed" and again.ended_at is None


def test_a_finish_without_receipts_keeps_the_stored_ones(store: Store, table: Table) -> None:
    """A table run failed before its receipts are known (``steps`` None): one run alone and
    two together (PostgreSQL: by key, then ``UPDATE … FROM``), the receipts stored stay."""
    table_ids, _workflow_ids = _claimed(store, table, 3)
    with store.begin() as tx:
        tx.conn.execute(
            update(runs).where(runs.c.id.in_(table_ids)).values(action_results=RECEIPTS)
        )
    alone, *together = table_ids
    with store.begin() as tx:
        assert finish_runs(tx, rows=[FinishRow(alone, 1, "failed", ENDED, None, "gone")]) == {alone}
        rows = [FinishRow(run_id, 1, "failed", ENDED, None, "gone") for run_id in together]
        assert finish_runs(tx, rows=rows) == set(together)
    with store.read() as tx:
        for run_id in table_ids:
            run = get_run(tx, run_id=run_id)
            assert run is not None
            assert (run.status, run.error, run.action_results) == ("failed", "gone", RECEIPTS)
            assert run.finished_at == ENDED
