"""SPEC §10 create/update/delete_record through the facade (row events and validation apply),
and the §4.5 recordless rules for delete_record and invoke_command."""

from __future__ import annotations

import uuid
from typing import Any

from runs.helpers import LATER, NOW
from tocsin import messages
from tocsin.service import Tocsin

COLUMNS = {"Title": "text", "Status": "text", "N": "number"}
INTERVAL = {"type": "interval", "every_seconds": 3600}


def table(t: Tocsin, room: str | None = None, **kw: Any) -> dict[str, Any]:
    return t.create_table("chatroom", room or str(uuid.uuid4()), "Cases", COLUMNS, now=NOW, **kw)


def two_tables(t: Tocsin) -> tuple[dict[str, Any], dict[str, Any]]:
    """Two tables of one scope (one tenant)."""
    room = str(uuid.uuid4())
    return table(t, room), table(t, room)


def on_created(t: Tocsin, table_id: str, *actions: dict[str, Any]) -> None:
    t.set_triggers(table_id, [{"name": "t", "on": "created", "actions": list(actions)}], now=NOW)


def only_run(t: Tocsin, table_id: str) -> dict[str, Any]:
    (run,) = t.list_runs(table_id, now=LATER)["items"]
    return run


def records(t: Tocsin, table_id: str) -> list[dict[str, Any]]:
    return list(t.list_records(table_id)["items"])


def test_create_record_writes_another_table_and_its_row_events_fire(tocsin: Tocsin) -> None:
    source, target = two_tables(tocsin)
    on_created(
        tocsin,
        source["id"],
        {
            "type": "create_record",
            "table_id": target["id"],
            "values": {"Title": "copy of $row.Title", "N": "$row.N"},
        },
    )
    on_created(tocsin, target["id"], {"type": "notify", "message": "new $row.Title"})
    tocsin.insert_records(source["id"], [{"Title": "Leak", "N": 2}], now=NOW)
    assert tocsin.work(now=LATER) == 2  # the copy's own `created` run ran too
    (copy,) = records(tocsin, target["id"])
    assert copy["data"] == {"Title": "copy of Leak", "N": 2}
    run = only_run(tocsin, source["id"])
    assert run["status"] == "done"
    assert (
        run["action_results"][0]["detail"] == f"created record {copy['id']} in table {target['id']}"
    )
    texts = [m["text"] for m in tocsin.messages(target["scope_id"])["items"]]
    assert texts == ["new copy of Leak"]


def test_update_record_row_target_merges_values(tocsin: Tocsin) -> None:
    tbl = table(tocsin)
    on_created(
        tocsin,
        tbl["id"],
        {"type": "update_record", "record": "$row", "values": {"Status": "Seen by $trigger.id"}},
    )
    (rid,) = tocsin.insert_records(tbl["id"], [{"Title": "Leak"}], now=NOW)
    tocsin.work(now=LATER)
    data = tocsin.get_record(tbl["id"], rid)["data"]
    trigger_id = tocsin.get_triggers(tbl["id"])[0]["id"]
    assert data == {"Title": "Leak", "Status": f"Seen by {trigger_id}"}


def test_update_record_by_templated_id_on_another_table(tocsin: Tocsin) -> None:
    source, target = two_tables(tocsin)
    (tid,) = tocsin.insert_records(target["id"], [{"Title": "T"}], now=NOW)
    on_created(
        tocsin,
        source["id"],
        {
            "type": "update_record",
            "table_id": target["id"],
            "record": "$row.Title",
            "values": {"Status": "done"},
        },
    )
    tocsin.insert_records(source["id"], [{"Title": tid}], now=NOW)
    tocsin.work(now=LATER)
    assert tocsin.get_record(target["id"], tid)["data"]["Status"] == "done"


def test_delete_record_trashes_the_row(tocsin: Tocsin) -> None:
    tbl = table(tocsin)
    on_created(tocsin, tbl["id"], {"type": "delete_record", "record": "$row"})
    tocsin.insert_records(tbl["id"], [{"Title": "spam"}], now=NOW)
    tocsin.work(now=LATER)
    assert only_run(tocsin, tbl["id"])["status"] == "done"
    assert records(tocsin, tbl["id"]) == []


