"""The one claim (``store.runs.claim_scoped_runs``) takes workflow runs too, both backends: of the
claimer's ``workflows`` only, oldest first, a workflow's runs a scope of the app's tenant
(``app/wf:<workflow>``), a limited schedule's (``max_concurrent``, inserted so:
``app/wf:<workflow>/<schedule>``) one within it, each visited in turn with every other; a
workflow's and a schedule's ``max_concurrent`` (``RunLimits``, nested) never passed, two
PostgreSQL claimers at once included; the pick reads the pending index, never a scan."""

from __future__ import annotations

import re
import threading
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from sqlalchemy import insert, select

from tocsin.core.model import Run, RunStatus, Table
from tocsin.engine.schedules import new_run
from tocsin.errors import TransientStoreError
from tocsin.store import Store
from tocsin.store import workflow_runs as store_runs
from tocsin.store.runs import (
    RUN_COLUMNS,
    RUN_FIELDS,
    NewRun,
    RunLimits,
    claim_scoped_runs,
    finish_runs,
    get_run,
    insert_runs,
    next_turn,
    put_definitions,
    run_value,
    tenant_of,
)
from tocsin.store.schema import runs

from .helpers import (
    CLAIM_AT,
    NOW,
    PG_ONLY,
    claim_ids,
    make_table,
    new_id,
    pending_table_runs,
    plans_of,
)

LATER = CLAIM_AT


def _workflow_runs(
    store: Store,
    workflow: str,
    count: int,
    *,
    schedule: str | None = None,
    at: Any = NOW,
    limited: bool = False,
) -> list[str]:
    """``count`` pending runs of ``workflow`` (of ``schedule`` when given), one a millisecond;
    ``limited``: the schedule declares ``max_concurrent`` (its runs' own scope)."""
    rows = [
        new_run(
            run_id=new_id(), workflow_id=workflow, input={"n": i}, trigger="manual",
            now=at + timedelta(milliseconds=i), schedule_id=schedule,
            initial_state={"s": i}, request_context={"user": "u"},
        )
        for i in range(count)
    ]  # fmt: skip
    with store.begin() as tx:
        store_runs.insert_runs(tx, rows=rows, limited={schedule} if limited and schedule else ())
    return [r["id"] for r in rows]


def _ids(claimed: list[tuple[str, str]]) -> list[str]:
    return [run_id for run_id, _ in claimed]


def _finish(store: Store, run_ids: list[str]) -> None:
    values = {"status": "success", "steps": [], "output": None, "error": None}
    rows = [
        store_runs.finish_row(run_id, 1, {**values, "suspend_payload": None}, LATER)
        for run_id in run_ids
    ]
    with store.begin() as tx:
        assert finish_runs(tx, rows=rows) == set(run_ids)


def test_the_claim_takes_the_runs_of_its_workflows_only_oldest_first(
    store: Store, table: Table
) -> None:
    """Runs of a registered workflow come back as workflow runs (kind, fields decoded), oldest
    first; an unregistered workflow's and a run waiting for its retry stay pending."""
    mine = _workflow_runs(store, "wf_a", 3)
    theirs = _workflow_runs(store, "wf_b", 2, at=NOW - timedelta(minutes=1))
    tables = pending_table_runs(store, table, 2, at=NOW + timedelta(seconds=1))
    with store.begin() as tx:  # a retried run waits for its backoff
        moved = store_runs.transition(
            tx, run_id=mine[2], from_statuses=("pending",),
            values={"next_attempt_at": LATER + timedelta(minutes=1)}, now=NOW,
        )  # fmt: skip
        assert moved
        claimed = claim_scoped_runs(tx, now=LATER, limit=10, workflows=["wf_a"])
    assert [run.id for run in claimed] == [*mine[:2], *tables]  # by creation
    runs = {run.id: run for run in claimed}
    first = runs[mine[0]]
    assert first.scope == "app/wf:wf_a" and tenant_of(first.scope) == "app"
    assert (first.kind, first.trigger_id, first.table_id, first.source) == (
        "workflow", "wf_a", "", "manual"
    )  # fmt: skip
    assert (first.input, first.initial_state, first.request_context) == (
        {"n": 0}, {"s": 0}, {"user": "u"}
    )  # fmt: skip
    assert (first.attempts, first.attempt, first.action_results) == (1, 1, [])
    assert {runs[t].kind for t in tables} == {"actions"}
    with store.read() as tx:
        found = [store_runs.get_run(tx, run_id=i) for i in theirs]
    assert [run.status if run else None for run in found] == ["pending"] * len(theirs)
    assert claim_ids(store, 10, workflows=["wf_a"], now=LATER + timedelta(minutes=2)) == [
        (mine[2], "app/wf:wf_a")  # its backoff passed
    ]


