"""Runs: creation, the one-active-run fence, reading and the stuck filter (SPEC §5.3, §8)."""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import select, update

from tocsin.core.model import Run, Table
from tocsin.store import Store
from tocsin.store.run_queries import count_runs, count_stuck_runs, list_runs
from tocsin.store.runs import (
    NewRun,
    active_clock_trigger_ids,
    active_clock_triggers,
    get_run,
    insert_run,
    insert_runs,
    requeue_runs,
)
from tocsin.store.schema import RUN_KINDS, row_snapshots, runs

from .helpers import NOW, new_id, query_plan

STUCK_AFTER_S = 300


def _insert(tx: Any, table_id: str, **overrides: Any) -> Run | None:
    fields: dict[str, Any] = {
        "id": new_id(),
        "table_id": table_id,
        "trigger_id": "trg_clock",
        "record_id": None,
        "source": "schedule",
        "clock": True,
        "payload": {},
        "definition": {"id": "trg_clock", "actions": []},
        "identity": "2026-08-27T05:00",
        "scheduled_for": NOW,
        "now": NOW,
    }
    fields.update(overrides)
    return insert_run(tx, **fields)


def _set(tx: Any, run_id: str, **values: Any) -> None:
    tx.conn.execute(update(runs).where(runs.c.id == run_id).values(**values))


def test_insert_run_returns_the_documented_shape(store: Store) -> None:
    with store.begin() as tx:
        run = _insert(tx, "tbl", clock=False, record_id="rec", payload={"Status": "Open"})
    assert run is not None
    assert set(run.as_dict()) >= {
        "id", "table_id", "trigger_id", "record_id", "source", "status", "attempts", "error",
        "action_results", "payload", "definition", "identity", "scheduled_for", "created_at",
        "updated_at", "started_at", "finished_at",
    }  # fmt: skip
    assert run.status == "pending" and run.attempts == 0 and run.error is None
    assert run.action_results == [] and run.payload == {"Status": "Open"}
    assert run.created_at == NOW == run.scheduled_for and run.started_at is None
    with store.read() as tx:
        assert get_run(tx, run_id=run.id) == run
        assert get_run(tx, run_id=new_id()) is None


def test_definition_none_is_sql_null(store: Store) -> None:
    with store.begin() as tx:
        run = _insert(tx, "tbl", clock=False, definition=None)
        assert run is not None and run.definition is None
        nulls = tx.conn.exec_driver_sql(
            "SELECT count(*) FROM runs WHERE definition IS NULL"
        ).scalar_one()
    assert nulls == 1


def test_second_active_clock_run_is_refused_without_aborting(store: Store) -> None:
    with store.begin() as tx:
        first = _insert(tx, "tbl")
        assert first is not None
        assert _insert(tx, "tbl", identity="2026-08-27T06:00") is None
        other = _insert(tx, "tbl", trigger_id="trg_other")  # the transaction still works
        assert other is not None
    with store.read() as tx:
        assert active_clock_trigger_ids(tx, table_id="tbl", trigger_ids=["trg_clock"]) == {
            "trg_clock"
        }
        wanted = ["trg_clock", "trg_other", "trg_none"]
        assert active_clock_trigger_ids(tx, table_id="tbl", trigger_ids=wanted) == {
            "trg_clock",
            "trg_other",
        }
        assert active_clock_trigger_ids(tx, table_id="tbl", trigger_ids=[]) == set()
        assert active_clock_trigger_ids(tx, table_id="tbl2", trigger_ids=wanted) == set()


def test_the_one_active_run_fence_is_per_table(store: Store) -> None:
    """Two tables may use one trigger id: each has its own one-active-clock-run fence."""
    with store.begin() as tx:
        assert _insert(tx, "tbl") is not None
        assert _insert(tx, "tbl2") is not None  # tbl's active run does not block tbl2
        assert _insert(tx, "tbl2", identity="again") is None
        tables = ["tbl", "tbl2", "tbl3"]
        found = active_clock_triggers(tx, table_ids=tables)
        assert found == {("tbl", "trg_clock"), ("tbl2", "trg_clock")}
        assert active_clock_triggers(tx, table_ids=["tbl3"]) == set()
        assert active_clock_triggers(tx, table_ids=[]) == set()


