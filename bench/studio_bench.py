"""Studio's pages with 10,000 schedules and 100,000 fires (target: each page <= 200 ms).

Seeds one database (a fresh SQLite file, then a fresh PostgreSQL schema when the server
answers) directly through the store (one transaction per 10,000 rows): 10 registered workflows,
10,000 imperative schedules (1,000 per workflow), 100,000 fires, each with its workflow run
(``success``, two steps): half of them on one "hot" schedule (its history is 50,000 fires
deep), the rest spread over the others. A table with a date trigger, a cron trigger and 1,000
table runs (one tick over 1,000 due records).

A lane (``intake``) with ``BENCH_LANE_ATTEMPTS`` attempts (default 20,000), one run each,
decisions cycling through the five statuses, each with a full contract document.

Then every Studio page is requested in-process (FastAPI's TestClient, signed in with a writer
token) ``BENCH_REPEAT`` times after one warm-up; the script prints each page's median and worst
time and its ratio to the 200 ms budget. The deep pages (page 100 of the schedules list, page
2,500 of the hot schedule's fires) show that pagination reads one page, not every row.

Environment: ``BENCH_REPEAT`` (default 15), ``BENCH_LANE_ATTEMPTS``, ``BENCH_PG_URL`` (default
``postgresql://postgres@127.0.0.1:5432/test``). Run: ``.venv/bin/python bench/studio_bench.py``.
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time
import uuid
import warnings
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg

from tocsin import StepContext, step, workflow
from tocsin.api.app import create_app
from tocsin.service import Tocsin
from tocsin.settings import Settings
from tocsin.store import lanes as store_lanes
from tocsin.store import schedules as store_schedules
from tocsin.store import workflow_runs as store_runs

with warnings.catch_warnings():  # Starlette's httpx deprecation, once at import
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

SCHEDULES = 10_000
FIRES = 100_000
WORKFLOWS = 10
REPEAT = int(os.environ.get("BENCH_REPEAT", "15"))
PG_URL = os.environ.get("BENCH_PG_URL", "postgresql://postgres@127.0.0.1:5432/test")
BUDGET_MS = 200.0
T0 = datetime(2026, 1, 1, tzinfo=UTC)
CHAT = "3f0c8a1e-5b2d-4e6f-8a9b-0c1d2e3f4a5b"
HOT = "sch_000000"
LANE = "intake"
LANE_ATTEMPTS = int(os.environ.get("BENCH_LANE_ATTEMPTS", "20000"))
DECISIONS = (
    ("ready", "selected"),
    ("noop", "source_empty"),
    ("noop", "no_eligible_input"),
    ("rejected", "window_overlap"),
    ("ignored", "duplicate_trigger"),
    ("stopped", "source_unavailable"),
)


@step(id="a")
def a(data: Any, ctx: StepContext) -> int:
    return 1


@step(id="b")
def b(data: Any, ctx: StepContext) -> int:
    return 2


FLOWS = [workflow(id=f"wf-{i:02d}").then(a).then(b).commit() for i in range(WORKFLOWS)]


def schedule_row(i: int) -> dict[str, Any]:
    return {
        "id": f"sch_{i:06d}",
        "workflow_id": f"wf-{i % WORKFLOWS:02d}",
        "source": "imperative",
        "cron": "*/5 9-17 * * 1-5",
        "timezone": "Europe/Paris",
        "overlap": "skip",
        "input_data": {"n": i},
        "initial_state": None,
        "request_context": None,
        "metadata": None,
        "paused_at": T0 if i % 7 == 0 else None,
        "next_fire_at": T0 + timedelta(days=400),
        "last_fire_id": None,
        "created_at": T0,
        "updated_at": T0,
    }


def fire_and_run(n: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """Fire ``n``: the first half on the hot schedule, the rest round-robin on the others."""
    sid = HOT if n < FIRES // 2 else f"sch_{1 + n % (SCHEDULES - 1):06d}"
    wid = f"wf-{int(sid[4:]) % WORKFLOWS:02d}"
    at = T0 + timedelta(minutes=5 * n)
    run_id = str(uuid.UUID(int=n + 1))
    step_receipt = {"status": "success", "output": 1, "error": None}
    run = {
        "id": run_id,
        "workflow_id": wid,
        "schedule_id": sid,
        "trigger": "scheduled",
        "status": "success",
        "attempts": 1,
        "input": {"n": n},
        "output": 2,
        "error": None,
        "steps": [
            {**step_receipt, "id": "a", "started_at": at.isoformat(), "ended_at": at.isoformat()},
            {**step_receipt, "id": "b", "started_at": at.isoformat(), "ended_at": at.isoformat()},
        ],
        "initial_state": None,
        "request_context": None,
        "suspend_payload": None,
        "resume_data": None,
        "scheduled_for": at,
        "created_at": at,
        "updated_at": at,
        "started_at": at,
        "ended_at": at + timedelta(seconds=2),
    }
    fire = {
        "id": str(uuid.UUID(int=FIRES + n + 1)),
        "schedule_id": sid,
        "workflow_id": wid,
        "scheduled_for": at,
        "fired_at": at + timedelta(seconds=1),
        "run_id": run_id,
        "publish_status": "published",
        "error": None,
    }
    return fire, run


def lane_rows(n: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """Run and attempt ``n`` of the bench lane: day ``n``'s window, a decision in turn."""
    start, end = T0 + timedelta(days=n), T0 + timedelta(days=n + 1)
    status, reason = DECISIONS[n % len(DECISIONS)]
    run_id, attempt_id = f"run_{n:032x}", f"attempt_{n:032x}"
    iso = {"start_inclusive": start.isoformat(), "end_exclusive": end.isoformat()}
    contract = {
        "schema_version": "trigger-contract.v1",
        "lane_id": LANE,
        "trigger": {"kind": "scheduled", "scheduled_for": iso["end_exclusive"],
                    "observed_at": iso["end_exclusive"]},
        "window": iso,
        "selection_policy_version": "policy-v1",
        "run_id": run_id,
        "attempt_id": attempt_id,
        "source_observation": {"status": "responded", "candidate_count": 3},
        "selection": {"accepted_refs": [f"item-{n}"] if status == "ready" else [],
                      "rejected": [{"ref": f"old-{n}", "reason": "outside_window"},
                                   {"ref": f"en-{n}", "reason": "policy_excluded"}]},
        "decision": {"status": status, "reason": reason},
    }  # fmt: skip
    run = {
        "run_id": run_id, "lane_id": LANE, "zone": "UTC", "scheduled_for": end,
        "window_start": start, "window_end": end, "policy_version": "policy-v1",
        "admitted": status != "rejected", "attempts": 1, "state": "recorded",
        "decision": status, "handler_status": "succeeded" if status == "ready" else None,
        "created_at": end, "updated_at": end,
    }  # fmt: skip
    attempt = {
        "attempt_id": attempt_id, "run_id": run_id, "lane_id": LANE, "attempt": 1,
        "kind": "scheduled", "observed_at": end, "state": "recorded", "decision_status": status,
        "decision_reason": reason, "contract": contract, "handler_status": run["handler_status"],
        "handler_error": None, "error": None, "created_at": end, "updated_at": end,
    }  # fmt: skip
    return run, attempt


