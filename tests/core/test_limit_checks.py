"""The pure checks of sizes and counts (core.config.limits) and of notify targets
(core.config.targets)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

import pytest

from tocsin import messages
from tocsin.core.config.limits import check_columns, check_records, check_triggers, record_size
from tocsin.core.config.targets import check_notify_targets, notify_chatroom
from tocsin.core.model import Table
from tocsin.errors import ConfigError, ValidationError

ROOM = "6f1c2a9e-0b7d-4c1e-9a53-2f0e8d7c4b11"
OTHER = "11111111-1111-4111-8111-111111111111"


@dataclass(frozen=True)
class Small:
    max_record_bytes: int = 20
    max_columns: int = 2
    max_column_name_chars: int = 3
    max_triggers_per_table: int = 2
    max_actions_per_trigger: int = 1


def test_columns() -> None:
    check_columns({"abc": "text", "d": "text"}, Small())
    check_columns("not a mapping", Small())  # validation answers that one
    with pytest.raises(ValidationError, match="at most 2 columns"):
        check_columns({"a": "text", "b": "text", "c": "text"}, Small())
    with pytest.raises(ValidationError) as err:
        check_columns({"abcd": "text"}, Small())
    assert err.value.detail == messages.column_name_too_long("abcd", 3)


def test_record_size_is_compact_utf8_json() -> None:
    assert record_size({"T": "é"}) == len('{"T":"é"}'.encode())
    assert record_size({"J": [1, {"a": None}]}) == len('{"J":[1,{"a":null}]}')
    assert record_size({"T": object()}) is None
    deep: list[object] = []
    for _ in range(5000):
        deep = [deep]
    assert record_size({"J": deep}) is None  # not JSON here: the cell validation refuses it
    check_records([{"T": "x" * 12}, "not a mapping"], Small())  # 20 bytes: at the limit
    with pytest.raises(ValidationError) as err:
        check_records([{"T": "x" * 13}], Small())
    assert err.value.detail == messages.record_too_large(21, 20)


def test_trigger_and_action_counts() -> None:
    at = datetime(2026, 8, 27, tzinfo=UTC)
    table = Table(
        id="tbl",
        scope="chatroom",
        scope_id=ROOM,
        name="Cases",
        columns={},
        triggers=None,
        scp_rules=None,
        requires_approval=False,
        trashed=False,
        next_due_at=None,
        last_ticked_at=None,
        created_at=at,
        updated_at=at,
    )
    one = {"type": "notify", "message": "m"}
    check_triggers([{"actions": [one]}, {"actions": [one]}], table, Small())
    check_triggers({"not": "a list"}, table, Small())
    with pytest.raises(ValidationError, match="at most 2 triggers"):
        check_triggers([{}, {}, {}], table, Small())
    with pytest.raises(ValidationError) as err:
        check_triggers([{"actions": [one]}, {"actions": [one, one]}], table, Small())
    assert err.value.detail == messages.too_many_actions("#2", 2, 1)
    with pytest.raises(ValidationError) as notify:
        check_triggers([{"actions": [{**one, "chatroom_id": OTHER}]}], table, Small())
    assert notify.value.detail == messages.notify_other_chatroom(OTHER)


def test_notify_posts_only_to_the_tables_own_chatroom() -> None:
    assert notify_chatroom(None, scope="chatroom", scope_id=ROOM) == ROOM
    assert notify_chatroom(ROOM, scope="chatroom", scope_id=ROOM) == ROOM
    assert notify_chatroom(ROOM.upper(), scope="chatroom", scope_id=ROOM) == ROOM
    assert notify_chatroom(ROOM.replace("-", ""), scope="chatroom", scope_id=ROOM) == ROOM
    for other in (OTHER, "not-a-uuid", "$row.Room"):
        with pytest.raises(ConfigError) as err:
            notify_chatroom(other, scope="chatroom", scope_id=ROOM)
        assert err.value.detail == messages.notify_other_chatroom(other)
        assert err.value.code == "action_invalid"
    for scope in ("workspace", "user"):
        for chatroom_id in (None, ROOM):
            with pytest.raises(ConfigError) as outside:
                notify_chatroom(chatroom_id, scope=scope, scope_id=ROOM)
            assert outside.value.detail == messages.notify_outside_chatroom(scope)


def test_save_check_looks_only_at_well_shaped_notify_actions() -> None:
    room = {"scope": "chatroom", "scope_id": ROOM}
    shapes: list[object] = [
        "x",
        ["x", {"actions": "x"}, {"actions": ["x", {"type": "webhook", "chatroom_id": OTHER}]}],
        [{"actions": [{"type": "notify", "chatroom_id": 5}]}],  # validate_triggers refuses it
    ]
    for raw in shapes:
        check_notify_targets(raw, scope=room["scope"], scope_id=room["scope_id"])
    with pytest.raises(ConfigError):
        check_notify_targets(
            [{"actions": [{"type": "notify", "chatroom_id": OTHER}]}],
            scope="chatroom",
            scope_id=ROOM,
        )