def test_insert_runs_answers_the_ids_it_inserted(store: Store) -> None:
    def new_run(trigger_id: str, *, clock: bool) -> NewRun:
        return NewRun(
            id=new_id(), table_id="tbl", trigger_id=trigger_id, record_id=None,
            source="schedule", clock=clock, payload={"n": 1}, definition=None,
            identity="w", scheduled_for=NOW,
        )  # fmt: skip

    with store.begin() as tx:
        held = _insert(tx, "tbl")
        assert held is not None
        batch = [
            new_run("trg_clock", clock=True),  # refused: trg_clock already has an active run
            new_run("trg_a", clock=True),
            new_run("trg_a", clock=True),  # refused: the one just before in the same call
            new_run("trg_a", clock=False),  # row-event runs are not fenced
            new_run("trg_b", clock=True),
        ]
        inserted = insert_runs(tx, runs_=batch, now=NOW)
        assert inserted == {batch[1].id, batch[3].id, batch[4].id}
        assert insert_runs(tx, runs_=[], now=NOW) == set()
        run = get_run(tx, run_id=batch[1].id)
        assert run is not None and run.payload == {"n": 1} and run.definition is None
        assert get_run(tx, run_id=batch[0].id) is None


def test_running_run_also_fences(store: Store) -> None:
    with store.begin() as tx:
        first = _insert(tx, "tbl")
        assert first is not None
        _set(tx, first.id, status="running")
        assert _insert(tx, "tbl") is None


@pytest.mark.parametrize("status", ["done", "failed"])
def test_a_terminal_run_releases_the_fence(store: Store, status: str) -> None:
    with store.begin() as tx:
        first = _insert(tx, "tbl")
        assert first is not None
        _set(tx, first.id, status=status)
    with store.begin() as tx:
        assert active_clock_trigger_ids(tx, table_id="tbl", trigger_ids=["trg_clock"]) == set()
        assert _insert(tx, "tbl", identity="next") is not None


def test_date_and_row_event_runs_may_overlap(store: Store) -> None:
    with store.begin() as tx:
        for record in ("r1", "r2", "r3"):
            made = _insert(tx, "tbl", clock=False, trigger_id="trg_date", record_id=record)
            assert made is not None


def _seed_statuses(store: Store, table_id: str) -> dict[str, str]:
    """One run per situation; returns name → run id."""
    ids: dict[str, str] = {}
    plan = [
        ("pending", "pending", NOW),
        ("fresh_running", "running", NOW - timedelta(seconds=STUCK_AFTER_S - 1)),
        ("stale_running", "running", NOW - timedelta(seconds=STUCK_AFTER_S + 1)),
        ("done", "done", NOW - timedelta(hours=1)),
        ("failed", "failed", NOW),
    ]
    with store.begin() as tx:
        for offset, (name, status, updated_at) in enumerate(plan):
            run = _insert(
                tx, table_id, clock=False, trigger_id=f"trg_{name}",
                now=NOW + timedelta(seconds=offset),
            )  # fmt: skip
            assert run is not None
            _set(tx, run.id, status=status, updated_at=updated_at)
            ids[name] = run.id
        _insert(tx, "other-table", clock=False)
    return ids


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        (None, ["failed", "done", "stale_running", "fresh_running", "pending"]),
        ("stuck", ["failed", "stale_running"]),
        ("running", ["stale_running", "fresh_running"]),
        ("pending", ["pending"]),
        ("done", ["done"]),
        ("failed", ["failed"]),
    ],
)
def test_list_runs_filters_newest_first(
    store: Store, status: str | None, expected: list[str]
) -> None:
    ids = _seed_statuses(store, "tbl")
    with store.read() as tx:
        items, total = list_runs(
            tx, table_id="tbl", status=status, skip=0, limit=50, now=NOW,
            stuck_after_s=STUCK_AFTER_S,
        )  # fmt: skip
    assert [item.id for item in items] == [ids[name] for name in expected]
    assert total == len(expected)


def test_list_runs_pages_and_rejects_unknown_filters(store: Store) -> None:
    ids = _seed_statuses(store, "tbl")
    with store.read() as tx:
        items, total = list_runs(
            tx, table_id="tbl", status=None, skip=1, limit=2, now=NOW, stuck_after_s=300
        )
        assert total == 5 and [i.id for i in items] == [ids["done"], ids["stale_running"]]
        with pytest.raises(ValueError, match="unknown run status"):
            list_runs(tx, table_id="tbl", status="bogus", skip=0, limit=1, now=NOW, stuck_after_s=1)


