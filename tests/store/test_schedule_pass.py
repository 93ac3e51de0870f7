"""The tick's workflow-schedule pass at the store (SPEC §12; the workflow bench, migration 0022).

- The due claim hands each JSON column over as its value: the fired run is written with it and
  reads back as the schedule's value.
- PostgreSQL: over a burst of due schedules the statistics have not seen, the claim walks
  ``ix_workflow_schedules_due`` in its order (no sequential scan, no sort of every due row) and
  the settings doing it (``keyed_access_only``) end with the transaction.
- The overlap fence reads ``ix_runs_workflow_schedule``, which holds active runs only.
- The compound pass reads the tree schedules only: its due claim ``ix_workflow_schedules_tree_due``
  in its order, its lock of the listening trees ``ix_workflow_schedules_trees``.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from sqlalchemy import inspect

from support.claims import claimed_runs
from tocsin.engine.schedules import fire_due_schedules, new_run
from tocsin.store import Store
from tocsin.store import schedules as store_schedules
from tocsin.store import workflow_runs as store_runs
from tocsin.store.bulk import instant_binder, with_columns
from tocsin.store.runs import finish_runs
from tocsin.store.trigger_events import claim_due_trigger_schedules, lock_trigger_schedules
from tocsin.store.tx import Tx

from .helpers import NOW, PG_ONLY, SQLITE_ONLY, new_id, plans_of

BURST = 2000
INPUT = {"user_id": "u7", "tags": ["a", "é"], "n": 1.5, "nested": {"ok": True, "none": None}}


def _schedules(store: Store, count: int, *, input_data: Any = None) -> None:
    with store.begin() as tx:
        for i in range(count):
            store_schedules.insert_schedule(
                tx,
                values={
                    "id": f"sch_{i:06d}",
                    "workflow_id": "wf",
                    "source": "imperative",
                    "cron": "0 12 * * *",
                    "timezone": "UTC",
                    "overlap": "skip",
                    "input_data": input_data,
                    "initial_state": {"step": 0} if i == 0 else None,
                    "request_context": None,
                    "metadata": None,
                    "paused_at": None,
                    "next_fire_at": NOW,
                    "last_fire_id": None,
                    "created_at": NOW - timedelta(days=1),
                    "updated_at": NOW - timedelta(days=1),
                },
            )


def test_the_claim_hands_json_over_as_values_and_the_run_reads_back_the_same(
    store: Store,
) -> None:
    _schedules(store, 1, input_data=INPUT)
    with store.begin() as tx:
        (row,) = store_schedules.claim_due_schedules(tx, now=NOW, limit=10)
        assert row.input_data == INPUT and row.initial_state == {"step": 0}
        assert row.request_context is None
    assert fire_due_schedules(store, now=NOW + timedelta(seconds=1)) == 1
    with store.read() as tx:
        (run,) = store_runs.list_runs(tx, workflow_id="wf", status=None, skip=0, limit=5)[0]
    assert run.input == INPUT and run.initial_state == {"step": 0}
    assert run.request_context is None and run.steps == []


@PG_ONLY
def test_the_due_claim_walks_its_ordered_index_and_the_settings_end_with_it(
    store: Store,
) -> None:
    _schedules(store, BURST)
    plans, claimed = plans_of(
        store,
        lambda statement: "FROM workflow_schedules WHERE paused_at IS NULL" in statement,
        lambda tx: store_schedules.claim_due_schedules(tx, now=NOW, limit=50),
    )
    assert [r.id for r in claimed] == [f"sch_{i:06d}" for i in range(50)]
    assert len(plans) == 1 and "ix_workflow_schedules_due" in plans[0]
    assert "Sort" not in plans[0] and "Seq Scan" not in plans[0] and "Bitmap" not in plans[0]
    with store.read() as tx:  # the pooled connection is back to the server's defaults
        for name in ("enable_seqscan", "enable_bitmapscan", "enable_hashjoin", "enable_mergejoin"):
            assert tx.conn.exec_driver_sql(f"SHOW {name}").scalar_one() == "on"


def test_the_fence_index_holds_active_runs_only(store: Store) -> None:
    indexes = {ix["name"]: ix for ix in inspect(store.engine).get_indexes("runs")}
    index = indexes["ix_runs_workflow_schedule"]
    assert index["column_names"] == ["schedule_id", "status"]
    where = str(index["dialect_options"][f"{store.engine.dialect.name}_where"])
    assert "pending" in where and "running" in where and "success" not in where
    assert "workflow" in where
    runs = [
        {
            **new_run(run_id=new_id(), workflow_id="wf", input={}, now=NOW, trigger="scheduled"),
            "schedule_id": sid,
        }
        for sid in ("s1", "s2")
    ]
    with store.begin() as tx:
        store_runs.insert_runs(tx, rows=runs)
        assert store_runs.active_schedule_ids(tx, schedule_ids=["s1", "s2", "s3"]) == {"s1", "s2"}
        (claimed,) = claimed_runs(tx, now=NOW, limit=1, workflow_ids=["wf"])
        values = {"status": "success", "steps": [], "output": None, "error": None}
        finish = store_runs.finish_row(claimed["id"], 1, {**values, "suspend_payload": None}, NOW)
        assert finish_runs(tx, rows=[finish]) == {claimed["id"]}
        left = {"s1", "s2"} - {claimed["schedule_id"]}
        assert store_runs.active_schedule_ids(tx, schedule_ids=["s1", "s2"]) == left


@SQLITE_ONLY
def test_sqlite_plans_the_fence_on_its_index_beside_many_active_runs(store: Store) -> None:
    runs = [
        {
            **new_run(run_id=new_id(), workflow_id="wf", input={}, now=NOW, trigger="scheduled"),
            "schedule_id": f"busy_{i}",
        }
        for i in range(BURST)
    ]
    wanted = [f"sch_{i}" for i in range(300)] + ["busy_7"]

    def probe(tx: Tx) -> set[str]:
        store_runs.insert_runs(tx, rows=runs)
        return store_runs.active_schedule_ids(tx, schedule_ids=wanted)

    plans, active = plans_of(
        store, lambda statement: statement.startswith("SELECT schedule_id FROM runs"), probe
    )
    assert active == {"busy_7"}
    assert plans and all(
        "ix_runs_workflow_schedule (schedule_id=? AND status=?)" in plan for plan in plans
    )


def test_the_compound_pass_reads_the_tree_schedules_only(store: Store) -> None:
    """Its due claim seeks ``ix_workflow_schedules_tree_due`` (in ``next_fire_at, id`` order) and
    its other read ``ix_workflow_schedules_trees``, beside many due plain schedules the due index
    holds (PostgreSQL: without statistics, under keyed_access_only)."""
    _schedules(store, BURST)

    def probe(tx: Tx) -> None:
        assert claim_due_trigger_schedules(tx, now=NOW, limit=50) == []
        assert lock_trigger_schedules(tx, events=[("workflow_succeeded", "wf")], now=NOW) == []

    plans, _ = plans_of(
        store, lambda statement: "workflow_schedules.trigger_tree IS NOT NULL" in statement, probe
    )
    assert len(plans) == 2
    due = [plan for plan in plans if "next_fire_at" in plan and "TEMP B-TREE" not in plan]
    assert any("ix_workflow_schedules_tree_due" in plan and "Sort" not in plan for plan in due), (
        plans
    )
    for plan in plans:
        assert "ix_workflow_schedules_tree" in plan, plan  # _tree_due or _trees
        assert "Seq Scan" not in plan and "ix_workflow_schedules_due " not in plan, plan


def test_runs_inserted_together_keep_each_value_and_each_null(store: Store) -> None:
    """A column NULL in every row is left out of the statement, one NULL in some rows only is
    sent: each row reads back as written either way."""
    first = new_run(
        run_id=new_id(), workflow_id="wf", input=None, now=NOW, trigger="manual"
    )  # input NULL
    second = {
        **new_run(
            run_id=new_id(),
            workflow_id="wf",
            input={"a": [1, None]},
            now=NOW,
            trigger="scheduled",
            schedule_id="s1",
            scheduled_for=NOW,
            initial_state={"k": "v"},
        ),
        "error": "kept",
    }
    with store.begin() as tx:
        store_runs.insert_runs(tx, rows=[first, second])
        store_runs.insert_runs(tx, rows=[{**first, "id": new_id()}])  # every nullable one NULL
    with store.read() as tx:
        got = store_runs.runs_by_id(tx, run_ids=[first["id"], second["id"]])
        assert store_runs.count_runs(tx, status="pending") == 3
    one, two = got[first["id"]], got[second["id"]]
    assert one.input is None and one.schedule_id is None
    assert one.initial_state is None and one.error is None
    assert two.input == {"a": [1, None]}
    assert two.initial_state == {"k": "v"} and two.error == "kept"
    assert two.scheduled_for == NOW and two.attempts == 0
    assert one.steps == [] == two.steps


def test_bulk_columns_holding_one_value_read_back_per_row(store: Store) -> None:
    """``bulk.with_columns``: a column with one value in every row (sent once on PostgreSQL),
    every column so, a single row, a column of NULLs: each row comes back as it went."""
    kinds = (("a", "text"), ("b", "int"), ("c", "timestamp"), ("d", "text"))
    with store.read() as tx:
        at = instant_binder(tx)(NOW)
    cases = [
        [["x", "y", "z"], [1, 1, 1], [at, at, at], [None, None, None]],  # mixed
        [["x", "x"], [2, 2], [at, at], ["k", "k"]],  # every column one value
        [["only"], [3], [at], [None]],  # one row
    ]
    with store.begin() as tx:
        for columns in cases:
            body = "SELECT a, b, d FROM v ORDER BY a, b"
            got = with_columns(tx, kinds, body, columns)
            want = sorted(zip(columns[0], columns[1], columns[3], strict=True))
            assert [tuple(r) for r in got] == want


def test_bulk_rows_past_a_statement_come_back_whole(store: Store) -> None:
    """``bulk.with_columns``: more rows than one SQLite statement takes (by rows, and by bound
    parameters: 40 varying columns x 1,000 rows is past its 32,766), beside a column of one
    value sent once, each come back once, as they went."""
    width, count = 40, 2500
    kinds = (("i", "int"), ("same", "text"), *((f"c{k}", "int") for k in range(width)))
    numbers = list(range(count))
    columns = [numbers, ["s"] * count, *([n * k for n in numbers] for k in range(width))]
    last = f"c{width - 1}"
    with store.begin() as tx:
        got = with_columns(tx, kinds, f"SELECT i, same, {last} FROM v ORDER BY i", columns)
    assert [tuple(r) for r in got] == [(n, "s", n * (width - 1)) for n in numbers]


def test_bulk_text_columns_keep_every_text_whatever_it_holds(store: Store) -> None:
    """``bulk.with_columns``: a text column of many rows travels as one typed array; NULLs, empty
    texts, a lone NULL, control characters and JSON texts come back as they went."""
    kinds = (("i", "int"), ("a", "text"))
    cases = [
        ["x", None, "", "y", None],  # NULLs and empty texts in place
        ["a\x1fb", "c"],  # control characters
        ["a\x1eb", None],
        [""],  # one empty text
        [None],  # one NULL
        [None, None],  # NULL in every row (sent once, as a scalar)
        ['{"k": "v\\u001f"}', "[]"],  # JSON texts
    ]
    with store.begin() as tx:
        for texts in cases:
            numbers = list(range(len(texts)))
            got = with_columns(tx, kinds, "SELECT i, a FROM v ORDER BY i", [numbers, texts])
            assert [tuple(r) for r in got] == list(zip(numbers, texts, strict=True))


def test_workflow_finish_rows_are_plain_values_written_under_each_claim_fence(store: Store) -> None:
    runs = [
        new_run(run_id=new_id(), workflow_id="wf", input={}, now=NOW, trigger="manual")
        for _ in range(3)
    ]
    later = NOW + timedelta(seconds=5)
    with store.begin() as tx:
        store_runs.insert_runs(tx, rows=runs)
        claimed = claimed_runs(tx, now=NOW, limit=3, workflow_ids=["wf"])
    done, paused, stale = (r["id"] for r in claimed)
    receipts = [{"id": "s", "status": "success", "output": {"n": 1}}]
    rows = [
        store_runs.finish_row(
            done,
            1,
            {
                "status": "success",
                "steps": receipts,
                "output": {"n": 1},
                "error": None,
                "suspend_payload": None,
            },
            later,
        ),
        store_runs.finish_row(
            paused,
            1,
            {
                "status": "suspended",
                "steps": [],
                "output": None,
                "error": None,
                "suspend_payload": {"ask": "ok?"},
            },
            later,
        ),
        # a claim lost meanwhile (requeued and claimed again: attempts moved on)
        store_runs.finish_row(
            stale,
            0,
            {
                "status": "failed",
                "steps": [],
                "output": None,
                "error": "late",
                "suspend_payload": None,
            },
            later,
        ),
    ]
    assert all(type(v) in (str, int, bool, type(None), type(later)) for row in rows for v in row)
    with store.begin() as tx:
        assert finish_runs(tx, rows=rows) == {done, paused}
    with store.read() as tx:
        got = store_runs.runs_by_id(tx, run_ids=[done, paused, stale])
    assert (got[done].status, got[done].steps, got[done].output) == ("success", receipts, {"n": 1})
    assert got[done].ended_at == later and got[paused].ended_at is None
    assert got[paused].suspend_payload == {"ask": "ok?"} and got[paused].status == "suspended"
    assert got[stale].status == "running" and got[stale].error is None
