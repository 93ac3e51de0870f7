"""Tenant isolation and size limits through the facade: no tenant reaches another's chatroom, and no
tenant can make tocsin store or build without bound (sizes, counts, rendered values)."""

from __future__ import annotations

import uuid
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from tocsin import messages
from tocsin.errors import ValidationError
from tocsin.service import Tocsin
from tocsin.store.records import set_table_triggers

NOW = datetime(2026, 8, 27, 5, 2, 13, tzinfo=UTC)
LATER = NOW + timedelta(seconds=30)


def chatroom_table(t: Tocsin, columns: dict[str, str] | None = None) -> dict[str, Any]:
    return t.create_table("chatroom", str(uuid.uuid4()), "Cases", columns or {"T": "text"}, now=NOW)


def on_created(*actions: dict[str, Any], trigger_id: str = "trg_notify") -> dict[str, Any]:
    return {"id": trigger_id, "on": "created", "actions": list(actions)}


def all_messages(t: Tocsin, *rooms: str) -> list[dict[str, Any]]:
    return [m for room in rooms for m in t.messages(room)["items"]]


# --- item 3: notify reaches only the table's own chatroom ------------------------------------


def test_a_notify_into_another_chatroom_is_refused_at_save(tocsin: Tocsin) -> None:
    table, victim = chatroom_table(tocsin), str(uuid.uuid4())
    config = [on_created({"type": "notify", "chatroom_id": victim, "message": "spam"})]
    with pytest.raises(ValidationError) as err:
        tocsin.set_triggers(table["id"], config, now=NOW)
    assert err.value.status == 400
    assert err.value.detail == messages.notify_other_chatroom(victim)
    assert tocsin.get_triggers(table["id"]) == []


def test_a_notify_to_the_tables_own_chatroom_is_saved_and_posts(tocsin: Tocsin) -> None:
    table = chatroom_table(tocsin)
    room = table["scope_id"]
    config = [
        on_created(
            {"type": "notify", "chatroom_id": room, "message": "a $row.T"},
            {"type": "notify", "message": "b $row.T"},
        )
    ]
    tocsin.set_triggers(table["id"], config, now=NOW)
    tocsin.insert_record(table["id"], {"T": "x"}, now=NOW)
    assert tocsin.work(now=LATER) == 1
    assert [m["text"] for m in tocsin.messages(room)["items"]] == ["b x", "a x"]  # newest first


@pytest.mark.parametrize("scope", ["workspace", "user"])
@pytest.mark.parametrize("chatroom_id", [None, "11111111-1111-4111-8111-111111111111"])
def test_a_table_outside_a_chatroom_scope_has_no_notify_target(
    tocsin: Tocsin, scope: str, chatroom_id: str | None
) -> None:
    table = tocsin.create_table(scope, str(uuid.uuid4()), "Cases", {"T": "text"}, now=NOW)
    action = {"type": "notify", "message": "m"}
    if chatroom_id is not None:
        action["chatroom_id"] = chatroom_id
    with pytest.raises(ValidationError) as err:
        tocsin.set_triggers(table["id"], [on_created(action)], now=NOW)
    assert err.value.detail == messages.notify_outside_chatroom(scope)


def test_a_stored_notify_into_another_chatroom_fails_at_run_time(tocsin: Tocsin) -> None:
    """A config saved before the rule (written straight into the store) posts nothing."""
    table, victim = chatroom_table(tocsin), str(uuid.uuid4())
    stored = on_created({"id": "act_1", "type": "notify", "chatroom_id": victim, "message": "x"})
    with tocsin.store.begin() as tx:
        set_table_triggers(tx, table_id=table["id"], triggers=[stored], now=NOW)
    tocsin.insert_record(table["id"], {"T": "x"}, now=NOW)
    assert tocsin.work(now=LATER) == 1
    (run,) = tocsin.list_runs(table["id"], now=LATER)["items"]
    assert run["status"] == "failed"
    assert run["error"] == messages.notify_other_chatroom(victim)
    assert all_messages(tocsin, victim, table["scope_id"]) == []


# --- item 4: rendered values, records, columns, triggers, actions ------------------------------


def test_a_template_repeating_a_large_cell_fails_its_action_and_writes_nothing(
    tocsin: Tocsin,
) -> None:
    """200 x $row.T over a 1 MB cell (the operator allows 2 MiB records): capped, no message."""
    tocsin.settings = replace(tocsin.settings, max_record_bytes=2 * 1024 * 1024)
    table = chatroom_table(tocsin)
    tocsin.set_triggers(
        table["id"], [on_created({"type": "notify", "message": "$row.T " * 200})], now=NOW
    )
    tocsin.insert_record(table["id"], {"T": "x" * 1_000_000}, now=NOW)
    assert tocsin.work(now=LATER) == 1
    (run,) = tocsin.list_runs(table["id"], now=LATER)["items"]
    assert run["status"] == "failed"
    assert run["error"] == messages.rendered_too_large(64 * 1024)
    assert run["action_results"][0]["ok"] is False
    assert tocsin.messages(table["scope_id"])["items"] == []