def test_active_run_probes_use_the_partial_index(store: Store, table: Table) -> None:
    """The tick asks for every due clock trigger of a batch: one index probe per id, not a scan
    of every pending/running run (filtering on status alone matched no index predicate)."""
    with store.begin() as tx:
        for n in range(3):
            _insert(tx, table.id, trigger_id=f"trg_{n}", clock=n != 1)
        # the row-event run of trg_1 does not count
        wanted = ["trg_0", "trg_1", "trg_2"]
        found = active_clock_trigger_ids(tx, table_id=table.id, trigger_ids=wanted)
        assert found == {"trg_0", "trg_2"}
    single = query_plan(
        store, lambda tx: active_clock_trigger_ids(tx, table_id=table.id, trigger_ids=["trg_0"])
    )
    many = query_plan(
        store,
        lambda tx: active_clock_trigger_ids(tx, table_id=table.id, trigger_ids=["trg_0", "trg_2"]),
    )
    assert "uq_runs_one_active_clock" in single and "uq_runs_one_active_clock" in many


def test_the_lost_pending_sweep_reads_only_old_pending_runs(store: Store, table: Table) -> None:
    """The sweep runs at every tick: on a backlog it must seek each scope's range of pending
    runs older than the stale window in ``ix_runs_pending_scope`` (the one index a pending run
    is in), not read every pending run (a backlog made the idle tick grow with it). A backlog of
    20,000: on a few thousand PostgreSQL rightly reads the pending entries whole, as cheap."""
    backlog = [
        {
            "id": f"run_{n:05d}",
            "kind": "actions",
            "table_id": table.id,
            "trigger_id": "trg_0",
            "source": "created",
            "status": "pending",
            "action_results": [],
            "payload": {},
            "created_at": NOW - timedelta(hours=2 if n < 5 else 0),
            "updated_at": NOW - timedelta(hours=2 if n < 5 else 0),
            "scope": f"org:{n % 20:02d}",
        }
        for n in range(20_000)
    ]
    with store.begin() as tx:
        tx.conn.execute(runs.insert(), backlog)
        tx.conn.exec_driver_sql("ANALYZE runs" if tx.is_postgres else "ANALYZE")
    with store.begin() as tx:
        assert requeue_runs(tx, now=NOW, status="pending", older_than_s=300) == {"actions": 5}
    plan = query_plan(
        store, lambda tx: requeue_runs(tx, now=NOW, status="pending", older_than_s=300)
    )
    assert "ix_runs_pending_scope" in plan, plan
    # each scope's old runs: a seek on (scope, updated_at) per scope (SQLite may skip-scan the
    # scopes, ``ANY(scope)``, when it has statistics), not a scan of the pending runs
    seeks = [line for line in plan.splitlines() if re.search(r"scope.*updated_at ?<", line)]
    assert seeks and all("pending_scope" in line or "Index Cond" in line for line in seeks), plan


def test_the_stale_run_sweep_and_stuck_count_read_only_running_and_failed_runs(
    store: Store, table: Table
) -> None:
    """A pending or done run is in no index the stale-run sweep or the stuck gauge reads:
    both seek ``ix_runs_stuck`` (running and failed runs) to their status."""
    with store.begin() as tx:
        _insert(tx, table.id, trigger_id="trg_0", clock=False)
    sweep = query_plan(
        store, lambda tx: requeue_runs(tx, now=NOW, status="running", older_than_s=300)
    )
    assert "ix_runs_stuck" in sweep and re.search(r"updated_at ?<", sweep), sweep
    stuck = query_plan(store, lambda tx: count_stuck_runs(tx, now=NOW, stuck_after_s=300))
    assert "ix_runs_stuck" in stuck, stuck
    running = query_plan(store, lambda tx: count_runs(tx, status="running"))
    pending = query_plan(store, lambda tx: count_runs(tx, status="pending"))
    assert "ix_runs_stuck" in running and "ix_runs_pending_scope" in pending, (running, pending)


def _run_row(kind: str, table_id: str, status: str, n: int, age: timedelta) -> dict[str, Any]:
    """A ``runs`` row of ``kind`` (``actions``: a table trigger's, of ``table_id``; ``lane``: an
    attempt in the app's scope; ``workflow``: a run of workflow ``wf``), last stamped ``age``
    before ``NOW``."""
    at = NOW - age
    scope = {"actions": "org:1", "lane": "app", "workflow": "app/wf:wf"}[kind]
    return {
        "id": f"{kind}_{status}_{n:05d}_{int(age.total_seconds())}",
        "kind": kind,
        "table_id": table_id if kind == "actions" else "",
        "trigger_id": "wf" if kind == "workflow" else "trg_0",
        "source": "manual" if kind == "workflow" else "created",
        "status": status,
        "action_results": [],
        "payload": {},
        "created_at": at,
        "updated_at": at,
        "scope": scope,
    }


