"""Triggers config through the facade: validation texts, ids, state changes (SPEC §2–§5.2)."""

from __future__ import annotations

from typing import Any

import pytest
from engine_support import (
    CHATROOM,
    NOW,
    clock_trigger,
    date_trigger,
    finish_all,
    hours,
    interval,
    make_table,
    minutes,
    notify,
    runs_of,
)

from tocsin import messages
from tocsin.errors import ConfigError, NotFound, ValidationError
from tocsin.service import Tocsin


def _refused(t: Tocsin, table_id: str, triggers: list[Any]) -> str:
    before = t.get_triggers(table_id)
    with pytest.raises(ValidationError) as caught:
        t.set_triggers(table_id, triggers, now=NOW)
    assert caught.value.status == 400
    assert t.get_triggers(table_id) == before  # nothing written
    return caught.value.detail


@pytest.mark.parametrize(
    ("schedule", "when", "expected"),
    [
        (
            {"type": "date_column_reached", "column": "Due", "offset_minutes": 43201},
            None,
            messages.OFFSET_MINUTES_INVALID,
        ),
        (
            {"type": "date_column_reached", "column": "Due", "offset_minutes": True},
            None,
            messages.OFFSET_MINUTES_INVALID,
        ),
        (
            {"type": "daily", "at": "01:30", "timezone": 8},
            None,
            messages.DAILY_TIMEZONE_NOT_STRING,
        ),
        (
            {"type": "daily", "at": "01:30", "timezone": "Mars/Olympus"},
            None,
            messages.daily_timezone_unknown("Mars/Olympus"),
        ),
        ({"type": "monthly"}, None, messages.invalid_schedule_type("monthly")),
        (
            {"type": "cron", "expression": "0 9 * * *"},
            [{"column": "Status", "op": "eq", "value": "x"}],
            messages.CRON_WHEN_NOT_ALLOWED,
        ),
    ],
)
def test_section_4_texts_are_exact(
    tocsin: Tocsin, schedule: dict[str, Any], when: list[Any] | None, expected: str
) -> None:
    table_id = make_table(tocsin)
    trigger = clock_trigger(schedule)
    if when is not None:
        trigger["when"] = when
    assert _refused(tocsin, table_id, [trigger]) == expected


@pytest.mark.parametrize("expression", ["0 0 30 2 *", "0 0 * * 7", "@daily", "0 9 * * * *"])
def test_bad_cron_is_a_cron_schedule_invalid_400(tocsin: Tocsin, expression: str) -> None:
    table_id = make_table(tocsin)
    trigger = clock_trigger({"type": "cron", "expression": expression})
    assert _refused(tocsin, table_id, [trigger]).startswith("cron schedule invalid: ")


def test_cron_refuses_row_tokens(tocsin: Tocsin) -> None:
    table_id = make_table(tocsin)
    trigger = clock_trigger({"type": "cron", "expression": "0 9 * * *"})
    trigger["actions"] = notify("case $row.Status")
    assert _refused(tocsin, table_id, [trigger]) == messages.CRON_ROW_TOKENS


def test_date_column_must_exist_and_be_a_date(tocsin: Tocsin) -> None:
    table_id = make_table(tocsin)
    with pytest.raises(ConfigError) as missing:
        tocsin.set_triggers(table_id, [date_trigger("Nope")], now=NOW)
    assert missing.value.code == "schedule_column_missing"
    with pytest.raises(ConfigError) as wrong:
        tocsin.set_triggers(table_id, [date_trigger("Status")], now=NOW)
    assert wrong.value.code == "schedule_column_wrong_type"


def test_when_unknown_column_is_400(tocsin: Tocsin) -> None:
    table_id = make_table(tocsin)
    trigger = date_trigger(when=[{"column": "Ghost", "op": "eq", "value": 1}])
    with pytest.raises(ConfigError) as caught:
        tocsin.set_triggers(table_id, [trigger], now=NOW)
    assert caught.value.code == "when_column_missing"


def test_omit_when_default_and_ids_round_trip(tocsin: Tocsin) -> None:
    table_id = make_table(tocsin)
    saved = tocsin.set_triggers(
        table_id,
        [
            date_trigger(offset=0),
            clock_trigger({"type": "daily", "at": "01:30", "timezone": "UTC"}),
        ],
        now=NOW,
    )
    assert saved[0]["schedule"] == {"type": "date_column_reached", "column": "Due"}
    assert saved[1]["schedule"] == {"type": "daily", "at": "01:30"}
    for trigger in saved:
        assert trigger["id"].startswith("trg_") and len(trigger["id"]) == 16
        assert all(action["id"] for action in trigger["actions"])
    assert tocsin.get_triggers(table_id) == saved
    again = tocsin.set_triggers(table_id, saved, now=NOW + hours(1))
    assert again == saved  # ids sent back are kept


