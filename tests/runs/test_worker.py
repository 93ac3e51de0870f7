"""SPEC §8, §9.1–§9.3: claim, per-action receipts, finish, failure texts, resume, definitions."""

from __future__ import annotations

import sys
from datetime import datetime
from typing import Any

from tocsin import messages
from tocsin.service import Tocsin
from tocsin.store.runs import claim_run

from .helpers import (
    LATER,
    NOW,
    add_record,
    make_run,
    make_table,
    read_run,
    set_triggers,
    trash_table,
    trigger,
)


def notify(text: str = "hi") -> dict[str, Any]:
    return {"type": "notify", "message": text}


def calls_recorder(t: Tocsin, name: str = "rec") -> list[dict[str, Any]]:
    calls: list[dict[str, Any]] = []

    def fn(inputs: dict[str, Any]) -> dict[str, Any]:
        calls.append(inputs)
        return {"n": len(calls)}

    t.register_command(name, fn)
    return calls


def test_work_runs_actions_in_order_and_stores_one_receipt_each(tocsin: Tocsin) -> None:
    trg = trigger(notify("one $row.Title"), notify("two"))
    table = make_table(tocsin, trg)
    rid = add_record(tocsin, table["id"], {"Title": "Leak"})
    run = make_run(tocsin, table, trg, record=(rid, {"Title": "Leak"}))
    assert tocsin.work(now=LATER) == 1
    done = read_run(tocsin, run["id"])
    assert done["status"] == "done" and done["error"] is None and done["attempts"] == 1
    assert [r["action_id"] for r in done["action_results"]] == ["act_1", "act_2"]
    assert all(r["ok"] and r["type"] == "notify" for r in done["action_results"])
    assert done["started_at"] == LATER and done["finished_at"] == LATER
    feed = tocsin.messages(table["scope_id"])
    assert [m["text"] for m in feed["items"]] == ["two", "one Leak"]  # newest first
    assert tocsin.work(now=LATER) == 0


def test_failing_action_fails_the_run_and_stops_there(tocsin: Tocsin) -> None:
    trg = trigger(notify(), {"type": "invoke_command", "command": "nope"}, notify("after"))
    table = make_table(tocsin, trg)
    run = make_run(tocsin, table, trg)
    tocsin.work(now=LATER)
    failed = read_run(tocsin, run["id"])
    assert failed["status"] == "failed"
    assert failed["error"] == messages.command_not_registered("nope")
    assert [(r["action_id"], r["ok"]) for r in failed["action_results"]] == [
        ("act_1", True),
        ("act_2", False),
    ]
    receipt = dict(failed["action_results"][1])
    started, ended = receipt.pop("started_at"), receipt.pop("ended_at")  # ISO, next to now
    assert LATER <= datetime.fromisoformat(started) <= datetime.fromisoformat(ended)
    assert receipt == {
        "action_id": "act_2",
        "type": "invoke_command",
        "ok": False,
        "detail": messages.command_not_registered("nope"),
    }
    assert len(tocsin.messages(table["scope_id"])["items"]) == 1


def test_error_is_truncated_to_1000_and_receipt_detail_to_300(tocsin: Tocsin) -> None:
    def boom(inputs: dict[str, Any]) -> None:
        raise ActionBoom("x" * 5000)

    tocsin.register_command("boom", boom)
    trg = trigger({"type": "invoke_command", "command": "boom"})
    run = make_run(tocsin, make_table(tocsin, trg), trg)
    tocsin.work(now=LATER)
    failed = read_run(tocsin, run["id"])
    assert failed["status"] == "failed"
    assert len(failed["error"]) == 1000 and failed["error"].endswith("x")
    assert len(failed["action_results"][0]["detail"]) == 300


class ActionBoom(RuntimeError):
    pass


def test_worker_survives_any_exception_and_goes_on(tocsin: Tocsin) -> None:
    def crash(inputs: dict[str, Any]) -> None:
        raise ZeroDivisionError("division by zero")

    tocsin.register_command("crash", crash)
    bad = trigger({"type": "invoke_command", "command": "crash"})
    good = trigger(notify())
    table = make_table(tocsin, bad, good)
    first = make_run(tocsin, table, bad)
    second = make_run(tocsin, table, good, now=LATER)
    assert tocsin.work(now=LATER) == 2
    assert read_run(tocsin, first["id"])["status"] == "failed"
    assert "division by zero" in read_run(tocsin, first["id"])["error"]
    assert read_run(tocsin, second["id"])["status"] == "done"