def seed_lane(t: Tocsin) -> None:
    with t.store.begin() as tx:
        store_lanes.insert_lane(tx, values={
            "id": LANE, "cron": "0 0 * * *", "timezone": "UTC", "policy_version": "policy-v1",
            "next_fire_at": None, "created_at": T0, "updated_at": T0,
        })  # fmt: skip
    for start in range(0, LANE_ATTEMPTS, 5_000):
        with t.store.begin() as tx:
            for n in range(start, min(start + 5_000, LANE_ATTEMPTS)):
                run, attempt = lane_rows(n)
                store_lanes.insert_run(tx, values=run)
                store_lanes.insert_attempt(tx, values=attempt)


def seed(t: Tocsin) -> str:
    """Schedules, fires and runs through the store; a table with 1,000 runs. Its id."""
    with t.store.begin() as tx:
        for i in range(SCHEDULES):
            store_schedules.insert_schedule(tx, values=schedule_row(i))
    for start in range(0, FIRES, 10_000):
        pairs = [fire_and_run(n) for n in range(start, start + 10_000)]
        with t.store.begin() as tx:
            store_runs.insert_runs(tx, rows=[r for _, r in pairs])
            store_schedules.insert_fires(tx, fires=[f for f, _ in pairs])
    table = t.create_table(
        scope="chatroom", scope_id=CHAT, name="Cases", columns={"Due": "date"}, now=T0
    )
    t.insert_records(table["id"], [{"Due": "2026-01-01"}] * 1000, now=T0)
    notify = [{"type": "notify", "message": "due"}]
    triggers = [
        {"name": "due", "on": "schedule", "schedule": {"type": "date_column_reached",
         "column": "Due"}, "actions": notify},
        {"name": "weekly", "on": "schedule", "schedule": {"type": "cron",
         "expression": "0 9 * * 1"}, "actions": notify},
    ]  # fmt: skip
    t.set_triggers(table["id"], triggers, now=T0)
    t.tick(now=T0 + timedelta(days=1), record_limit=1000)
    seed_lane(t)
    return str(table["id"])


