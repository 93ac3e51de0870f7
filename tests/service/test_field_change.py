"""Field-change conditions on row-event triggers (SPEC §13), through the facade on
SQLite and PostgreSQL: ``changed`` fires only when a listed column's value actually changed;
``{"column", "was"}`` tests the value before the update; both validated with exact texts."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

import pytest

from tocsin.errors import ConfigError
from tocsin.service import Tocsin

NOW = datetime(2026, 8, 27, 5, 2, 13, tzinfo=UTC)
COLUMNS = {"Status": "text", "N": "number", "Note": "text"}


def setup(t: Tocsin, trigger: dict[str, Any]) -> tuple[str, str]:
    table = str(t.create_table("chatroom", str(uuid.uuid4()), "Cases", COLUMNS, now=NOW)["id"])
    actions = [{"type": "notify", "message": "changed"}]
    t.set_triggers(table, [{**trigger, "actions": actions}], now=NOW)
    record = t.insert_record(table, {"Status": "Open", "N": 1, "Note": "a"}, now=NOW)
    return table, str(record["id"])


def runs(t: Tocsin, table: str) -> int:
    return int(t.list_runs(table, limit=500, now=NOW)["total"])


def test_changed_fires_only_when_a_listed_value_changed(tocsin: Tocsin) -> None:
    table, rid = setup(tocsin, {"on": "updated", "changed": ["Status", "N"]})
    tocsin.update_record(table, rid, {}, now=NOW)  # empty patch
    tocsin.update_record(table, rid, {"Status": "Open"}, now=NOW)  # same value
    tocsin.update_record(table, rid, {"N": 1.0}, now=NOW)  # numerically the same
    tocsin.update_record(table, rid, {"Note": "b"}, now=NOW)  # a column not listed
    assert runs(tocsin, table) == 0
    tocsin.update_record(table, rid, {"Status": "Closed"}, now=NOW)
    assert runs(tocsin, table) == 1
    tocsin.update_record(table, rid, {"N": 2, "Note": "c"}, now=NOW)
    assert runs(tocsin, table) == 2


def test_was_tests_the_previous_value(tocsin: Tocsin) -> None:
    trigger = {
        "on": "updated",
        "when": [
            {"column": "Status", "was": "Open"},
            {"column": "Status", "op": "eq", "value": "Closed"},
        ],
    }
    table, rid = setup(tocsin, trigger)
    tocsin.update_record(table, rid, {"Status": "Pending"}, now=NOW)  # Open → Pending
    assert runs(tocsin, table) == 0
    tocsin.update_record(table, rid, {"Status": "Closed"}, now=NOW)  # Pending → Closed
    assert runs(tocsin, table) == 0
    tocsin.update_record(table, rid, {"Status": "Open"}, now=NOW)
    tocsin.update_record(table, rid, {"Status": "Closed"}, now=NOW)  # Open → Closed
    assert runs(tocsin, table) == 1
    stored = tocsin.get_triggers(table)[0]
    assert stored["when"][0] == {"column": "Status", "was": "Open"}


def test_without_changed_an_update_still_fires(tocsin: Tocsin) -> None:
    table, rid = setup(tocsin, {"on": "updated"})
    tocsin.update_record(table, rid, {}, now=NOW)
    assert runs(tocsin, table) == 1


@pytest.mark.parametrize(
    ("trigger", "code", "text"),
    [
        (
            {"on": "created", "changed": ["Status"]},
            "changed_invalid",
            "changed is only allowed with on: 'updated'",
        ),
        (
            {"on": "updated", "changed": []},
            "changed_invalid",
            "changed must be a non-empty list of column names",
        ),
        (
            {"on": "updated", "changed": "Status"},
            "changed_invalid",
            "changed must be a non-empty list of column names",
        ),
        (
            {"on": "updated", "changed": ["Nope"]},
            "changed_column_missing",
            "changed column 'Nope' does not exist on this table",
        ),
        (
            {"on": "updated", "changed": ["N", "N"]},
            "changed_invalid",
            "changed lists a column more than once",
        ),
        (
            {"on": "created", "when": [{"column": "Status", "was": "Open"}]},
            "when_predicate_invalid",
            "when predicate invalid: 'was' tests the value before an update: "
            "only on: 'updated' triggers",
        ),
        (
            {"on": "updated", "when": [{"column": "Status", "was": "Open", "op": "eq"}]},
            "when_predicate_invalid",
            "when predicate invalid: a 'was' predicate takes only column and was, not op",
        ),
        (
            {"on": "updated", "when": [{"column": "Status", "was": ["Open"]}]},
            "when_predicate_invalid",
            "when predicate invalid: 'was' needs a scalar value (string, number, boolean or null)",
        ),
        (
            {"on": "updated", "when": [{"column": "Nope", "was": "Open"}]},
            "when_column_missing",
            "when predicate column 'Nope' does not exist on this table",
        ),
    ],
)
def test_bad_conditions_are_refused_with_exact_texts(
    tocsin: Tocsin, trigger: dict[str, Any], code: str, text: str
) -> None:
    table = str(tocsin.create_table("chatroom", str(uuid.uuid4()), "C", COLUMNS, now=NOW)["id"])
    with pytest.raises(ConfigError) as info:
        tocsin.set_triggers(table, [{**trigger, "actions": []}], now=NOW)
    assert (info.value.code, info.value.detail) == (code, text)
    assert tocsin.get_triggers(table) == []