def test_a_command_calling_sys_exit_fails_its_run_not_the_worker(tocsin: Tocsin) -> None:
    def bye(inputs: dict[str, Any]) -> None:
        sys.exit(3)

    tocsin.register_command("bye", bye)
    bad = trigger({"type": "invoke_command", "command": "bye"})
    good = trigger(notify())
    table = make_table(tocsin, bad, good)
    first = make_run(tocsin, table, bad)
    second = make_run(tocsin, table, good, now=LATER)
    assert tocsin.work(now=LATER) == 2
    failed = read_run(tocsin, first["id"])
    assert failed["status"] == "failed" and failed["error"] == "command bye failed: SystemExit: 3"
    assert read_run(tocsin, second["id"])["status"] == "done"


def test_unknown_action_type_fails_the_run(tocsin: Tocsin) -> None:
    trg = trigger({"type": "teleport"})
    run = make_run(tocsin, make_table(tocsin, trg), trg)
    tocsin.work(now=LATER)
    assert read_run(tocsin, run["id"])["error"] == messages.unknown_action_type("teleport")


def test_table_trashed_between_enqueue_and_execution(tocsin: Tocsin) -> None:
    trg = trigger(notify())
    table = make_table(tocsin, trg)
    run = make_run(tocsin, table, trg)
    trash_table(tocsin, table["id"])
    tocsin.work(now=LATER)
    failed = read_run(tocsin, run["id"])
    assert failed["status"] == "failed"
    assert failed["error"] == "trigger config no longer exists"
    assert failed["action_results"] == []


def test_schedule_run_on_trashed_table_fails_the_same_way(tocsin: Tocsin) -> None:
    trg = trigger(notify(), on="schedule", schedule={"type": "interval", "every_seconds": 60})
    table = make_table(tocsin, trg)
    run = make_run(tocsin, table, trg, source="schedule")
    trash_table(tocsin, table["id"])
    tocsin.work(now=LATER)
    assert read_run(tocsin, run["id"])["error"] == messages.TRIGGER_CONFIG_GONE


def test_row_event_run_whose_trigger_was_removed_fails(tocsin: Tocsin) -> None:
    trg = trigger(notify())
    table = make_table(tocsin, trg)
    run = make_run(tocsin, table, trg)
    set_triggers(tocsin, table["id"])
    tocsin.work(now=LATER)
    assert read_run(tocsin, run["id"])["error"] == messages.TRIGGER_CONFIG_GONE


def test_row_event_run_executes_the_live_definition(tocsin: Tocsin) -> None:
    trg = trigger(notify("old"))
    table = make_table(tocsin, trg)
    run = make_run(tocsin, table, trg)
    set_triggers(tocsin, table["id"], {**trg, "actions": [{"id": "act_9", **notify("new")}]})
    tocsin.work(now=LATER)
    assert read_run(tocsin, run["id"])["action_results"][0]["action_id"] == "act_9"
    assert [m["text"] for m in tocsin.messages(table["scope_id"])["items"]] == ["new"]


def test_schedule_run_executes_its_frozen_definition_even_when_trigger_deleted(
    tocsin: Tocsin,
) -> None:
    trg = trigger(
        notify("frozen"), on="schedule", schedule={"type": "interval", "every_seconds": 60}
    )
    table = make_table(tocsin, trg)
    run = make_run(tocsin, table, trg, source="schedule")
    set_triggers(tocsin, table["id"])  # trigger deleted
    tocsin.work(now=LATER)
    done = read_run(tocsin, run["id"])
    assert done["status"] == "done"
    assert [m["text"] for m in tocsin.messages(table["scope_id"])["items"]] == ["frozen"]


