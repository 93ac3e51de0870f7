"""``Tocsin.export`` / ``plan`` / ``apply`` and adoption on ``set_triggers`` (SPEC §5, §11).

Every test runs on SQLite and PostgreSQL (the conftest ``tocsin`` fixture). Time is explicit.
"""

from __future__ import annotations

import copy
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from tocsin import iac, messages
from tocsin.errors import ValidationError
from tocsin.service import Tocsin
from tocsin.store import state as store_state

NOW = datetime(2026, 8, 27, 5, 2, 13, tzinfo=UTC)
COLUMNS = {"Due": "datetime", "Status": "text"}


def later(minutes: int) -> datetime:
    return NOW + timedelta(minutes=minutes)


def reminder(**schedule: Any) -> dict[str, Any]:
    return {
        "name": "remind",
        "on": "schedule",
        "schedule": {"type": "date_column_reached", "column": "Due", **schedule},
        "when": [{"column": "Status", "op": "neq", "value": "Done"}],
        "actions": [{"type": "notify", "message": "due: {{ $row.Status }}"}],
    }


def hourly(**schedule: Any) -> dict[str, Any]:
    return {
        "name": "hourly",
        "on": "schedule",
        "schedule": {"type": "cron", "expression": "0 * * * *", **schedule},
        "actions": [{"type": "notify", "message": "tick"}],
    }


def every_hour() -> dict[str, Any]:
    return {
        "name": "every hour",
        "on": "schedule",
        "schedule": {"type": "interval", "every_seconds": 3600},
        "actions": [{"type": "notify", "message": "tick"}],
    }


def on_created() -> dict[str, Any]:
    return {"name": "new", "on": "created", "actions": [{"type": "notify", "message": "new"}]}