def test_a_claimed_run_is_the_run_read_back_of_every_kind(store: Store, table: Table) -> None:
    """A claimed run of each kind (a row-event run; a clock run of a stored definition with a
    row snapshot; a workflow run; a lane attempt claimed again after a finish and a backoff) is,
    field for field and type for type, the run read back after the claim: what the claim sets
    and does not return (status, ``updated_at`` its ``now``, given here in another zone than
    UTC, no ``finished_at`` nor ``next_attempt_at``) included. The value is a Run, immutable."""
    row_event = pending_table_runs(store, table, 1)[0]
    clock_run = NewRun(
        id=new_id(), table_id=table.id, trigger_id="sch", record_id="rec_1", source="schedule",
        clock=True, payload={"name": "a", "n": 1}, definition=None, identity="i",
        scheduled_for=NOW, definition_hash="h1",
    )  # fmt: skip
    lane = new_id()
    with store.begin() as tx:
        put_definitions(tx, definitions={"h1": {"id": "sch", "on": "schedule", "actions": []}})
        insert_runs(tx, runs_=[clock_run], now=NOW)
        tx.conn.execute(
            insert(runs).values(
                id=lane, kind="lane", table_id="", trigger_id="intake", source="lane",
                clock=False, status="pending", attempts=1, error="timed out",
                action_results=[{"ok": False}], payload={}, created_at=NOW, updated_at=NOW,
                started_at=NOW, finished_at=NOW, next_attempt_at=NOW + timedelta(seconds=1),
                scheduled_for=NOW, scope="app",
            )
        )  # fmt: skip
    flow = _workflow_runs(store, "wf", 1)[0]
    at = LATER.astimezone(timezone(timedelta(hours=2)))
    with store.begin() as tx:
        claimed = claim_scoped_runs(tx, now=at, limit=10, own=["intake"], workflows=["wf"])
        picked = select(*RUN_COLUMNS).where(runs.c.id.in_([row_event, clock_run.id, lane, flow]))
        read = {row.id: run_value(row._mapping) for row in tx.conn.execute(picked)}
        table_run = get_run(tx, run_id=row_event)
    got = {run.id: run for run in claimed}
    assert set(got) == set(read) and len(got) == 4
    assert {run.kind for run in got.values()} == {"actions", "workflow", "lane"}
    for run_id, run in got.items():
        assert run == read[run_id]
        for name in RUN_FIELDS:
            value, expected = getattr(run, name), getattr(read[run_id], name)
            assert type(value) is type(expected), name
            if isinstance(value, datetime):
                assert value.tzinfo is expected.tzinfo is UTC, name
    assert got[row_event] == table_run
    assert got[clock_run.id].payload == {"name": "a", "n": 1}
    assert got[clock_run.id].definition == {"id": "sch", "on": "schedule", "actions": []}
    assert (got[lane].attempts, got[lane].error, got[lane].action_results) == (
        2, "timed out", [{"ok": False}]
    )  # fmt: skip
    assert (got[lane].status, got[lane].updated_at, got[lane].started_at) == ("running", at, NOW)
    assert (got[lane].finished_at, got[lane].next_attempt_at) == (None, None)
    run = got[flow]
    assert type(run) is Run
    with pytest.raises(AttributeError):
        run.status = RunStatus.DONE  # type: ignore[misc]
    retried = run._replace(attempts=3)
    assert type(retried) is Run and retried.attempts == 3 and retried.input == run.input


