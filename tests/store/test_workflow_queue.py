"""Workflow runs are rows of ``runs``, kind ``workflow`` (migration 0035_wfqueue), claimed by the
one claim (0036_oneclaim), both backends:

- the migrations move every stored workflow run into ``runs`` with nothing lost (the store reads
  the same runs, each with its workflow's or schedule's scope), and their downgrades move them
  back;
- a workflow run enters as many indexes at each status as in ``workflow_runs`` (the speed of the
  workflow path): the primary key and three partial indexes, the claim's while pending;
- the statements on each side read their own partial indexes.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from alembic import command
from sqlalchemy import Index, inspect, select, text

from tocsin.core.model import Table
from tocsin.engine.schedules import new_run
from tocsin.store import Store, run_queries
from tocsin.store import workflow_runs as store_runs
from tocsin.store.migrate import alembic_config, upgrade_to_head
from tocsin.store.runs import RunLimits, claim_scoped_runs, finish_runs, requeue_runs
from tocsin.store.schema import RUN_KINDS, runs
from tocsin.store.tx import Tx

from .helpers import NOW, new_id, plans_of, query_plan

BEFORE = "0034_runsidx"  # the revision before 0035_wfqueue
NAIVE = NOW.replace(tzinfo=None)
# a workflow run's indexes past pending (the primary key aside); pending, the claim's instead of
# the status one (0036): as many entries at each status as ``workflow_runs`` had
WORKFLOW_INDEXES = {"ix_runs_workflow_status", "ix_runs_workflow_created"}
PENDING_INDEXES = {"ix_runs_pending_scope", "ix_runs_workflow_created"}
FENCE = "ix_runs_workflow_schedule"

# workflow runs as ``workflow_runs`` held them at 0033: one per status, and every column used
_OLD_RUNS: list[dict[str, Any]] = [
    {
        "id": "wf-run-1-pending",
        "workflow_id": "wf_a",
        "schedule_id": "sch_1",
        "trigger": "scheduled",
        "status": "pending",
        "attempts": 0,
        "input": {"n": 1},
        "steps": [],
        "initial_state": {"s": 1},
        "request_context": {"user": "u"},
        "scheduled_for": NAIVE,
        "attempt": 1,
    },
    {
        "id": "wf-run-2-running",
        "workflow_id": "wf_a",
        "trigger": "manual",
        "status": "running",
        "attempts": 1,
        "input": None,
        "steps": [{"step": "one", "status": "success"}],
        "started_at": NAIVE,
        "attempt": 1,
    },
    {
        "id": "wf-run-3-success",
        "workflow_id": "wf_b",
        "schedule_id": "sch_2",
        "trigger": "backfill",
        "status": "success",
        "attempts": 2,
        "input": [1, 2],
        "output": {"ok": True},
        "steps": [{"step": "one", "status": "success"}],
        "scheduled_for": NAIVE - timedelta(hours=1),
        "started_at": NAIVE,
        "ended_at": NAIVE + timedelta(seconds=3),
        "attempt": 2,
        "alert": {"sent": False},
    },
    {
        "id": "wf-run-4-suspended",
        "workflow_id": "wf_b",
        "trigger": "manual",
        "status": "suspended",
        "attempts": 1,
        "input": "text",
        "steps": [],
        "suspend_payload": {"ask": "approve"},
        "resume_data": {"earlier": 1},
        "attempt": 1,
    },
    {
        "id": "wf-run-5-retrying",
        "workflow_id": "wf_b",
        "trigger": "manual",
        "status": "pending",
        "attempts": 1,
        "input": None,
        "error": "boom",
        "steps": [],
        "next_attempt_at": NAIVE + timedelta(minutes=5),
        "attempt": 2,
    },
]
_JSON = ("input", "output", "steps", "initial_state", "request_context", "suspend_payload")
_JSON_ALL = (*_JSON, "resume_data", "alert")


def _old_row(run: dict[str, Any], at: int) -> dict[str, Any]:
    made = NAIVE + timedelta(seconds=at)
    row = {name: None for name in store_runs.FIELDS} | {"created_at": made, "updated_at": made}
    row.update(run)
    for name in _JSON_ALL:
        row[name] = None if row[name] is None else json.dumps(row[name])
    return row


def _expected(run: dict[str, Any], at: int) -> dict[str, Any]:
    """The run as the store reads it: every field, instants aware, JSON decoded."""
    made = NOW + timedelta(seconds=at)
    out: dict[str, Any] = {name: None for name in store_runs.FIELDS}
    out.update(created_at=made, updated_at=made)
    for name, value in run.items():
        out[name] = value.replace(tzinfo=UTC) if isinstance(value, datetime) else value
    return out


def _insert_old(tx: Any, rows: list[dict[str, Any]]) -> None:
    names = ", ".join(f'"{n}"' for n in store_runs.FIELDS)
    marks = ", ".join(f":{n}" for n in store_runs.FIELDS)
    tx.conn.execute(text(f"INSERT INTO workflow_runs ({names}) VALUES ({marks})"), rows)


def _table_run(tx: Any, table_id: str) -> None:
    tx.conn.execute(
        text(
            "INSERT INTO runs (id, table_id, trigger_id, source, clock, status, attempts,"
            " action_results, payload, created_at, updated_at, scope) VALUES"
            " ('table-run', :t, 'trg', 'created', false, 'pending', 0, '[]', '{}', :m, :m, 's:1')"
        ),
        {"t": table_id, "m": NAIVE},
    )


def _old_rows(tx: Any) -> dict[str, dict[str, Any]]:
    """``workflow_runs`` as stored (JSON decoded, instants naive)."""
    found = tx.conn.execute(text("SELECT * FROM workflow_runs")).mappings().all()
    out = {}
    for row in found:
        values = dict(row)
        for name in _JSON_ALL:  # SQLite: the JSON's text; PostgreSQL: decoded by the driver
            raw = values[name]
            values[name] = json.loads(raw) if raw is not None and not tx.is_postgres else raw
        for name, value in values.items():
            if isinstance(value, str) and name.endswith(("_at", "_for")):
                values[name] = datetime.fromisoformat(value)
        out[str(row["id"])] = values
    return out


def test_stored_workflow_runs_move_into_runs_and_back(store: Store, table: Table) -> None:
    """Migration 0035_wfqueue, both ways: every workflow run reads the same (``get_run``,
    ``list_runs``, the overlap fence, the claim); the table run stays the queue's only run; the
    downgrade gives ``workflow_runs`` its rows back as they were."""
    with store.begin() as tx:
        command.downgrade(alembic_config(tx.conn), BEFORE)
    with store.begin() as tx:
        _insert_old(tx, [_old_row(run, i) for i, run in enumerate(_OLD_RUNS)])
        _table_run(tx, table.id)
        stored = _old_rows(tx)
    want = {run["id"]: _expected(run, i) for i, run in enumerate(_OLD_RUNS)}
    for _ in range(2):  # upgrade, then down and up again: the same
        upgrade_to_head(store)
        with store.read() as tx:
            got = {rid: store_runs.get_run(tx, run_id=rid) for rid in want}
            assert {rid: run.as_dict() if run else None for rid, run in got.items()} == want
            page, total = store_runs.list_runs(tx, workflow_id=None, status=None, skip=0, limit=10)
            assert total == 5 and [r.id for r in page] == sorted(want, reverse=True)
            of_b, total_b = store_runs.list_runs(
                tx, workflow_id="wf_b", status="pending", skip=0, limit=10
            )
            assert total_b == 1 and [r.id for r in of_b] == ["wf-run-5-retrying"]
            assert store_runs.count_runs(tx) == 5 and run_queries.count_runs(tx) == 1
            # the backfill run never fences; the pending scheduled one does
            assert store_runs.active_schedule_ids(tx, schedule_ids=["sch_1", "sch_2"]) == {"sch_1"}
            kinds = dict(tx.conn.execute(select(runs.c.id, runs.c.kind)).all())
            assert kinds == {"table-run": "actions"} | dict.fromkeys(want, "workflow")
            scopes = dict(tx.conn.execute(select(runs.c.id, runs.c.scope)).all())
            assert scopes == {  # 0036: each its workflow's scope, a schedule's run too
                "table-run": "s:1",
                "wf-run-1-pending": "app/wf:wf_a",
                "wf-run-2-running": "app/wf:wf_a",
                "wf-run-3-success": "app/wf:wf_b",
                "wf-run-4-suspended": "app/wf:wf_b",
                "wf-run-5-retrying": "app/wf:wf_b",
            }
        with store.begin() as tx:  # the table claim takes its run only; the one claim with the
            table_claim = claim_scoped_runs(tx, now=NOW, limit=10)  # workflows, theirs too
            workflow_claim = claim_scoped_runs(
                tx, now=NOW, limit=10, actions=False, workflows=["wf_a", "wf_b"]
            )
        assert [run.id for run in table_claim] == ["table-run"]
        assert [(r.id, r.kind, r.input, r.initial_state) for r in workflow_claim] == [
            ("wf-run-1-pending", "workflow", {"n": 1}, {"s": 1})  # 5 waits its retry
        ]
        with store.begin() as tx:
            command.downgrade(alembic_config(tx.conn), BEFORE)
        with store.read() as tx:
            back = _old_rows(tx)
            left = tx.conn.execute(text("SELECT id FROM runs")).scalars().all()
        claimed = back.pop("wf-run-1-pending")
        assert (claimed["status"], claimed["attempts"]) == ("running", 1)
        assert claimed["started_at"] is not None
        assert back == {k: v for k, v in stored.items() if k != "wf-run-1-pending"}
        assert left == ["table-run"]
        with store.begin() as tx:  # as it was, for the next round
            tx.conn.execute(text("DELETE FROM workflow_runs WHERE id = 'wf-run-1-pending'"))
            _insert_old(tx, [_old_row(_OLD_RUNS[0], 0)])
            tx.conn.execute(text("UPDATE runs SET status = 'pending', attempts = 0"))
    upgrade_to_head(store)


def _partial(index: Index) -> str | None:
    where = index.dialect_options["postgresql"]["where"]
    return None if where is None else str(where)


def _indexes_holding(store: Store, run_id: str) -> set[str]:
    """The indexes of ``runs`` whose predicate the row ``run_id`` meets (a whole index: every
    row): those it has an entry in."""
    held = set()
    with store.read() as tx:
        for index in runs.indexes:
            where = _partial(index)
            test = f" AND ({where})" if where else ""
            found = tx.conn.execute(
                text(f"SELECT count(*) FROM runs WHERE id = :i{test}"), {"i": run_id}
            ).scalar_one()
            if found:
                held.add(str(index.name))
    return held


def test_a_workflow_run_enters_its_own_indexes_only_over_its_life(store: Store) -> None:
    """Pending, running, retried, finished each way, of a schedule or not, each trigger word: a
    workflow run is in ``ix_runs_workflow_created``, in the claim's ``ix_runs_pending_scope``
    while pending and in ``ix_runs_workflow_status`` after, and while active in the fence (as in
    ``workflow_runs``: a run of no schedule too, its key NULL): two or three entries besides the
    primary key, as many as before; in no other index of the table runs."""
    assert all(_partial(i) for i in runs.indexes)  # every secondary index of runs is partial
    rows = [
        {
            **new_run(run_id=new_id(), workflow_id="wf", input={}, now=NOW, trigger=word),
            "schedule_id": sid,
        }
        for word, sid in (("scheduled", "s1"), ("manual", None), ("backfill", "s2"))
    ]
    with store.begin() as tx:
        store_runs.insert_runs(tx, rows=rows)
    scheduled, manual, backfill = (r["id"] for r in rows)
    assert _indexes_holding(store, scheduled) == PENDING_INDEXES | {FENCE}
    assert _indexes_holding(store, manual) == PENDING_INDEXES | {FENCE}
    assert _indexes_holding(store, backfill) == PENDING_INDEXES | {FENCE}
    with store.begin() as tx:
        claimed = claim_scoped_runs(tx, now=NOW, limit=3, actions=False, workflows=["wf"])
    assert len(claimed) == 3 and _indexes_holding(store, scheduled) == WORKFLOW_INDEXES | {FENCE}
    finishes = [
        (scheduled, "success", None),
        (manual, "pending", NOW + timedelta(minutes=1)),  # an automatic retry
        (backfill, "suspended", None),
    ]
    with store.begin() as tx:
        finish_runs(
            tx,
            rows=[
                store_runs.finish_row(
                    rid,
                    1,
                    {"status": st, "steps": [], "output": None, "error": None}
                    | {"suspend_payload": None, "next_attempt_at": nxt, "attempt": 2},
                    NOW,
                )
                for rid, st, nxt in finishes
            ],
        )
    for rid in (scheduled, backfill):
        assert _indexes_holding(store, rid) == WORKFLOW_INDEXES, rid
    assert _indexes_holding(store, manual) == PENDING_INDEXES | {FENCE}  # pending: its retry
    for status in ("failed", "canceled"):
        with store.begin() as tx:
            store_runs.transition(
                tx, run_id=scheduled, from_statuses=("success", "failed"),
                values={"status": status}, now=NOW,
            )  # fmt: skip
        assert _indexes_holding(store, scheduled) == WORKFLOW_INDEXES


def _plans(store: Store, probe: Callable[[Tx], object], prefix: str) -> list[str]:
    """The plans of the statements starting with ``prefix`` that ``probe(tx)`` executes
    (PostgreSQL: sequential and bitmap scans off, so on tiny tables any usable index wins)."""

    def scans_off(tx: Tx) -> object:
        if tx.is_postgres:
            tx.conn.exec_driver_sql("SET LOCAL enable_seqscan = off")
            tx.conn.exec_driver_sql("SET LOCAL enable_bitmapscan = off")
        return probe(tx)

    return plans_of(store, lambda statement: statement.startswith(prefix), scans_off)[0]


def test_each_side_reads_its_own_partial_indexes(store: Store, table: Table) -> None:
    """The workflow statements seek ``ix_runs_workflow_*``; the table runs' listing and sweeps
    theirs (``kind <> 'workflow'`` said in their SQL); the stale-run sweep of every kind, one
    statement, reads both sides' indexes of running runs."""
    rows = [new_run(run_id=new_id(), workflow_id="wf", input={}, now=NOW, trigger="manual")]
    with store.begin() as tx:
        store_runs.insert_runs(tx, rows=rows)
        _table_run(tx, table.id)
    listing = _plans(
        store,
        lambda tx: store_runs.list_runs(tx, workflow_id="wf", status=None, skip=0, limit=5),
        "SELECT",
    )
    assert len(listing) == 2 and all("ix_runs_workflow_created" in p for p in listing), listing
    claim = _plans(
        store,
        lambda tx: claim_scoped_runs(
            tx, now=NOW, limit=5, workflows=["wf", "other"],
            limits=RunLimits(workflows={"wf": 2}, schedules={"s": 1}, schedule_of={"s": "wf"}),
        ),
        "UPDATE runs SET status",
    )  # fmt: skip
    # the one claim: its pick visits the scopes of ix_runs_pending_scope (a workflow's with the
    # rest) and counts a limited workflow's running runs in ix_runs_workflow_status; the UPDATE
    # goes by the primary key
    assert len(claim) == 1 and "ix_runs_pending_scope" in claim[0], claim
    assert "ix_runs_workflow_status" in claim[0] and "ix_runs_stuck" not in claim[0], claim
    assert "SCAN runs" not in claim[0] and "Seq Scan" not in claim[0], claim
    stale = query_plan(
        store,
        lambda tx: requeue_runs(tx, now=NOW, status="running", older_than_s=300, kinds=RUN_KINDS),
    )
    # the stale-run sweep of every kind, one statement: the table runs and lane attempts through
    # ix_runs_stuck, the workflow runs through a workflow run index: the status one's (status, …,
    # updated_at) or, PostgreSQL on a table this small, the fence's (active runs only, status its
    # second column)
    assert "ix_runs_stuck" in stale, stale
    assert "ix_runs_workflow_status" in stale or (store.is_postgres and FENCE in stale), stale
    by_status = _plans(
        store,
        lambda tx: store_runs.list_runs(tx, workflow_id=None, status="failed", skip=0, limit=5),
        "SELECT count",
    )
    assert len(by_status) == 1 and "ix_runs_workflow_status" in by_status[0], by_status
    table_page = _plans(
        store,
        lambda tx: run_queries.list_runs(
            tx, table_id=table.id, status=None, skip=0, limit=5, now=NOW, stuck_after_s=300
        ),
        "SELECT",
    )
    assert len(table_page) == 2, table_page
    assert all("ix_runs_table_created" in p for p in table_page), table_page
    for status in ("pending", "running"):
        sweep = query_plan(
            store,
            lambda tx, s=status: requeue_runs(  # type: ignore[misc]
                tx, now=NOW, status=s, older_than_s=300, kinds=("actions", "lane")
            ),
        )
        want = "ix_runs_stuck" if status == "running" else "ix_runs_pending_scope"
        assert want in sweep and "ix_runs_workflow" not in sweep, sweep