def test_write_validation_errors_fail_the_run(tocsin: Tocsin) -> None:
    tbl = table(tocsin)
    on_created(
        tocsin,
        tbl["id"],
        {"type": "update_record", "record": "$row", "values": {"N": "not a number"}},
    )
    tocsin.insert_records(tbl["id"], [{"Title": "x"}], now=NOW)
    tocsin.work(now=LATER)
    run = only_run(tocsin, tbl["id"])
    assert run["status"] == "failed" and "N" in run["error"]


def test_missing_target_table_fails_the_run(tocsin: Tocsin) -> None:
    tbl = table(tocsin)
    gone = str(uuid.uuid4())
    on_created(tocsin, tbl["id"], {"type": "create_record", "table_id": gone, "values": {}})
    tocsin.insert_records(tbl["id"], [{"Title": "x"}], now=NOW)
    tocsin.work(now=LATER)
    assert (
        only_run(tocsin, tbl["id"])["error"]
        == f"target table '{gone}' does not exist or is trashed"
    )


def test_tables_of_another_scope_are_out_of_reach(tocsin: Tocsin) -> None:
    """Another scope is another tenant: its tables are reported like missing ones and nothing
    there is written, read or staged, whatever the action."""
    mine, theirs = table(tocsin), table(tocsin)
    gated = table(tocsin, requires_approval=True)
    (their_rid,) = tocsin.insert_records(theirs["id"], [{"Title": "theirs"}], now=NOW)
    attempts = [
        {"type": "create_record", "table_id": theirs["id"], "values": {"Title": "x"}},
        {"type": "update_record", "table_id": theirs["id"], "record": their_rid, "values": {}},
        {"type": "delete_record", "table_id": theirs["id"], "record": their_rid},
        {"type": "create_record", "table_id": gated["id"], "values": {"Title": "x"}},
    ]
    for action in attempts:
        on_created(tocsin, mine["id"], action)
        tocsin.insert_records(mine["id"], [{"Title": "go"}], now=NOW)
        tocsin.work(now=LATER)
    runs = tocsin.list_runs(mine["id"], now=LATER)["items"]
    assert sorted(r["error"] for r in runs) == sorted(
        f"target table '{tid}' does not exist or is trashed"
        for tid in (theirs["id"], theirs["id"], theirs["id"], gated["id"])
    )
    assert [r["data"] for r in records(tocsin, theirs["id"])] == [{"Title": "theirs"}]
    assert tocsin.list_staged_changes(gated["id"])["total"] == 0


def schedule_run(t: Tocsin, *actions: dict[str, Any]) -> dict[str, Any]:
    tbl = table(t)
    t.set_triggers(
        tbl["id"], [{"on": "schedule", "schedule": INTERVAL, "actions": list(actions)}], now=NOW
    )
    assert t.tick(now=LATER)["runs_created"] == 1
    t.work(now=LATER)
    return only_run(t, tbl["id"])


def test_recordless_delete_record_fails_with_the_spec_text(tocsin: Tocsin) -> None:
    run = schedule_run(tocsin, {"type": "delete_record", "record": "$row"})
    assert run["status"] == "failed"
    assert run["error"] == (
        "delete_record requires record context — "
        "interval/daily schedule triggers fire with no record"
    )


def test_recordless_update_record_fails_too(tocsin: Tocsin) -> None:
    run = schedule_run(tocsin, {"type": "update_record", "record": "$row", "values": {}})
    assert run["error"] == messages.UPDATE_RECORD_NEEDS_ROW


def test_recordless_invoke_command_row_input_fails_with_the_spec_text(tocsin: Tocsin) -> None:
    calls: list[Any] = []
    tocsin.register_command("ping", calls.append)
    run = schedule_run(
        tocsin,
        {
            "type": "invoke_command",
            "command": "ping",
            "inputs": {"ok": "$run.id", "who": "$row.Title"},
        },
    )
    assert run["status"] == "failed"
    assert run["error"] == (
        "invoke_command input 'who': \"$row\" tokens require record context — "
        "interval/daily schedule triggers fire with no record"
    )
    assert calls == []


def test_recordless_create_record_renders_row_tokens_empty(tocsin: Tocsin) -> None:
    run = schedule_run(tocsin, {"type": "create_record", "values": {"Title": "[$row.Title]"}})
    assert run["status"] == "done"
    (created,) = records(tocsin, run["table_id"])
    assert created["data"] == {"Title": "[]"}
    assert created["created_at"] == LATER