def test_workflow_scopes_take_turns_with_the_tenants(store: Store, table: Table) -> None:
    """A workflow's 50 runs and its limited schedule's 50, all older than two tenants' runs: a
    claim of 8 takes two of each of the four scopes, the oldest of each; the next goes on after
    them."""
    other = make_table(store)
    manual = _workflow_runs(store, "wf", 50)
    scheduled = _workflow_runs(store, "wf", 50, schedule="wf__s", limited=True)
    later = NOW + timedelta(minutes=1)
    a_ids, b_ids = (pending_table_runs(store, t, 3, at=later) for t in (table, other))
    claimed = claim_ids(store, 8, workflows=["wf"])
    assert set(_ids(claimed)) == {*manual[:2], *scheduled[:2], *a_ids[:2], *b_ids[:2]}
    scopes = {scope for _, scope in claimed}
    assert {s for s in scopes if tenant_of(s) == "app"} == {"app/wf:wf", "app/wf:wf/wf__s"}
    after = next_turn("", scopes)
    assert len(claim_ids(store, 4, workflows=["wf"], after=after)) == 4


def test_the_schedules_of_a_workflow_share_its_scope(store: Store) -> None:
    """10 schedules without a limit, 5 runs each: one scope, the workflow's, so a claim visits it
    once and takes its oldest runs whatever their schedule. A schedule whose limit the inserting
    process did not have (declared later) is of the workflow's scope too: the limit holds for its
    runs inserted after, only those are of its own scope."""
    ids = []
    for n in range(10):
        ids += _workflow_runs(store, "wf", 5, schedule=f"s{n}", at=NOW + timedelta(seconds=n))
    claimed = claim_ids(store, 12, workflows=["wf"])
    assert _ids(claimed) == ids[:12] and {s for _, s in claimed} == {"app/wf:wf"}
    later = _workflow_runs(store, "wf", 2, schedule="s0", at=LATER, limited=True)
    limits = RunLimits(schedules={"s0": 1}, schedule_of={"s0": "wf"})
    claimed = claim_ids(store, 100, workflows=["wf"], limits=limits, now=LATER + timedelta(1))
    assert {run_id for run_id, _ in claimed} == {*ids[12:], later[0]}
    assert [s for r, s in claimed if r == later[0]] == ["app/wf:wf/s0"]


def test_a_worker_of_workflows_only_claims_workflow_runs_only(store: Store, table: Table) -> None:
    table_ids = pending_table_runs(store, table, 3)
    wf_ids = _workflow_runs(store, "wf", 3, at=NOW + timedelta(seconds=1))
    assert _ids(claim_ids(store, 10, actions=False, workflows=["wf"])) == wf_ids
    assert claim_ids(store, 10, actions=False, workflows=["wf"]) == []
    assert _ids(claim_ids(store, 10)) == table_ids  # a table worker: the table runs


def test_a_table_worker_passes_over_a_workflow_backlog(store: Store, table: Table) -> None:
    """No ``workflows``: every workflow scope is passed over (one probe in all), so a claim still
    visits its ``limit`` tenant scopes past a backlog of many workflows' schedules."""
    for n in range(6):
        _workflow_runs(store, f"wf{n}", 2, schedule=f"s{n}", limited=True)
        _workflow_runs(store, f"wf{n}", 2)
    tables = [table, *(make_table(store) for _ in range(2))]
    for t in tables:
        pending_table_runs(store, t, 2)
    claimed = claim_ids(store, 3, after="app")  # the visit starts in the workflow scopes' range
    assert {tenant_of(s) for _, s in claimed} == {f"{t.scope}:{t.scope_id}" for t in tables}
    # a worker of one of them passes over the others' schedules, takes its own
    mine = claim_ids(store, 30, actions=False, workflows=["wf3"])
    assert {s for _, s in mine} == {"app/wf:wf3", "app/wf:wf3/s3"} and len(mine) == 4


def test_the_apps_cap_counts_its_workflow_runs_together(store: Store, table: Table) -> None:
    _workflow_runs(store, "wf", 4)
    _workflow_runs(store, "wf", 4, schedule="sch")
    pending_table_runs(store, table, 2)
    claimed = claim_ids(store, 10, workflows=["wf"], held={"app": 5}, cap=8)
    assert len([s for _, s in claimed if tenant_of(s) == "app"]) == 3  # the app's room: 8 - 5
    assert len(claimed) == 5


