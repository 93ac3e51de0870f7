"""Schedule and manual runs name their frozen definition by hash (SPEC §8, §9.3).

Saving a triggers config stores each schedule trigger's definition once in
``trigger_definitions`` and points its state row at it; the tick (and "run now") writes that
hash into the run instead of a copy of the JSON. Read through the facade, the run's
``definition`` is the trigger as it was when the run was created, whatever the config says now.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from engine_support import NOW
from sqlalchemy import func, select

from tocsin.core.schedules.identity import definition_digest
from tocsin.service import Tocsin
from tocsin.store.schema import runs, trigger_definitions, trigger_state

SCOPE = "0b6f8f6e-7d0c-4f44-9a57-0d8c1f6a2b11"


def _trigger(message: str) -> dict[str, Any]:
    return {
        "id": "nightly",
        "on": "schedule",
        "schedule": {"type": "interval", "every_seconds": 60},
        "actions": [{"id": "act_1", "type": "notify", "message": message}],
    }


def _stored(t: Tocsin, run_id: str) -> tuple[Any, Any]:
    with t.store.engine.connect() as conn:
        row = conn.execute(
            select(runs.c.definition, runs.c.definition_hash).where(runs.c.id == run_id)
        ).one()
    return row[0], row[1]


def _definitions(t: Tocsin) -> int:
    with t.store.engine.connect() as conn:
        return int(conn.execute(select(func.count()).select_from(trigger_definitions)).scalar())


def test_tick_run_names_its_definition_and_reads_the_trigger_as_it_fired(tocsin: Tocsin) -> None:
    table = tocsin.create_table("chatroom", SCOPE, "Jobs", {"Due": "datetime"}, now=NOW)
    [v1] = tocsin.set_triggers(table["id"], [_trigger("v1")], now=NOW)
    with tocsin.store.engine.connect() as conn:
        state_hash = conn.execute(select(trigger_state.c.definition_hash)).scalar_one()
    assert state_hash == definition_digest(v1)

    assert tocsin.tick(now=NOW + timedelta(seconds=60))["runs_created"] == 1
    [first] = tocsin.list_runs(table["id"])["items"]
    assert first["definition"] == v1
    assert _stored(tocsin, first["id"]) == (None, state_hash)  # no copy: the hash only

    assert tocsin.work(now=NOW + timedelta(seconds=61)) == 1
    [v2] = tocsin.set_triggers(table["id"], [_trigger("v2")], now=NOW + timedelta(seconds=62))
    assert tocsin.tick(now=NOW + timedelta(seconds=120))["runs_created"] == 1
    newest, older = tocsin.list_runs(table["id"])["items"]
    assert older["id"] == first["id"] and older["definition"] == v1  # frozen: the old text
    assert newest["definition"] == v2
    assert _stored(tocsin, newest["id"]) == (None, definition_digest(v2))
    tocsin.work(now=NOW + timedelta(seconds=121))
    texts = [m["text"] for m in tocsin.messages(table["scope_id"])["items"]]
    assert sorted(texts) == ["v1", "v2"]


def test_manual_run_names_its_definition_too(tocsin: Tocsin) -> None:
    table = tocsin.create_table("chatroom", SCOPE, "Jobs", {"Due": "datetime"}, now=NOW)
    [v1] = tocsin.set_triggers(table["id"], [_trigger("v1")], now=NOW)
    run = tocsin.run_trigger(table["id"], "nightly", now=NOW)
    assert run["definition"] == v1
    assert _stored(tocsin, run["id"]) == (None, definition_digest(v1))
    tocsin.set_triggers(table["id"], [], now=NOW)  # the trigger deleted: the run keeps it
    assert tocsin.get_run(table["id"], run["id"])["definition"] == v1


def test_an_unchanged_definition_is_stored_once(tocsin: Tocsin) -> None:
    table = tocsin.create_table("chatroom", SCOPE, "Jobs", {"Due": "datetime"}, now=NOW)
    tocsin.set_triggers(table["id"], [_trigger("v1")], now=NOW)
    tocsin.set_triggers(table["id"], [_trigger("v1")], now=NOW + timedelta(seconds=1))
    assert _definitions(tocsin) == 1
    tocsin.set_triggers(table["id"], [_trigger("v2")], now=NOW + timedelta(seconds=2))
    assert _definitions(tocsin) == 2  # the old one stays: runs may name it