def test_the_rendered_cap_is_a_setting(tocsin: Tocsin) -> None:
    tocsin.settings = replace(tocsin.settings, max_rendered_bytes=10)
    table = chatroom_table(tocsin)
    tocsin.set_triggers(table["id"], [on_created({"type": "notify", "message": "$row.T"})], now=NOW)
    tocsin.insert_records(table["id"], [{"T": "x" * 10}, {"T": "x" * 11}], now=NOW)
    assert tocsin.work(now=LATER) == 2
    runs = tocsin.list_runs(table["id"], now=LATER)["items"]
    assert sorted(r["status"] for r in runs) == ["done", "failed"]
    assert [m["text"] for m in tocsin.messages(table["scope_id"])["items"]] == ["x" * 10]


def test_a_10_mb_record_is_refused_before_anything_is_written(tocsin: Tocsin) -> None:
    """With 30 row triggers, each run would have copied the 10 MB snapshot."""
    table = chatroom_table(tocsin)
    notify = {"type": "notify", "message": "$row.id"}
    config = [on_created(notify, trigger_id=f"trg_{i}") for i in range(30)]
    tocsin.set_triggers(table["id"], config, now=NOW)
    big = {"T": "x" * 10_000_000}
    with pytest.raises(ValidationError) as err:
        tocsin.insert_record(table["id"], big, now=NOW)
    assert err.value.detail == messages.record_too_large(10_000_008, 256 * 1024)
    with pytest.raises(ValidationError):
        tocsin.insert_records(table["id"], [{"T": "small"}, big], now=NOW)
    assert tocsin.list_records(table["id"])["total"] == 0
    assert tocsin.list_runs(table["id"], now=NOW)["total"] == 0


def test_an_update_that_grows_a_record_past_the_limit_is_refused(tocsin: Tocsin) -> None:
    table = chatroom_table(tocsin, {"A": "text", "B": "text"})
    updated = {"on": "updated", "actions": [{"type": "notify", "message": "u"}]}
    tocsin.set_triggers(table["id"], [updated], now=NOW)
    half = "x" * 150_000
    record = tocsin.insert_record(table["id"], {"A": half}, now=NOW)
    with pytest.raises(ValidationError) as err:
        tocsin.update_record(table["id"], record["id"], {"B": half}, now=NOW)
    assert err.value.detail.startswith("record data is 300")
    assert tocsin.get_record(table["id"], record["id"])["data"] == {"A": half}
    assert tocsin.list_runs(table["id"], now=NOW)["total"] == 0
    tocsin.update_record(table["id"], record["id"], {"A": None, "B": half}, now=NOW)


def test_a_record_exactly_at_the_limit_is_accepted(tocsin: Tocsin) -> None:
    table = chatroom_table(tocsin)
    at_limit = {"T": "x" * (256 * 1024 - len('{"T":""}'))}
    tocsin.insert_record(table["id"], at_limit, now=NOW)
    with pytest.raises(ValidationError):
        tocsin.insert_record(table["id"], {"T": at_limit["T"] + "x"}, now=NOW)


def test_3000_columns_are_refused_at_table_creation(tocsin: Tocsin) -> None:
    columns = {f"c{i}": "text" for i in range(3000)}
    with pytest.raises(ValidationError) as err:
        tocsin.create_table("chatroom", str(uuid.uuid4()), "Wide", columns, now=NOW)
    assert err.value.detail == messages.too_many_columns(3000, 200)
    tocsin.create_table("chatroom", str(uuid.uuid4()), "Wide", dict(list(columns.items())[:200]))


def test_a_long_column_name_is_refused(tocsin: Tocsin) -> None:
    with pytest.raises(ValidationError) as err:
        tocsin.create_table("chatroom", str(uuid.uuid4()), "T", {"n" * 65: "text"}, now=NOW)
    assert err.value.detail == messages.column_name_too_long("n" * 65, 64)
    tocsin.create_table("chatroom", str(uuid.uuid4()), "T", {"n" * 64: "text"}, now=NOW)


def test_triggers_per_table_and_actions_per_trigger_are_limited(tocsin: Tocsin) -> None:
    table = chatroom_table(tocsin)
    notify = {"type": "notify", "message": "m"}
    too_many = [on_created(notify, trigger_id=f"trg_{i}") for i in range(101)]
    with pytest.raises(ValidationError) as triggers:
        tocsin.set_triggers(table["id"], too_many, now=NOW)
    assert triggers.value.detail == messages.too_many_triggers(101, 100)
    with pytest.raises(ValidationError) as actions:
        tocsin.set_triggers(table["id"], [on_created(*[notify] * 21)], now=NOW)
    assert actions.value.detail == messages.too_many_actions("'trg_notify'", 21, 20)
    assert tocsin.get_triggers(table["id"]) == []
    saved = tocsin.set_triggers(table["id"], [on_created(*([notify] * 20)), *too_many[:99]])
    assert len(saved) == 100