def test_a_workflows_limit_holds_across_claims(store: Store) -> None:
    runs = _workflow_runs(store, "wf", 5)
    limits = RunLimits(workflows={"wf": 2})
    first = claim_ids(store, 10, workflows=["wf"], limits=limits)
    assert _ids(first) == runs[:2]
    assert claim_ids(store, 10, workflows=["wf"], limits=limits) == []  # its 2 run
    _finish(store, runs[:1])
    assert _ids(claim_ids(store, 10, workflows=["wf"], limits=limits)) == runs[2:3]
    assert len(claim_ids(store, 10, workflows=["wf"])) == 2  # a claimer without the limit


def test_a_schedules_runs_count_for_its_workflow(store: Store) -> None:
    """Nested: a workflow of 3 with a schedule of 1: of the schedule's 4 runs one, of its manual
    runs two (the workflow's room); a schedule's running runs use its workflow's room."""
    scheduled = _workflow_runs(store, "wf", 4, schedule="sch", limited=True)
    manual = _workflow_runs(store, "wf", 4, at=NOW + timedelta(seconds=1))
    limits = RunLimits(workflows={"wf": 3}, schedules={"sch": 1}, schedule_of={"sch": "wf"})
    claimed = claim_ids(store, 10, workflows=["wf"], limits=limits)
    assert sorted(_ids(claimed)) == sorted([scheduled[0], *manual[:2]])
    assert claim_ids(store, 10, workflows=["wf"], limits=limits) == []
    _finish(store, [scheduled[0]])  # the schedule's slot and one of the workflow's free
    # the workflow's one slot: its scopes in turn, its own first (key order)
    assert _ids(claim_ids(store, 10, workflows=["wf"], limits=limits)) == [manual[2]]
    # the workflow alone limited (2 of 3 running already): its schedule's runs fill its room
    _finish(store, manual[:2])
    only = RunLimits(workflows={"wf": 2})  # running: manual[2]
    assert _ids(claim_ids(store, 10, workflows=["wf"], limits=only, after="app/wf:wf")) == [
        scheduled[1]
    ]


def test_a_limited_schedule_of_a_free_workflow(store: Store) -> None:
    scheduled = _workflow_runs(store, "wf", 3, schedule="sch", limited=True)
    manual = _workflow_runs(store, "wf", 3, at=NOW + timedelta(seconds=1))
    limits = RunLimits(schedules={"sch": 1}, schedule_of={"sch": "wf"})
    claimed = claim_ids(store, 10, workflows=["wf"], limits=limits)
    assert sorted(_ids(claimed)) == sorted([scheduled[0], *manual])
    assert claim_ids(store, 10, workflows=["wf"], limits=limits) == []


@PG_ONLY
def test_two_claimers_at_once_never_pass_a_workflows_limit(store: Store) -> None:
    """A claims the workflow's 2 and holds its transaction open; B skips A's locked rows, takes 2
    more and waits for A's advisory lock: once A commits, B counts 4 > 2 and rolls back
    (``TransientStoreError``); B's retry takes none."""
    _workflow_runs(store, "wf", 6)
    limits = RunLimits(workflows={"wf": 2})
    a_claimed, a_commit = threading.Event(), threading.Event()
    outcome: dict[str, Any] = {}

    def claimer_a() -> None:
        with store.begin() as tx:
            outcome["a"] = len(
                claim_scoped_runs(tx, now=LATER, limit=2, workflows=["wf"], limits=limits)
            )
            a_claimed.set()
            assert a_commit.wait(10)

    def claimer_b() -> None:
        try:
            with store.begin() as tx:
                claim_scoped_runs(tx, now=LATER, limit=2, workflows=["wf"], limits=limits)
        except TransientStoreError as exc:
            outcome["b"] = exc

    a = threading.Thread(target=claimer_a)
    a.start()
    assert a_claimed.wait(10)
    b = threading.Thread(target=claimer_b)
    b.start()
    b.join(0.5)  # B waits for A's advisory lock
    assert b.is_alive()
    a_commit.set()
    a.join(10)
    b.join(10)
    assert outcome["a"] == 2 and isinstance(outcome["b"], TransientStoreError)
    assert claim_ids(store, 10, workflows=["wf"], limits=limits) == []
    with store.read() as tx:
        assert store_runs.count_runs(tx, status="running") == 2