def test_kind_change_under_same_id_is_400(tocsin: Tocsin) -> None:
    table_id = make_table(tocsin)
    [saved] = tocsin.set_triggers(table_id, [interval()], now=NOW)
    changed = clock_trigger({"type": "daily", "at": "01:30"}, id=saved["id"])
    assert _refused(tocsin, table_id, [changed]) == messages.schedule_kind_change(saved["id"])


def test_kind_change_of_a_retired_id_is_400_too(tocsin: Tocsin) -> None:
    table_id = make_table(tocsin)
    [saved] = tocsin.set_triggers(table_id, [interval()], now=NOW)
    tocsin.set_triggers(table_id, [], now=NOW)
    changed = date_trigger(id=saved["id"])
    assert _refused(tocsin, table_id, [changed]) == messages.schedule_kind_change(saved["id"])


def test_a_trigger_id_of_another_table_is_its_own(tocsin: Tocsin) -> None:
    """Trigger ids are unique within their table only: another table saving the same id gets
    its own trigger (no refusal, nothing to learn about the first table)."""
    first, second = make_table(tocsin), make_table(tocsin)
    [saved] = tocsin.set_triggers(first, [interval()], now=NOW)
    [again] = tocsin.set_triggers(second, [interval(id=saved["id"])], now=NOW)
    assert again["id"] == saved["id"]
    assert tocsin.tick(now=NOW)["runs_created"] == 2  # one per table


def test_scp_rules_and_triggers_exclude_each_other(tocsin: Tocsin) -> None:
    with_rules = make_table(tocsin)
    tocsin.set_scp_rules(with_rules, [{"floor": "channel"}], now=NOW)
    assert _refused(tocsin, with_rules, [interval()]) == messages.SCP_WITH_TRIGGERS
    assert tocsin.set_triggers(with_rules, [], now=NOW) == []

    with_triggers = make_table(tocsin)
    tocsin.set_triggers(with_triggers, [interval()], now=NOW)
    with pytest.raises(ValidationError) as caught:
        tocsin.set_scp_rules(with_triggers, [{"floor": "channel"}], now=NOW)
    assert caught.value.detail == messages.SCP_WITH_TRIGGERS
    assert tocsin.get_table(with_triggers)["scp_rules"] is None


def test_trashed_table_refuses_triggers(tocsin: Tocsin) -> None:
    table_id = make_table(tocsin)
    tocsin.trash_table(table_id, now=NOW)
    with pytest.raises(NotFound):
        tocsin.set_triggers(table_id, [interval()], now=NOW)


def test_name_when_actions_edits_keep_the_window(tocsin: Tocsin) -> None:
    table_id = make_table(tocsin)
    [saved] = tocsin.set_triggers(table_id, [interval()], now=NOW)
    assert tocsin.tick(now=NOW)["runs_created"] == 1
    finish_all(tocsin, table_id, now=NOW)
    edited = dict(saved, name="renamed", actions=notify("other"))
    tocsin.set_triggers(table_id, [edited], now=NOW + minutes(10))
    # not re-anchored: the next window is still NOW + 1h
    assert tocsin.tick(now=NOW + minutes(59))["runs_created"] == 0
    assert tocsin.tick(now=NOW + hours(1))["runs_created"] == 1


def test_timing_edit_re_anchors_from_the_change(tocsin: Tocsin) -> None:
    table_id = make_table(tocsin)
    [saved] = tocsin.set_triggers(table_id, [interval(3600)], now=NOW)
    assert tocsin.tick(now=NOW)["runs_created"] == 1
    finish_all(tocsin, table_id, now=NOW)
    edit_at = NOW + minutes(20)
    retimed = dict(saved, schedule={"type": "interval", "every_seconds": 7200})
    tocsin.set_triggers(table_id, [retimed], now=edit_at)
    assert tocsin.tick(now=edit_at)["runs_created"] == 1  # the new anchor is a window
    finish_all(tocsin, table_id, now=edit_at)
    assert tocsin.tick(now=edit_at + hours(1))["runs_created"] == 0
    assert tocsin.tick(now=edit_at + hours(2))["runs_created"] == 1
    runs = runs_of(tocsin, table_id)
    assert [r["scheduled_for"] for r in runs] == [NOW, edit_at, edit_at + hours(2)]