def test_0036_gives_workflow_runs_their_scopes_and_its_downgrade_the_apps(store: Store) -> None:
    """Migration 0036_oneclaim both ways on stored runs: down, every workflow run's scope is the
    app's (``app``) and the claim's index holds none; up, each has its workflow's scope (a
    limited schedule's run too: the database holds no schedule's limit) and the one claim finds
    it."""
    rows = [
        {
            **new_run(run_id=new_id(), workflow_id="wf", input={}, now=NOW, trigger="manual"),
            "schedule_id": sid,
        }
        for sid in ("s1", None)
    ]
    with store.begin() as tx:
        store_runs.insert_runs(tx, rows=rows, limited={"s1"})
    inserted = {rows[0]["id"]: "app/wf:wf/s1", rows[1]["id"]: "app/wf:wf"}
    want = dict.fromkeys(inserted, "app/wf:wf")

    def scopes() -> dict[str, str]:
        with store.read() as tx:
            return dict(tx.conn.execute(select(runs.c.id, runs.c.scope)).all())

    assert scopes() == inserted
    with store.begin() as tx:
        command.downgrade(alembic_config(tx.conn), "0035_wfqueue")
    assert scopes() == dict.fromkeys(want, "app")
    assert "kind" in _claim_index_where(store)  # 0035's: ``… AND kind <> 'workflow'``
    upgrade_to_head(store)
    assert scopes() == want and "kind" not in _claim_index_where(store)
    with store.begin() as tx:
        claimed = claim_scoped_runs(tx, now=NOW, limit=5, actions=False, workflows=["wf"])
    assert {run.scope for run in claimed} == set(want.values())


def _claim_index_where(store: Store) -> str:
    """The predicate of ``ix_runs_pending_scope`` as the database holds it."""
    with store.read() as tx:
        found = {i["name"]: i for i in inspect(tx.conn).get_indexes("runs")}
    options = found["ix_runs_pending_scope"]["dialect_options"]
    return str(options[f"{store.engine.dialect.name}_where"])
