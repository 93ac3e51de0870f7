"""SPEC §10 notify (the chatroom feed) and start_workflow (an unknown workflow fails the action)."""

from __future__ import annotations

import pytest

from runs.helpers import LATER, NOW, add_record, make_run, make_table, read_run, trigger
from tocsin.errors import ValidationError
from tocsin.service import Tocsin
from tocsin.store.records import set_table_triggers


def test_notify_posts_to_the_tables_own_chatroom(tocsin: Tocsin) -> None:
    """``chatroom_id`` may name the table's own chatroom, in any spelling of its UUID."""
    table = make_table(tocsin)
    room = table["scope_id"]
    trg = trigger(
        {"type": "notify", "chatroom_id": room.upper(), "message": "hello from $trigger.id"}
    )
    with tocsin.store.begin() as tx:
        set_table_triggers(tx, table_id=table["id"], triggers=[trg], now=NOW)
    run = make_run(tocsin, table, trg)
    tocsin.work(now=LATER)
    assert read_run(tocsin, run["id"])["action_results"][0]["detail"] == f"notified chatroom {room}"
    (message,) = tocsin.messages(room)["items"]
    assert message["text"] == f"hello from {trg['id']}"
    assert message["run_id"] == run["id"] and message["created_at"] == LATER


def test_notify_without_chatroom_outside_a_chatroom_scope_fails(tocsin: Tocsin) -> None:
    trg = trigger({"type": "notify", "message": "x"})
    run = make_run(tocsin, make_table(tocsin, trg, scope="user"), trg)
    tocsin.work(now=LATER)
    assert "chatroom_id" in read_run(tocsin, run["id"])["error"]


def test_messages_are_paged(tocsin: Tocsin) -> None:
    trg = trigger(*({"type": "notify", "message": f"m{i}"} for i in range(5)))
    table = make_table(tocsin, trg)
    make_run(tocsin, table, trg)
    tocsin.work(now=LATER)
    page = tocsin.messages(table["scope_id"], skip=1, limit=2)
    assert [m["text"] for m in page["items"]] == ["m3", "m2"]  # newest first
    assert (page["total"], page["skip"], page["limit"]) == (5, 1, 2)
    with pytest.raises(ValidationError):
        tocsin.messages(table["scope_id"], limit=0)


def test_start_workflow_of_an_unregistered_workflow_fails_the_action(tocsin: Tocsin) -> None:
    """No pretended success: an unknown workflow id fails the run (real starts: tests/workflows)."""
    trg = trigger(
        {"type": "start_workflow", "workflow_id": "daily-report", "input": {"run": "$run.id"}}
    )
    run = make_run(tocsin, make_table(tocsin, trg), trg)
    tocsin.work(now=LATER)
    done = read_run(tocsin, run["id"])
    assert done["status"] == "failed"
    assert (
        done["error"] == "unknown workflow 'daily-report': no workflow with this id is registered"
    )
    assert done["action_results"][0]["ok"] is False


def test_templates_substitute_and_never_evaluate(tocsin: Tocsin) -> None:
    """SPEC §10: a cell that itself looks like a template (or code) is pasted as text, once."""
    cell = "$run.id ${row.Title} {{7*7}} {0.__class__} %(x)s"
    trg = trigger({"type": "notify", "message": "[$row.Title] [${row.__class__}] {{1+1}}"})
    table = make_table(tocsin, trg)
    rid = add_record(tocsin, table["id"], {"Title": cell})
    make_run(tocsin, table, trg, record=(rid, {"Title": cell}))
    tocsin.work(now=LATER)
    (message,) = tocsin.messages(table["scope_id"])["items"]
    assert message["text"] == f"[{cell}] [] {{{{1+1}}}}"
