"""``tocsin due``, ``tocsin triggers fires|skips|next|run``, ``tocsin schedules
skips|next|backfill`` through Typer's runner."""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

from support.cli import invoke
from tocsin.service import Tocsin

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "engine"))
from engine_support import NOW, finish_all, interval, make_table

APP = "workflows.sample_app:WORKFLOWS"


def test_trigger_commands_and_due(env: dict[str, str], tocsin: Tocsin) -> None:
    table_id = make_table(tocsin)
    [saved] = tocsin.set_triggers(table_id, [interval(60)], now=NOW)
    tocsin.tick(now=NOW)
    finish_all(tocsin, table_id, now=NOW)
    tocsin.tick(now=NOW + timedelta(days=7))
    skips = invoke("triggers", "skips", "--table", table_id, saved["id"])
    assert skips.exit_code == 0, skips.output
    assert "1 skip range(s)" in skips.output and "coalesced" in skips.output
    assert "10079" in skips.output
    as_json = json.loads(
        invoke("triggers", "skips", "--table", table_id, saved["id"], "--json").output
    )
    assert as_json["items"][0]["count"] == 10_079
    at = (NOW + timedelta(days=7, minutes=1)).isoformat()
    nxt = json.loads(
        invoke(
            "triggers", "next", "--table", table_id, saved["id"], "-n", "2", "--at", at, "--json"
        ).output
    )
    assert [i["status"] for i in nxt["items"]] == ["waiting_for_active_run", "scheduled"]
    due = invoke("due", "--at", "2026-09-03T05:03:13Z")
    assert due.exit_code == 0, due.output
    assert "would be created" in due.output and "active_run" in due.output
    report = json.loads(invoke("due", "--at", "2026-09-03T05:03:13Z", "--json").output)
    assert report["runs"] == 0
    bad = invoke("due", "--at", "tomorrow")
    assert bad.exit_code == 2 and "--at must be an ISO instant" in bad.output
    ran = invoke("triggers", "run", "--table", table_id, saved["id"])
    assert ran.exit_code == 0 and json.loads(ran.output)["source"] == "manual"
    missing = invoke("triggers", "skips", "--table", table_id, "trg_nope")
    assert missing.exit_code == 1 and "error (404): trigger not found" in missing.output


def test_trigger_fires_shows_the_runs_with_the_skips_between(
    env: dict[str, str], tocsin: Tocsin
) -> None:
    table_id = make_table(tocsin)
    [saved] = tocsin.set_triggers(table_id, [interval(60)], now=NOW)
    tocsin.tick(now=NOW)
    finish_all(tocsin, table_id, now=NOW)
    tocsin.tick(now=NOW + timedelta(days=7))
    fires = invoke("triggers", "fires", "--table", table_id, saved["id"])
    assert fires.exit_code == 0, fires.output
    assert "2 fire(s)" in fires.output and "coalesced" in fires.output
    assert "done" in fires.output and "pending" in fires.output
    args = ("triggers", "fires", "--table", table_id, saved["id"])
    page = json.loads(invoke(*args, "--json").output)
    assert [i["kind"] for i in page["items"]] == ["fire", "skip", "fire"]
    assert page["items"][1]["count"] == 10_079
    assert page["items"][2]["scheduled_for"].startswith("2026-08-27")
    missing = invoke("triggers", "fires", "--table", table_id, "trg_nope")
    assert missing.exit_code == 1 and "error (404): trigger not found" in missing.output


def test_schedule_skips_next_and_backfill(env: dict[str, str], tocsin: Tocsin) -> None:
    invoke("scheduler", "--app", APP, "--clock-stdin", stdin="2026-03-02T12:00:30Z\n")
    tocsin.tick(now=datetime(2026, 3, 2, 13, 0, tzinfo=UTC))
    skips = invoke("schedules", "skips", "wf_tick-tock")
    assert skips.exit_code == 0 and "coalesced" in skips.output and "59" in skips.output
    nxt = invoke("schedules", "next", "wf_daily-report", "-n", "3", "--json")
    assert len(json.loads(nxt.output)["items"]) == 3
    args = ("schedules", "backfill", "wf_tick-tock", "--from", "2026-03-01T00:00Z")
    first = invoke(*args, "--to", "2026-03-01T01:00Z")
    assert first.exit_code == 0, first.output
    assert "60 run(s) created, 0 already backfilled" in first.output
    again = invoke(*args, "--to", "2026-03-01T01:00Z")
    assert "0 run(s) created, 60 already backfilled" in again.output
    big = invoke(*args, "--to", "2026-03-09T00:00Z")
    assert big.exit_code == 1 and "more than 10000" in big.output


def test_due_names_the_events_a_compound_schedule_waits_for(
    env: dict[str, str], tocsin: Tocsin
) -> None:
    from tocsin import AllOf, Cron, Schedule, TableUpdated, workflow
    from tocsin.cli.whynot import _due_row
    from workflows.helpers import send_report

    table_id = make_table(tocsin)
    tree = AllOf(Cron("0 9 * * *", timezone="UTC"), TableUpdated(table_id))
    sched = Schedule(trigger=tree, input_data={})
    tocsin.register_workflows([workflow(id="watch", schedule=sched).then(send_report).commit()])
    tocsin.sync_schedules(now=datetime(2026, 3, 2, 8, tzinfo=UTC))
    report = json.loads(invoke("due", "--at", "2026-03-02T09:00:00Z", "--json").output)
    [entry] = [e for e in report["not_firing"] if e.get("schedule_id") == "wf_watch"]
    assert entry["reason"] == "compound_unsatisfied"
    assert entry["waiting_for"] == [{"path": "1", "kind": "table_updated", "subject": table_id}]
    assert _due_row(entry)["detail"] == f"waiting for table_updated {table_id}"