def test_running_run_keeps_its_frozen_definition(tocsin: Tocsin) -> None:
    table_id = make_table(tocsin)
    [saved] = tocsin.set_triggers(table_id, [interval(3600)], now=NOW)
    tocsin.tick(now=NOW)
    retimed = dict(saved, schedule={"type": "interval", "every_seconds": 7200})
    tocsin.set_triggers(table_id, [retimed], now=NOW + minutes(1))
    [run] = runs_of(tocsin, table_id)
    assert run["definition"]["schedule"] == {"type": "interval", "every_seconds": 3600}


def test_removed_trigger_retires_and_re_adding_revives_its_ledger(tocsin: Tocsin) -> None:
    table_id = make_table(tocsin)
    record = tocsin.insert_record(table_id, {"Due": "2026-08-27T01:00"}, now=NOW)
    [saved] = tocsin.set_triggers(table_id, [date_trigger()], now=NOW)
    assert tocsin.tick(now=NOW)["runs_created"] == 1
    tocsin.set_triggers(table_id, [], now=NOW + minutes(1))
    assert tocsin.get_triggers(table_id) == []
    tocsin.set_triggers(table_id, [saved], now=NOW + minutes(2))
    assert tocsin.tick(now=NOW + minutes(3))["runs_created"] == 0  # the value stays consumed
    tocsin.update_record(table_id, record["id"], {"Due": "2026-08-27T02:00"}, now=NOW)
    assert tocsin.tick(now=NOW + minutes(4))["runs_created"] == 1


def test_date_edit_restarts_cursor_but_keeps_consumed_values(tocsin: Tocsin) -> None:
    table_id = make_table(tocsin)
    tocsin.insert_records(table_id, [{"Due": "2026-08-26T01:00"}] * 3, now=NOW)
    [saved] = tocsin.set_triggers(table_id, [date_trigger()], now=NOW)
    assert tocsin.tick(now=NOW)["runs_created"] == 3
    moved = dict(
        saved, schedule={"type": "date_column_reached", "column": "Due", "offset_minutes": -60}
    )
    tocsin.set_triggers(table_id, [moved], now=NOW + minutes(1))
    assert tocsin.tick(now=NOW + minutes(2))["runs_created"] == 0  # offset not in identity


def test_revived_clock_trigger_fires_once_for_the_latest_window(tocsin: Tocsin) -> None:
    table_id = make_table(tocsin)
    [saved] = tocsin.set_triggers(table_id, [interval(3600)], now=NOW)
    tocsin.tick(now=NOW)
    finish_all(tocsin, table_id, now=NOW)
    tocsin.set_triggers(table_id, [], now=NOW + minutes(5))
    assert tocsin.tick(now=NOW + hours(3))["runs_created"] == 0  # retired: silent
    tocsin.set_triggers(table_id, [saved], now=NOW + hours(5) + minutes(30))
    assert tocsin.tick(now=NOW + hours(5) + minutes(30))["runs_created"] == 1
    latest = runs_of(tocsin, table_id)[-1]
    assert latest["scheduled_for"] == NOW + hours(5)


@pytest.mark.parametrize(
    "bad",
    [
        {"when": [{"column": "N", "op": "gt", "value": float("nan")}]},
        {"actions": [{"type": "webhook", "url": "http://x.test", "payload": {1, 2}}]},
        {"actions": [{"type": "webhook", "url": "http://x.test", "payload": float("inf")}]},
        {"actions": [{"type": "webhook", "url": "http://x.test", "payload": {1: "int key"}}]},
        {"actions": [{"type": "webhook", "url": "http://x.test", "payload": (1, 2)}]},
    ],
)
def test_values_the_store_cannot_hold_are_a_400_before_any_write(
    tocsin: Tocsin, bad: dict[str, Any]
) -> None:
    """NaN reached PostgreSQL as a 500 and a set as an unhandled TypeError (SQLite kept NaN)."""
    table_id = make_table(tocsin)
    [kept] = tocsin.set_triggers(table_id, [interval()], now=NOW)
    trigger = date_trigger(**bad)
    assert _refused(tocsin, table_id, [kept, trigger]) == messages.not_plain_json("triggers")
    assert tocsin.tick(now=NOW)["runs_created"] == 1  # the stored config is intact


def test_scp_rules_must_be_plain_json(tocsin: Tocsin) -> None:
    table_id = make_table(tocsin)
    for rules in ([{"floor": float("nan")}], [{"a", "b"}]):
        with pytest.raises(ValidationError) as caught:
            tocsin.set_scp_rules(table_id, rules, now=NOW)
        assert caught.value.detail == messages.not_plain_json("scp_rules")
        with pytest.raises(ValidationError):
            tocsin.create_table("chatroom", CHATROOM, "X", {}, scp_rules=rules, now=NOW)
    assert tocsin.get_table(table_id)["scp_rules"] is None