def test_the_stale_run_sweep_reads_each_kinds_index_on_a_populated_table(
    store: Store, table: Table
) -> None:
    """The tick's stale-run sweep is one statement over every kind: on a populated table (after
    ``ANALYZE``) it seeks the running table runs and lane attempts in ``ix_runs_stuck`` and the
    running workflow runs in ``ix_runs_workflow_status``, then each picked run by its key: no
    scan of ``runs``. It moves the stale running runs of each kind and nothing else."""
    old, fresh = timedelta(hours=2), timedelta(seconds=10)
    rows = [
        _run_row(kind, table.id, status, n, old)
        for kind, status in (("actions", "done"), ("workflow", "success"))
        for n in range(10_000)
    ]
    rows += [_run_row(kind, table.id, "failed", n, old) for kind in RUN_KINDS for n in range(500)]
    rows += [_run_row("workflow", table.id, "pending", n, old) for n in range(500)]
    stale = {
        kind: [_run_row(kind, table.id, "running", n, old) for n in range(count)]
        for kind, count in zip(RUN_KINDS, (3, 2, 4), strict=True)
    }
    live = [_run_row(kind, table.id, "running", 0, fresh) for kind in RUN_KINDS]
    with store.begin() as tx:
        tx.conn.execute(runs.insert(), [*rows, *live, *(r for rs in stale.values() for r in rs)])
        tx.conn.exec_driver_sql("ANALYZE runs" if tx.is_postgres else "ANALYZE")
    moved: dict[str, int] = {}
    plan = query_plan(
        store,
        lambda tx: moved.update(
            requeue_runs(tx, now=NOW, status="running", older_than_s=300, kinds=RUN_KINDS)
        ),
        scans_off=False,
    )
    assert moved == {kind: len(rs) for kind, rs in stale.items()}
    with store.read() as tx:
        statuses = dict(tx.conn.execute(select(runs.c.id, runs.c.status)).all())
    assert all(statuses[r["id"]] == "pending" for rs in stale.values() for r in rs)
    assert all(statuses[r["id"]] == "running" for r in live)
    assert "ix_runs_stuck" in plan and "ix_runs_workflow_status" in plan, plan
    if store.is_postgres:
        assert "Seq Scan" not in plan, plan
    else:
        assert not re.search(r"^\s*SCAN ", plan, re.MULTILINE), plan


def _snapshot_rows(tx: Any) -> list[str]:
    found = tx.conn.execute(select(row_snapshots.c.id).order_by(row_snapshots.c.id)).scalars()
    return list(found)


def test_runs_of_one_row_share_one_stored_snapshot(store: Store) -> None:
    """One insert's runs of one record with equal payloads (one object or equal copies) name
    one ``row_snapshots`` row; another record or another row is another; a refused run keeps
    none, a run without a payload needs none; every run reads its own row back."""
    row = {"id": "rec", "data": {"Status": "Open"}}

    def new_run(record_id: str | None, payload: dict[str, Any], clock: bool = False) -> NewRun:
        return NewRun(
            id=new_id(), table_id="tbl", trigger_id=new_id(), record_id=record_id,
            source="created", clock=clock, payload=payload, definition=None, identity="w",
            scheduled_for=None,
        )  # fmt: skip

    with store.begin() as tx:
        held = _insert(tx, "tbl")
        assert held is not None
        refused = new_run("rec3", {"id": "rec3", "data": {}}, clock=True)._replace(
            trigger_id="trg_clock"
        )
        batch = [
            *(new_run("rec", row) for _ in range(3)),
            new_run("rec", {"id": "rec", "data": {"Status": "Open"}}),  # an equal copy
            new_run("rec", {"id": "rec", "data": {"Status": "Done"}}),  # another row
            new_run("rec2", {"id": "rec2", "data": {"Status": "Open"}}),
            new_run(None, {}),
            refused,
        ]
        inserted = insert_runs(tx, runs_=batch, now=NOW)
        assert inserted == {r.id for r in batch[:-1]}
        assert _snapshot_rows(tx) == sorted([batch[0].id, batch[4].id, batch[5].id])
        for made in batch[:-1]:
            run = get_run(tx, run_id=made.id)
            assert run is not None and run.payload == made.payload
        items, _ = list_runs(
            tx, table_id="tbl", status=None, skip=0, limit=50, now=NOW, stuck_after_s=300
        )
    assert len(items) == len(batch) and {run.payload for run in items} == {None}
    assert all("payload" not in run.as_dict() for run in items)