class Scope:
    """One chatroom scope of the facade under test."""

    def __init__(self, tocsin: Tocsin) -> None:
        self.t = tocsin
        self.id = str(uuid.uuid4())

    def table(self, name: str, triggers: list[dict[str, Any]] | None = None) -> str:
        table = self.t.create_table("chatroom", self.id, name, COLUMNS, now=NOW)
        if triggers is not None:
            self.t.set_triggers(table["id"], triggers, now=NOW)
        return str(table["id"])

    def export(self, tables: list[str] | None = None) -> list[dict[str, Any]]:
        return self.t.export("chatroom", self.id, tables=tables)

    def plan(self, documents: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return self.t.plan("chatroom", self.id, documents)

    def apply(self, documents: list[dict[str, Any]], now: datetime = NOW) -> list[dict[str, Any]]:
        return self.t.apply("chatroom", self.id, documents, now=now)


@pytest.fixture
def scope(tocsin: Tocsin) -> Scope:
    return Scope(tocsin)


def actions(plan: list[dict[str, Any]]) -> list[tuple[str, str | None]]:
    return [(e["action"], e["trigger_id"]) for e in plan]


def without_ids(document: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in copy.deepcopy(document).items() if k != "id"}
    for action in out.get("actions", []):
        action.pop("id", None)
    return out


def test_export_is_normalized_byte_stable_and_plans_as_noop(scope: Scope) -> None:
    scope.table("Cases", [reminder(offset_minutes=0), hourly(timezone="UTC"), on_created()])
    scope.table("Empty")
    first = scope.export()
    assert [d["table"] for d in first] == ["Cases"] * 3
    assert first[0]["schedule"] == {"type": "date_column_reached", "column": "Due"}
    assert first[1]["schedule"] == {"type": "cron", "expression": "0 * * * *"}
    assert iac.dumps(scope.export()) == iac.dumps(first)
    assert iac.loads(iac.dumps(first)) == first
    assert {e["action"] for e in scope.plan(first)} == {"noop"}


def test_explicit_defaults_plan_as_noop(scope: Scope) -> None:
    scope.table("Cases", [reminder(), hourly()])
    documents = scope.export()
    documents[0]["schedule"]["offset_minutes"] = 0
    documents[1]["schedule"]["timezone"] = "UTC"
    documents[1]["when"] = None
    assert {e["action"] for e in scope.plan(documents)} == {"noop"}
    assert {e["action"] for e in scope.plan([without_ids(d) for d in documents])} == {"noop"}


def test_a_document_without_id_equal_to_a_stored_trigger_is_adopted(
    scope: Scope, tocsin: Tocsin
) -> None:
    table_id = scope.table("Cases", [reminder(offset_minutes=-60)])
    [stored] = tocsin.get_triggers(table_id)
    tocsin.insert_record(table_id, {"Due": "2026-08-27T01:00", "Status": "Open"}, now=NOW)
    assert tocsin.tick(now=NOW)["runs_created"] == 1
    document = {"table": "Cases", **reminder(offset_minutes=-60)}
    [entry] = scope.plan([document])
    assert entry == {
        "table": "Cases",
        "trigger_id": stored["id"],
        "name": "remind",
        "action": "noop",
        "changes": [],
        "adopted": True,
    }
    assert scope.apply([document], now=later(1)) == [entry]
    assert tocsin.get_triggers(table_id) == [stored]
    assert tocsin.tick(now=later(2))["runs_created"] == 0  # same id, same ledger


def test_a_boolean_offset_is_not_normalized_away_and_fails_at_apply(
    scope: Scope, tocsin: Tocsin
) -> None:
    table_id = scope.table("Cases", [reminder()])
    [document] = scope.export()
    document["schedule"]["offset_minutes"] = False
    [entry] = scope.plan([document])
    assert entry["action"] == "invalid"  # what apply refuses, plan says
    assert entry["detail"] == messages.iac_trigger_refused(
        "Cases", f"'{document['id']}'", messages.OFFSET_MINUTES_INVALID
    )
    assert entry["changes"] == [{"path": "schedule.offset_minutes", "after": False}]
    before = tocsin.get_triggers(table_id)
    with pytest.raises(ValidationError) as caught:
        scope.apply([document])
    assert caught.value.status == 400
    assert caught.value.detail == messages.OFFSET_MINUTES_INVALID
    assert caught.value.detail == (
        "date_column_reached offset_minutes must be an integer in [-43200, 43200] "
        "(negative = before the column instant, positive = after)"
    )
    assert tocsin.get_triggers(table_id) == before


def test_a_kind_change_under_one_id_fails_at_apply(scope: Scope, tocsin: Tocsin) -> None:
    table_id = scope.table("Cases", [reminder()])
    [document] = scope.export()
    trigger_id = document["id"]
    document["schedule"] = {"type": "interval", "every_seconds": 3600}
    [entry] = scope.plan([document])
    assert (entry["action"], entry["trigger_id"]) == ("invalid", trigger_id)
    before = tocsin.get_triggers(table_id)
    with pytest.raises(ValidationError) as caught:
        scope.apply([document])
    assert caught.value.detail == (
        f"schedule_kind_change_requires_new_trigger_id: trigger '{trigger_id}' changes its "
        "schedule type in place. retire the old trigger id and create the new schedule kind "
        "under a new trigger id"
    )
    assert entry["detail"] == f"table 'Cases', trigger '{trigger_id}': {caught.value.detail}"
    assert tocsin.get_triggers(table_id) == before


def test_delete_the_line_and_write_the_new_kind_without_id(scope: Scope, tocsin: Tocsin) -> None:
    table_id = scope.table("Cases", [reminder()])
    [old] = scope.export()
    new = {"table": "Cases", "name": "remind", "on": "schedule"}
    new |= {"schedule": {"type": "interval", "every_seconds": 3600}, "actions": old["actions"]}
    plan = scope.plan([new])
    assert actions(plan) == [("create", None), ("delete", old["id"])]
    done = scope.apply([new])
    assert [e["action"] for e in done] == ["create", "delete"]
    [saved] = tocsin.get_triggers(table_id)
    assert saved["id"] == done[0]["trigger_id"] != old["id"]
    assert saved["schedule"] == {"type": "interval", "every_seconds": 3600}
    with tocsin.store.read() as tx:
        states = store_state.get_states(tx, table_id=table_id)
    assert states[old["id"]].retired and not states[saved["id"]].retired
    assert {e["action"] for e in scope.plan([new])} == {"noop"}


def test_triggers_of_a_named_table_absent_from_the_documents_plan_as_delete(
    scope: Scope, tocsin: Tocsin
) -> None:
    table_id = scope.table("Cases", [reminder(), hourly(), on_created()])
    kept, gone, also_gone = scope.export()
    assert actions(scope.plan([kept])) == [
        ("noop", kept["id"]),
        ("delete", gone["id"]),
        ("delete", also_gone["id"]),
    ]
    scope.apply([kept])
    assert [t["id"] for t in tocsin.get_triggers(table_id)] == [kept["id"]]
    # a line naming only the table manages it with no triggers at all
    assert actions(scope.plan([{"table": "Cases"}])) == [("delete", kept["id"])]
    scope.apply([{"table": "Cases"}])
    assert tocsin.get_triggers(table_id) == []


def test_tables_the_documents_do_not_name_are_untouched(scope: Scope, tocsin: Tocsin) -> None:
    cases = scope.table("Cases", [reminder()])
    other = scope.table("Other", [hourly(), on_created()])
    stranger = Scope(tocsin)
    foreign = stranger.table("Cases", [hourly()])
    before_other, before_foreign = tocsin.get_triggers(other), tocsin.get_triggers(foreign)
    document = {"table": "Cases", **hourly()}
    assert {e["table"] for e in scope.plan([document])} == {"Cases"}
    scope.apply([document])
    assert [t["name"] for t in tocsin.get_triggers(cases)] == ["hourly"]
    assert tocsin.get_triggers(other) == before_other
    assert tocsin.get_triggers(foreign) == before_foreign


def test_an_unknown_or_ambiguous_table_name_is_a_clear_400(scope: Scope, tocsin: Tocsin) -> None:
    scope.table("Cases", [reminder()])
    with pytest.raises(ValidationError) as caught:
        scope.plan([{"table": "Nope", **hourly()}])
    assert caught.value.detail == messages.iac_table_unknown("Nope", "chatroom", scope.id)
    trashed = scope.table("Gone", [hourly()])
    tocsin.trash_table(trashed, now=NOW)
    with pytest.raises(ValidationError) as caught:
        scope.apply([{"table": "Gone", **hourly()}])
    assert caught.value.detail == messages.iac_table_unknown("Gone", "chatroom", scope.id)
    scope.table("Cases")
    with pytest.raises(ValidationError) as caught:
        scope.plan([{"table": "Cases", **hourly()}])
    assert caught.value.detail == messages.iac_table_ambiguous("Cases", 2)
    with pytest.raises(ValidationError) as caught:
        scope.plan([{"name": "no table", **hourly()}])
    assert caught.value.detail.startswith("document 1: ")


def test_apply_checks_every_table_before_writing_any(scope: Scope, tocsin: Tocsin) -> None:
    first = scope.table("A", [reminder()])
    second = scope.table("B", [reminder()])
    before = tocsin.get_triggers(first), tocsin.get_triggers(second)
    bad = {"table": "B", **reminder(offset_minutes=True)}
    with pytest.raises(ValidationError) as caught:
        scope.apply([{"table": "A", **hourly()}, bad])
    assert caught.value.detail == messages.OFFSET_MINUTES_INVALID
    assert (tocsin.get_triggers(first), tocsin.get_triggers(second)) == before


def test_a_trigger_deleted_by_apply_and_added_again_revives_its_ledger(
    scope: Scope, tocsin: Tocsin
) -> None:
    table_id = scope.table("Cases", [reminder()])
    tocsin.insert_record(table_id, {"Due": "2026-08-27T01:00", "Status": "Open"}, now=NOW)
    assert tocsin.tick(now=NOW)["runs_created"] == 1
    [document] = scope.export()
    scope.apply([{"table": "Cases", **hourly()}], now=later(1))
    with tocsin.store.read() as tx:
        state = store_state.get_state(tx, table_id=table_id, trigger_id=document["id"])
        assert state is not None and state.retired
    scope.apply([document], now=later(2))
    with tocsin.store.read() as tx:
        state = store_state.get_state(tx, table_id=table_id, trigger_id=document["id"])
        assert state is not None and not state.retired
    assert tocsin.tick(now=later(3))["runs_created"] == 0  # its value stays consumed


def test_one_id_in_two_tables_documents_is_one_trigger_each(scope: Scope, tocsin: Tocsin) -> None:
    """A trigger id is unique within its table only: two tables' lines may carry the same id."""
    first, second = scope.table("A"), scope.table("B")
    twice = [{"table": "A", "id": "trg_x", **hourly()}, {"table": "B", "id": "trg_x", **hourly()}]
    assert actions(scope.plan(twice)) == [("create", "trg_x"), ("create", "trg_x")]
    scope.apply(twice)
    assert [t["id"] for t in tocsin.get_triggers(first)] == ["trg_x"]
    assert [t["id"] for t in tocsin.get_triggers(second)] == ["trg_x"]


def test_re_put_without_ids_keeps_the_ids_and_fires_nothing_again(tocsin: Tocsin) -> None:
    """Re-sending an unchanged config without ids used to retire every trigger and
    fire every already-fired record again under new ids."""
    table_id = Scope(tocsin).table("Cases")
    tocsin.insert_record(table_id, {"Due": "2026-08-27T01:00", "Status": "Open"}, now=NOW)
    config = tocsin.set_triggers(table_id, [reminder(), every_hour()], now=NOW)
    assert tocsin.tick(now=NOW)["runs_created"] == 2
    runs = tocsin.list_runs(table_id, now=NOW)["total"]
    again = tocsin.set_triggers(table_id, [reminder(offset_minutes=0), every_hour()], now=later(1))
    assert again == config  # the same trigger and action ids
    assert tocsin.tick(now=later(2))["runs_created"] == 0
    assert tocsin.list_runs(table_id, now=later(2))["total"] == runs
    with tocsin.store.read() as tx:
        states = store_state.get_states(tx, table_id=table_id)
    assert sorted(states) == sorted(t["id"] for t in config)
    assert not any(s.retired for s in states.values())


def test_put_adopts_action_ids_under_a_kept_trigger_id(tocsin: Tocsin) -> None:
    table_id = Scope(tocsin).table("Cases")
    [saved] = tocsin.set_triggers(table_id, [hourly()], now=NOW)
    resent = {**saved, "actions": [{"type": "notify", "message": "tick"}]}
    resent["actions"].append({"type": "notify", "message": "second"})
    [again] = tocsin.set_triggers(table_id, [resent], now=later(1))
    assert again["actions"][0] == saved["actions"][0]
    assert again["actions"][1]["id"] != saved["actions"][0]["id"]


def test_a_changed_trigger_without_id_is_not_adopted(tocsin: Tocsin) -> None:
    table_id = Scope(tocsin).table("Cases")
    [saved] = tocsin.set_triggers(table_id, [hourly()], now=NOW)
    [other] = tocsin.set_triggers(table_id, [hourly(expression="5 * * * *")], now=later(1))
    assert other["id"] != saved["id"]


def test_export_of_named_tables_only(scope: Scope) -> None:
    scope.table("A", [reminder()])
    scope.table("B", [hourly()])
    assert [d["table"] for d in scope.export(["B"])] == ["B"]
    assert [d["table"] for d in scope.t.export("chatroom", scope.id, tables="A")] == ["A"]
    assert [d["table"] for d in scope.export(["B", "A"])] == ["B", "A"]
    with pytest.raises(ValidationError) as caught:
        scope.export(["C"])
    assert caught.value.detail == messages.iac_table_unknown("C", "chatroom", scope.id)


def test_moving_an_id_to_another_table_moves_the_trigger(scope: Scope, tocsin: Tocsin) -> None:
    """The id leaves A (its state retired there) and is created in B under the same id."""
    first = scope.table("A", [every_hour()])
    second = scope.table("B")
    [document] = scope.export()
    moved = [{"table": "A"}, {**document, "table": "B"}]
    assert actions(scope.plan(moved)) == [("delete", document["id"]), ("create", document["id"])]
    scope.apply(moved)
    assert tocsin.get_triggers(first) == []
    assert [t["id"] for t in tocsin.get_triggers(second)] == [document["id"]]