def timed(fetch: Callable[[], Any]) -> tuple[float, float]:
    fetch()  # warm-up
    samples = []
    for _ in range(REPEAT):
        start = time.perf_counter()
        resp = fetch()
        samples.append((time.perf_counter() - start) * 1000)
        assert resp.status_code == 200, resp.text[:300]
    return statistics.median(samples), max(samples)


def pages(t: Tocsin, table_id: str) -> list[str]:
    run = t.schedules.fires(HOT, limit=1)["items"][0]["run_id"]
    return [
        "/workflows/schedules",
        "/workflows/schedules?workflowId=wf-03",
        "/workflows/schedules?page=100",
        f"/workflows/schedules/{HOT}",
        f"/workflows/schedules/{HOT}?page=2500",
        f"/workflows/schedules/{HOT}/fires",
        "/workflows/schedules/sch_000123",
        "/workflows",
        "/workflows/wf-00",
        "/workflows/wf-00?page=500",
        f"/workflows/wf-00/graph/{run}",
        "/tables",
        f"/tables/{table_id}",
        f"/tables/{table_id}?status=stuck",
        "/lanes",
        f"/lanes/{LANE}",
        f"/lanes/{LANE}?decision=stopped",
        f"/lanes/{LANE}?page={max(1, LANE_ATTEMPTS // 25)}",
    ]


def bench(url: str, label: str) -> None:
    t = Tocsin.open(url, settings=Settings(database_url=url), workflows=FLOWS)
    try:
        started = time.perf_counter()
        table_id = seed(t)
        print(f"\n{label}: seeded {SCHEDULES:,} schedules, {FIRES:,} fires and runs, 1,000 "
              f"table runs, {LANE_ATTEMPTS:,} lane attempts in "
              f"{time.perf_counter() - started:.1f} s")  # fmt: skip
        token = t.create_token(
            scope="chatroom", scope_id=CHAT, role="moderator", permissions=["schedules:write"]
        )
        with TestClient(create_app(tocsin=t), follow_redirects=False) as http:
            assert http.get("/login", params={"token": token}).status_code == 303
            print(f"  {'page':<48} {'median':>9} {'worst':>9} {'median/200ms':>13}")
            for path in pages(t, table_id):
                median, worst = timed(lambda p=path: http.get(p))  # type: ignore[misc]
                verdict = "ok" if median <= BUDGET_MS else "OVER"
                print(f"  {path[:48]:<48} {median:7.1f}ms {worst:7.1f}ms "
                      f"{median / BUDGET_MS:12.2f}x {verdict}")  # fmt: skip
    finally:
        t.close()


def pg_schema_url() -> tuple[str, str] | None:
    try:
        with psycopg.connect(PG_URL, autocommit=True, connect_timeout=3) as conn:
            schema = f"studio_bench_{uuid.uuid4().hex[:8]}"
            conn.execute(f"CREATE SCHEMA {schema}")
    except psycopg.OperationalError:
        return None
    return f"{PG_URL}?options=-csearch_path%3D{schema}", schema


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        bench(f"sqlite:///{tmp}/studio.db", "SQLite")
    found = pg_schema_url()
    if found is None:
        print("\nPostgreSQL: not reachable, skipped")
        return
    url, schema = found
    try:
        bench(url, "PostgreSQL")
    finally:
        with psycopg.connect(PG_URL, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA {schema} CASCADE")


if __name__ == "__main__":
    main()
