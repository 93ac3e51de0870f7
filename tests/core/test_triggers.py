"""Triggers config validation (SPEC §3–§5.2) and stored-trigger classification (§7)."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tocsin import messages
from tocsin.core.config.triggers import (
    ACTION_TYPES,
    classify_stored,
    classify_stored_config,
    is_schedule_trigger,
    normalize_trigger,
    stored_schedule_type,
    validate_triggers,
)
from tocsin.core.time import cron
from tocsin.errors import ConfigError

COLUMNS = {"Due": "datetime", "Status": "text", "Name": "text"}
needs_cron = pytest.mark.skipif(
    not hasattr(cron, "parse"), reason="tocsin.core.time.cron not landed"
)

CRON_WHEN_TEXT = "cron_when_not_allowed: cron schedules are recordless and take no when predicates"
CRON_ROW_TEXT = "cron schedules are recordless — '$row' tokens and row-targeted actions are invalid"


def kind_change_text(trigger_id: str) -> str:
    return (
        f"schedule_kind_change_requires_new_trigger_id: trigger '{trigger_id}' changes its "
        "schedule type in place. retire the old trigger id and create the new schedule kind "
        "under a new trigger id"
    )


def ids() -> Callable[[str], str]:
    counter = itertools.count(1)
    return lambda prefix: f"{prefix}_{next(counter):012x}"


def validate(raw: object, previous: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    return validate_triggers(raw, COLUMNS, new_id=ids(), previous=previous)


def refused(raw: object, code: str, previous: list[dict[str, Any]] | None = None) -> ConfigError:
    with pytest.raises(ConfigError) as info:
        validate(raw, previous)
    assert info.value.code == code
    assert info.value.status == 400
    return info.value


NOTIFY = {"type": "notify", "message": "due: $row.Name"}
WEBHOOK = {"type": "webhook", "url": "https://ops.example/hourly"}


def interval(**extra: Any) -> dict[str, Any]:
    return {"on": "schedule", "schedule": {"type": "interval", "every_seconds": 3600}, **extra}


def test_ids_are_assigned_and_kept() -> None:
    raw = [
        {"name": "remind", "on": "created", "actions": [NOTIFY]},
        {"id": "trg_keep", "on": "updated", "actions": [{"id": "act_keep", **WEBHOOK}]},
    ]
    out = validate(raw)
    assert out == [
        {
            "id": "trg_000000000001",
            "name": "remind",
            "on": "created",
            "actions": [{"id": "act_000000000002", "type": "notify", "message": "due: $row.Name"}],
        },
        {
            "id": "trg_keep",
            "on": "updated",
            "actions": [{"id": "act_keep", "type": "webhook", "url": "https://ops.example/hourly"}],
        },
    ]
    assert validate(out) == out  # GET → PUT is stable


def test_schedule_is_normalized() -> None:
    raw = [
        {
            "on": "schedule",
            "schedule": {"type": "date_column_reached", "column": "Due", "offset_minutes": 0},
            "when": [{"column": "Status", "op": "neq", "value": "Done"}],
            "actions": [NOTIFY],
        },
        {
            "on": "schedule",
            "schedule": {"type": "daily", "at": "01:30", "timezone": "UTC"},
            "actions": [NOTIFY],
        },
    ]
    out = validate(raw)
    assert out[0]["schedule"] == {"type": "date_column_reached", "column": "Due"}
    assert out[0]["when"] == [{"column": "Status", "op": "neq", "value": "Done"}]
    assert out[1]["schedule"] == {"type": "daily", "at": "01:30"}
    assert validate(out) == out


@pytest.mark.parametrize("raw", [None, {}, "[]", 3])
def test_config_must_be_a_list(raw: object) -> None:
    refused(raw, "trigger_invalid")


@pytest.mark.parametrize(
    "trigger",
    [
        "notify",
        {"on": "created", "actions": [NOTIFY], "enabled": True},
        {"on": "inserted", "actions": [NOTIFY]},
        {"actions": [NOTIFY]},
        {"on": "created", "name": 5, "actions": [NOTIFY]},
        {"on": "created", "id": "bad id!", "actions": [NOTIFY]},
        {"on": "created", "id": 7, "actions": [NOTIFY]},
        {"on": "created", "schedule": {"type": "interval", "every_seconds": 60}, "actions": []},
    ],
)
def test_bad_triggers(trigger: object) -> None:
    refused([trigger], "trigger_invalid")


@pytest.mark.parametrize(
    "action",
    [
        "notify",
        {"type": "email", "to": "x"},
        {"type": "notify"},
        {"type": "notify", "message": ""},
        {"type": "notify", "message": "x", "chatroom": "c"},
        {"type": "webhook"},
        {"type": "api_call", "url": "https://x.example"},
        {"type": "api_call", "method": "BREW", "url": "https://x.example"},
        {"type": "api_call", "method": "GET", "url": "https://x.example", "headers": {"a": 1}},
        {"type": "webhook", "url": "https://x.example", "headers": {"X-A": "b\r\nX-Injected: 1"}},
        {"type": "webhook", "url": "https://x.example", "headers": {"X-A": "b\nc"}},
        {"type": "api_call", "url": "https://x.example", "method": "GET", "headers": {"X A": "b"}},
        {"type": "api_call", "url": "https://x.example", "method": "GET", "headers": {"": "b"}},
        {"type": "create_record", "values": ["a"]},
        {"type": "update_record", "values": {}},
        {"type": "delete_record"},
        {"type": "invoke_command", "command": "x", "inputs": "a"},
        {"type": "start_workflow"},
        {"type": "notify", "message": "x", "id": "no spaces allowed"},
    ],
)
def test_bad_actions(action: object) -> None:
    refused([{"on": "created", "actions": [action]}], "action_invalid")


def test_actions_must_be_a_list() -> None:
    refused([{"on": "created"}], "action_invalid")
    refused([{"on": "created", "actions": NOTIFY}], "action_invalid")


def test_every_action_type_validates() -> None:
    actions: list[dict[str, Any]] = [
        {"type": "notify", "message": "m", "chatroom_id": "c1"},
        {"type": "webhook", "url": "https://x.example", "payload": {"a": 1}},
        {
            "type": "api_call",
            "method": "post",
            "url": "https://x.example",
            "headers": {"A": "b"},
            "body": [1],
        },
        {"type": "create_record", "values": {"Name": "x"}, "table_id": "t2"},
        {"type": "update_record", "record": "$row", "values": {"Status": "Done"}},
        {"type": "delete_record", "record": "rec-1"},
        {"type": "invoke_command", "command": "sync", "inputs": {"n": "$row.Name"}},
        {"type": "start_workflow", "workflow_id": "daily-report", "input": {"a": 1}},
    ]
    out = validate([{"on": "updated", "actions": actions}])
    assert [a["type"] for a in out[0]["actions"]] == [a["type"] for a in actions]
    assert all(a["id"].startswith("act_") for a in out[0]["actions"])
    slots = {"type": "materialize_slots", "source_table_id": "roster", "horizon_days": 14}
    daily = {"on": "schedule", "schedule": {"type": "daily", "at": "02:00"}, "actions": [slots]}
    assert validate([daily])[0]["actions"][0]["horizon_days"] == 14
    assert set(ACTION_TYPES) == {
        "notify", "webhook", "api_call", "create_record", "update_record",
        "delete_record", "invoke_command", "materialize_slots", "start_workflow",
    }  # fmt: skip


def test_materialize_slots_only_on_daily() -> None:
    slots = {"type": "materialize_slots", "source_table_id": "roster", "horizon_days": 14}
    error = refused([interval(actions=[slots])], "action_invalid")
    assert error.detail == messages.MATERIALIZE_SLOTS_DAILY_ONLY
    refused([{"on": "created", "actions": [slots]}], "action_invalid")
    bad_days = {**slots, "horizon_days": True}
    daily = {"on": "schedule", "schedule": {"type": "daily", "at": "02:00"}, "actions": [bad_days]}
    refused([daily], "action_invalid")


def test_duplicate_ids() -> None:
    error = refused(
        [interval(id="trg_a", actions=[NOTIFY]), interval(id="trg_a", actions=[NOTIFY])],
        "trigger_id_duplicate",
    )
    assert error.detail == messages.trigger_id_duplicate("trg_a")
    refused(
        [{"on": "created", "actions": [{"id": "a1", **NOTIFY}, {"id": "a1", **WEBHOOK}]}],
        "action_invalid",
    )


def test_schedule_rules_apply() -> None:
    refused([{"on": "schedule", "actions": [NOTIFY]}], "schedule_object_missing")
    refused(
        [interval(actions=[NOTIFY]) | {"schedule": {"type": "monthly"}}],
        "unsupported_schedule_type",
    )
    bool_offset = {"type": "date_column_reached", "column": "Due", "offset_minutes": True}
    error = refused(
        [{"on": "schedule", "schedule": bool_offset, "actions": [NOTIFY]}], "offset_minutes_invalid"
    )
    assert error.detail == messages.OFFSET_MINUTES_INVALID


def test_when_rules_apply() -> None:
    bad_column = [{"column": "Nope", "op": "eq", "value": 1}]
    refused([{"on": "created", "when": bad_column, "actions": [NOTIFY]}], "when_column_missing")
    bad_op = [{"column": "Status", "op": "~", "value": 1}]
    refused([{"on": "created", "when": bad_op, "actions": [NOTIFY]}], "when_predicate_invalid")
    # accepted (and validated) on interval/daily, never evaluated there
    when = [{"column": "Status", "op": "eq", "value": "x"}]
    assert validate([interval(when=when, actions=[NOTIFY])])[0]["when"] == when


def test_kind_change_is_refused() -> None:
    previous = validate([interval(id="trg_k", actions=[NOTIFY])])
    daily = {
        "id": "trg_k",
        "on": "schedule",
        "schedule": {"type": "daily", "at": "01:30"},
        "actions": [NOTIFY],
    }
    error = refused([daily], "schedule_kind_change_requires_new_trigger_id", previous)
    assert error.detail == kind_change_text("trg_k")
    assert error.detail == messages.schedule_kind_change("trg_k")
    # timing changes under the same kind are fine; so is a new id
    assert validate(
        [
            interval(id="trg_k", actions=[NOTIFY])
            | {"schedule": {"type": "interval", "every_seconds": 60}}
        ],
        previous,
    )
    assert validate([daily | {"id": "trg_new"}], previous)


@needs_cron
def test_cron_rejects_when() -> None:
    when = [{"column": "Status", "op": "eq", "value": "x"}]
    trigger = {
        "on": "schedule",
        "schedule": {"type": "cron", "expression": "0 9 * * *"},
        "when": when,
        "actions": [WEBHOOK],
    }
    error = refused([trigger], "cron_when_not_allowed")
    assert error.detail == CRON_WHEN_TEXT
    assert error.detail == messages.CRON_WHEN_NOT_ALLOWED
    assert validate([trigger | {"when": []}])[0]["when"] == []


@needs_cron
@pytest.mark.parametrize(
    "action",
    [
        {"type": "notify", "message": "hi $row.Name"},
        {"type": "webhook", "url": "https://x.example", "payload": {"a": ["${row.Name}"]}},
        {"type": "update_record", "record": "$row", "values": {"Status": "x"}},
        {"type": "delete_record", "record": "$row"},
        {"type": "invoke_command", "command": "c", "inputs": {"id": "$row.id"}},
    ],
)
def test_cron_rejects_row_tokens(action: dict[str, Any]) -> None:
    schedule = {"type": "cron", "expression": "0 9 * * *"}
    error = refused(
        [{"on": "schedule", "schedule": schedule, "actions": [action]}], "cron_row_tokens"
    )
    assert error.detail == CRON_ROW_TEXT
    assert error.detail == messages.CRON_ROW_TOKENS


@needs_cron
def test_cron_trigger_ok() -> None:
    schedule = {"type": "cron", "expression": "0  9 * * 1-5", "timezone": "UTC"}
    out = validate([{"on": "schedule", "schedule": schedule, "actions": [WEBHOOK]}])
    assert out[0]["schedule"] == {"type": "cron", "expression": "0 9 * * 1-5"}


# --- stored classification (preview invalid arm) ------------------------------------------


def test_classify_valid() -> None:
    stored = validate([interval(actions=[NOTIFY])])
    assert classify_stored(stored[0], COLUMNS) == []
    assert classify_stored_config(stored, COLUMNS) == [[]]


@pytest.mark.parametrize(
    ("trigger", "codes"),
    [
        (
            {"on": "schedule", "schedule": {"type": "interval", "every_seconds": 60}},
            ["trigger_id_missing"],
        ),
        ({"id": "t", "on": "schedule"}, ["schedule_object_missing"]),
        ({"id": "t", "on": "schedule", "schedule": "interval"}, ["stored_schedule_invalid"]),
        (
            {"id": "t", "on": "schedule", "schedule": {"type": "monthly"}},
            ["unsupported_schedule_type"],
        ),
        (
            {"id": "t", "schedule": {"type": "date_column_reached", "column": "X"}},
            ["schedule_column_missing"],
        ),
        (
            {"id": "t", "schedule": {"type": "date_column_reached", "column": "Name"}},
            ["schedule_column_wrong_type"],
        ),
        (
            {
                "id": "t",
                "schedule": {
                    "type": "date_column_reached",
                    "column": "Due",
                    "offset_minutes": False,
                },
            },
            ["offset_minutes_invalid"],
        ),
        (
            {"id": "t", "schedule": {"type": "interval", "every_seconds": 59}},
            ["interval_seconds_invalid"],
        ),
        ({"id": "t", "schedule": {"type": "daily", "at": "24:00"}}, ["daily_time_invalid"]),
        (
            {"id": "t", "schedule": {"type": "daily", "at": "01:00", "timezone": "X/Y"}},
            ["timezone_invalid"],
        ),
        (
            {
                "id": "t",
                "schedule": {"type": "date_column_reached", "column": "Due"},
                "when": [{"column": "Gone", "op": "eq", "value": 1}],
            },
            ["when_column_missing"],
        ),
        (
            {
                "id": "t",
                "schedule": {"type": "date_column_reached", "column": "Due"},
                "when": [{"column": "Due", "op": "??"}],
            },
            ["when_predicate_invalid"],
        ),
        ("garbage", ["stored_schedule_invalid"]),
        (
            {"schedule": {"type": "date_column_reached", "column": "X", "offset_minutes": 1.5}},
            ["trigger_id_missing", "schedule_column_missing", "offset_minutes_invalid"],
        ),
    ],
)
def test_classify_codes(trigger: object, codes: list[str]) -> None:
    assert classify_stored(trigger, COLUMNS) == codes


def test_classify_ignores_when_on_recordless_kinds() -> None:
    trigger = {
        "id": "t",
        "schedule": {"type": "interval", "every_seconds": 60},
        "when": [{"column": "Gone", "op": "eq", "value": 1}],
    }
    assert classify_stored(trigger, COLUMNS) == []


@needs_cron
def test_classify_cron_codes() -> None:
    bad = {"id": "t", "schedule": {"type": "cron", "expression": "0 9 * * 7"}}
    assert classify_stored(bad, COLUMNS) == ["cron_expression_invalid"]
    when = [{"column": "Status", "op": "eq", "value": 1}]
    with_when = {"id": "t", "schedule": {"type": "cron", "expression": "0 9 * * *"}, "when": when}
    assert classify_stored(with_when, COLUMNS) == ["cron_when_not_allowed"]


def test_classify_duplicates_across_the_list() -> None:
    a = {"id": "trg_a", "on": "schedule", "schedule": {"type": "interval", "every_seconds": 60}}
    b = {"id": "trg_b", "on": "created"}
    result = classify_stored_config([a, b, a | {"schedule": {"type": "monthly"}}], COLUMNS)
    assert result[0] == ["trigger_id_duplicate"]
    assert result[2] == ["unsupported_schedule_type", "trigger_id_duplicate"]
    assert classify_stored_config("nope", COLUMNS) == []


def test_helpers() -> None:
    assert is_schedule_trigger({"on": "schedule"})
    assert not is_schedule_trigger({"on": "created"})
    assert not is_schedule_trigger(None)
    assert stored_schedule_type({"schedule": {"type": "monthly"}}) == "monthly"
    assert stored_schedule_type({"schedule": "x"}) is None
    assert stored_schedule_type([]) is None


PREVIEW_CODES = {
    "trigger_id_missing",
    "trigger_id_duplicate",
    "schedule_object_missing",
    "stored_schedule_invalid",
    "unsupported_schedule_type",
    "schedule_column_missing",
    "schedule_column_wrong_type",
    "offset_minutes_invalid",
    "interval_seconds_invalid",
    "daily_time_invalid",
    "cron_expression_invalid",
    "cron_when_not_allowed",
    "when_column_missing",
    "when_predicate_invalid",
    "timezone_invalid",
}  # fmt: skip  (schedule_state_missing is the engine's: it needs the state row)


@needs_cron
def test_every_preview_code_is_reachable() -> None:
    dcr = {"type": "date_column_reached", "column": "Due"}
    stored: list[object] = [
        {"on": "schedule", "schedule": {"type": "interval", "every_seconds": 60}},
        {"id": "a", "on": "schedule"},
        {"id": "b", "on": "schedule", "schedule": ["interval"]},
        {"id": "c", "on": "schedule", "schedule": {"type": "monthly"}},
        {"id": "d", "on": "schedule", "schedule": {**dcr, "column": "Gone"}},
        {"id": "e", "on": "schedule", "schedule": {**dcr, "column": "Name"}},
        {"id": "f", "on": "schedule", "schedule": {**dcr, "offset_minutes": True}},
        {"id": "g", "on": "schedule", "schedule": {"type": "interval", "every_seconds": True}},
        {"id": "h", "on": "schedule", "schedule": {"type": "daily", "at": "1:30"}},
        {"id": "i", "on": "schedule", "schedule": {"type": "cron", "expression": "@daily"}},
        {
            "id": "j",
            "on": "schedule",
            "schedule": {"type": "cron", "expression": "0 9 * * *"},
            "when": [{"column": "Status", "op": "eq", "value": "x"}],
        },
        {"id": "k", "on": "schedule", "schedule": dcr, "when": [{"column": "X", "op": "eq"}]},
        {"id": "l", "on": "schedule", "schedule": dcr, "when": [{"column": "Due", "op": "x"}]},
        {"id": "m", "on": "schedule", "schedule": {"type": "daily", "at": "01:30", "timezone": 1}},
        {"id": "m", "on": "schedule", "schedule": {"type": "interval", "every_seconds": 60}},
    ]
    seen = {code for codes in classify_stored_config(stored, COLUMNS) for code in codes}
    assert seen == PREVIEW_CODES


def test_normalize_trigger_only_drops_defaults() -> None:
    raw = {
        "name": "n",
        "on": "schedule",
        "schedule": {"type": "date_column_reached", "column": "Due", "offset_minutes": 0},
        "actions": [NOTIFY],
    }
    out = normalize_trigger(raw)
    assert out == {**raw, "schedule": {"type": "date_column_reached", "column": "Due"}}
    assert normalize_trigger(out) == out
    assert normalize_trigger({"on": "created"}) == {"on": "created"}


WORDS = (
    "schedule", "created", "interval", "daily", "cron", "date_column_reached", "Due", "Status",
    "01:30", "UTC", "Asia/Taipei", "0 9 * * *", "$row", "$row.Name", "notify", "webhook", "eq",
    "neq", "in", "trg_a", "id", "type", "on", "when", "actions",
)  # fmt: skip
KEYS = (
    "id", "type", "on", "when", "schedule", "actions", "column", "op", "value", "every_seconds",
    "at", "timezone", "expression", "message", "url", "offset_minutes", "record", "values", "x",
)  # fmt: skip
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-100000, 3000000) | st.sampled_from(WORDS),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.sampled_from(KEYS), inner, max_size=6)
    ),
    max_leaves=25,
)


@settings(max_examples=300, deadline=None)
@given(raw=json_values, previous=json_values)
def test_validation_is_total(raw: object, previous: object) -> None:
    """Any JSON is either a valid config or a ConfigError (400), never another exception."""
    prev = previous if isinstance(previous, list) else None
    try:
        out = validate_triggers(raw, COLUMNS, new_id=ids(), previous=prev)
    except ConfigError:
        pass
    else:
        assert validate_triggers(out, COLUMNS, new_id=ids(), previous=out) == out
    codes = classify_stored_config(raw, COLUMNS)
    assert all(isinstance(c, str) for cs in codes for c in cs)


@pytest.mark.parametrize("kind", ["webhook", "api_call"])
@pytest.mark.parametrize("seconds", [1, 2.5, 0.1, 3600])
def test_outbound_actions_take_a_positive_timeout(kind: str, seconds: float) -> None:
    """``timeout_s`` is the action's total deadline (capped at run time)."""
    action = {"type": kind, "method": "GET", "url": "https://x.example", "timeout_s": seconds}
    if kind == "webhook":
        del action["method"]
    (trigger,) = validate([{"on": "created", "actions": [action]}])
    assert trigger["actions"][0]["timeout_s"] == seconds


@pytest.mark.parametrize("seconds", [0, -1, True, "5", None, [], float("nan"), float("inf")])
def test_a_malformed_timeout_is_refused_at_save(seconds: object) -> None:
    action = {"type": "webhook", "url": "https://x.example", "timeout_s": seconds}
    error = refused([{"on": "created", "actions": [action]}], "action_invalid")
    assert "webhook action 'timeout_s' must be a positive number of seconds" in error.detail


def test_only_outbound_actions_take_a_timeout() -> None:
    action = {"type": "notify", "message": "m", "timeout_s": 5}
    refused([{"on": "created", "actions": [action]}], "action_invalid")