@PG_ONLY
@pytest.mark.parametrize("nested", [False, True])
def test_racing_claimers_never_pass_the_limits(store: Store, nested: bool) -> None:
    """Four threads claim and finish in a loop, retrying a claim rolled back past a limit: at no
    commit are more runs running than the workflow's limit (nested: the schedule's too)."""
    _workflow_runs(store, "wf", 20, schedule="sch", limited=True)
    _workflow_runs(store, "wf", 20 if nested else 0)
    limits = (
        RunLimits(workflows={"wf": 3}, schedules={"sch": 1}, schedule_of={"sch": "wf"})
        if nested
        else RunLimits(workflows={"wf": 3})
    )
    peaks: list[tuple[int, int]] = []
    lock = threading.Lock()

    def running() -> tuple[int, int]:
        with store.read() as tx:
            rows = tx.conn.exec_driver_sql(
                "SELECT count(*), count(schedule_id) FROM runs WHERE kind = 'workflow'"
                " AND status = 'running'"
            ).one()
        return int(rows[0]), int(rows[1])

    def worker() -> None:
        for _ in range(60):
            try:
                with store.begin() as tx:
                    got = claim_scoped_runs(tx, now=LATER, limit=2, workflows=["wf"], limits=limits)
            except TransientStoreError:
                continue
            with lock:
                peaks.append(running())
            _finish(store, [run.id for run in got])

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert peaks and max(total for total, _ in peaks) <= 3
    if nested:
        assert max(of_schedule for _, of_schedule in peaks) <= 1
    with store.read() as tx:  # every run ran (no endless retry left one behind)
        assert store_runs.count_runs(tx, status="success") == (40 if nested else 20)


def _claim_plan(store: Store, **kw: Any) -> tuple[str, list[str]]:
    """The plan of the one claim's statement (PostgreSQL ``EXPLAIN``, SQLite ``EXPLAIN QUERY
    PLAN``), planned in the claim's own transaction (its settings), and the scopes it took."""
    plans, claimed = plans_of(
        store,
        lambda statement: "fwd(scope" in statement,
        lambda tx: claim_scoped_runs(tx, now=LATER, **kw),
    )
    assert len(plans) == 1
    return plans[0], [run.scope for run in claimed]


def test_the_claim_reads_the_pending_index_on_a_backlog(store: Store, table: Table) -> None:
    """A backlog of 3,000 workflow runs (three workflows, a schedule) and table runs: the claim
    visits the scopes and takes each one's oldest through ``ix_runs_pending_scope``, counts the
    limited workflow's running runs in ``ix_runs_workflow_status``; no scan of ``runs``, no
    bitmap, no hash join of the pending runs."""
    for n in range(3):
        _workflow_runs(store, f"wf{n}", 800)
    _workflow_runs(store, "wf0", 600, schedule="sch", limited=True)
    pending_table_runs(store, table, 5)
    limits = RunLimits(workflows={"wf0": 50}, schedules={"sch": 5}, schedule_of={"sch": "wf0"})
    if store.is_postgres:  # statistics, as a populated database has (the UPDATE by its key)
        with store.begin() as tx:
            tx.conn.exec_driver_sql("ANALYZE runs")
    plan, scopes = _claim_plan(store, limit=500, workflows=["wf0", "wf1"], limits=limits)
    assert "ix_runs_pending_scope" in plan and "ix_runs_workflow_status" in plan, plan
    if store.is_postgres:
        assert "Seq Scan" not in plan and "Bitmap" not in plan and "Hash" not in plan, plan
    else:  # every read of runs a search; the one walk: the first pending scope (LIMIT 1)
        scans = [line for line in plan.splitlines() if re.match(r"\s*SCAN (runs|[rxyc])\b", line)]
        assert all(
            "USING COVERING INDEX ix_runs_pending_scope" in line
            or "USING INDEX ix_runs_pending_scope" in line
            for line in scans
        ), plan
    assert scopes.count("app/wf:wf0/sch") == 5 and scopes.count("app/wf:wf0") == 45
    assert scopes.count("app/wf:wf1") > 0 and "app/wf:wf2" not in scopes
