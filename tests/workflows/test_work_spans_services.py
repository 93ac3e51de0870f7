"""``Tocsin.work`` / ``Tocsin.tick`` span the services the facade is composed of: one
``limit`` is shared by table runs, then workflow runs; the tick reports every pass's counts."""

from __future__ import annotations

import uuid

from tocsin.service import Tocsin

from .helpers import NOW, daily, minutes

TICK_KEYS = [
    "tables_scanned",
    "tables_with_schedules",
    "runs_created",
    "trigger_runs_requeued",
    "staged_changes_requeued",
    "workflow_runs_requeued",
    "lane_attempts_requeued",
    "schedules_fired",
    "lanes_fired",
]


def test_one_limit_covers_table_runs_and_workflow_runs_a_scope_a_turn(tocsin: Tocsin) -> None:
    """``work(limit=1)`` claims once for every kind: the scopes in turn, from the start, so the
    workflow's scope (``app/wf:daily-report``, before the table's tenant ``chatroom:…`` in key
    order) first, then the table run; no kind goes first by rule."""
    tocsin.register_workflows([daily()])
    table = tocsin.create_table("chatroom", str(uuid.uuid4()), "T", {"Title": "text"}, now=NOW)
    notify = {"type": "notify", "message": "new $row.Title"}
    tocsin.set_triggers(table["id"], [{"on": "created", "actions": [notify]}], now=NOW)
    tocsin.insert_records(table["id"], [{"Title": "a"}], now=NOW)
    run = tocsin.start_workflow("daily-report", {"user_id": "u1"}, now=NOW, wait=False)
    later = NOW + minutes(1)
    assert tocsin.work(now=later, limit=1) == 1
    assert tocsin.get_workflow_run(run["id"])["status"] == "success"
    assert tocsin.run_counts(now=later)["done"] == 0
    assert tocsin.work(now=later, limit=1) == 1
    assert tocsin.run_counts(now=later)["done"] == 1
    assert tocsin.work(now=later, limit=1) == 0


def test_the_tick_reports_tables_then_schedules_then_lanes(tocsin: Tocsin) -> None:
    tocsin.register_workflows([daily(cron="* * * * *", tz="UTC")])
    tocsin.sync_schedules(now=NOW)
    counts = tocsin.tick(now=NOW + minutes(1))
    assert list(counts) == TICK_KEYS
    assert (counts["schedules_fired"], counts["lanes_fired"]) == (1, 0)