def test_legacy_schedule_run_without_snapshot_reads_live_config(tocsin: Tocsin) -> None:
    trg = trigger(notify("v1"), on="schedule", schedule={"type": "interval", "every_seconds": 60})
    table = make_table(tocsin, trg)
    run = make_run(tocsin, table, trg, source="schedule", frozen=False)
    set_triggers(tocsin, table["id"], {**trg, "actions": [notify("v2") | {"id": "act_1"}]})
    tocsin.work(now=LATER)
    assert read_run(tocsin, run["id"])["status"] == "done"
    assert [m["text"] for m in tocsin.messages(table["scope_id"])["items"]] == ["v2"]


def test_duplicate_delivery_loses_the_claim_and_does_nothing(tocsin: Tocsin) -> None:
    trg = trigger(notify())
    table = make_table(tocsin, trg)
    run = make_run(tocsin, table, trg)
    with tocsin.store.begin() as tx:
        first = claim_run(tx, run_id=run["id"], now=LATER)
    with tocsin.store.begin() as tx:
        second = claim_run(tx, run_id=run["id"], now=LATER)
    assert first is not None and first.status == "running" and first.attempts == 1
    assert second is None
    assert tocsin.work(now=LATER) == 0  # nothing pending: the duplicate has no side effect
    assert tocsin.messages(table["scope_id"])["items"] == []


def test_recordless_notify_renders_row_tokens_empty(tocsin: Tocsin) -> None:
    trg = trigger(
        notify("[$row.Title] run $run.id of $trigger.id"),
        on="schedule",
        schedule={"type": "interval", "every_seconds": 60},
    )
    table = make_table(tocsin, trg)
    run = make_run(tocsin, table, trg, source="schedule", scheduled_for=NOW)
    tocsin.work(now=LATER)
    text = tocsin.messages(table["scope_id"])["items"][0]["text"]
    assert text == f"[] run {run['id']} of {trg['id']}"


def test_graceful_stop_finishes_the_action_and_hands_the_run_back(tocsin: Tocsin) -> None:
    flag = {"stop": False}

    def stop_after(inputs: dict[str, Any]) -> str:
        flag["stop"] = True
        return "ok"

    tocsin.register_command("stopper", stop_after)
    trg = trigger({"type": "invoke_command", "command": "stopper"}, notify())
    table = make_table(tocsin, trg)
    run = make_run(tocsin, table, trg)
    assert tocsin.work(now=LATER, should_stop=lambda: flag["stop"]) == 1
    back = read_run(tocsin, run["id"])
    assert back["status"] == "pending"
    assert [r["action_id"] for r in back["action_results"]] == ["act_1"]
    assert tocsin.work(now=LATER) == 1
    done = read_run(tocsin, run["id"])
    assert done["status"] == "done" and done["attempts"] == 2
    assert [r["action_id"] for r in done["action_results"]] == ["act_1", "act_2"]


def test_frozen_schedule_run_on_a_table_that_took_scp_rules_fails(tocsin: Tocsin) -> None:
    trg = trigger(notify(), on="schedule", schedule={"type": "interval", "every_seconds": 60})
    table = make_table(tocsin, trg)
    run = make_run(tocsin, table, trg, source="schedule")
    set_triggers(tocsin, table["id"])
    tocsin.set_scp_rules(table["id"], [{"rule": "members-only"}], now=NOW)
    tocsin.work(now=LATER)
    failed = read_run(tocsin, run["id"])
    assert failed["status"] == "failed" and failed["error"] == messages.SCP_WITH_TRIGGERS


def test_frozen_schedule_run_is_revalidated_against_the_current_schema(tocsin: Tocsin) -> None:
    """SPEC §9.3: a schedule run executes its frozen definition, but the table's schema is
    checked again at every attempt: a column dropped since fails the run, nothing is done."""
    due = {"type": "date_column_reached", "column": "Due"}
    trg = trigger(notify("due $row.Title"), on="schedule", schedule=due)
    table = make_table(tocsin, trg, columns={"Title": "text"})  # "Due" is gone
    rid = add_record(tocsin, table["id"], {"Title": "Leak"})
    run = make_run(tocsin, table, trg, record=(rid, {"Title": "Leak"}), source="schedule")
    tocsin.work(now=LATER)
    failed = read_run(tocsin, run["id"])
    assert failed["status"] == "failed" and "'Due'" in failed["error"]
    assert failed["action_results"] == [] and tocsin.messages(table["scope_id"])["total"] == 0
