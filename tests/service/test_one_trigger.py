"""The facade's one-trigger edits keep the SPEC §5.2 state rules, both backends."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from tocsin import messages
from tocsin.errors import ConfigError, NotFound, ValidationError
from tocsin.service import Tocsin

NOW = datetime(2026, 3, 1, 10, 0, tzinfo=UTC)
DUE = {
    "id": "trg_due",
    "on": "schedule",
    "schedule": {"type": "date_column_reached", "column": "Due", "offset_minutes": -60},
    "actions": [{"id": "act_n", "type": "notify", "message": "due $row.Title"}],
}


def table_with(tocsin: Tocsin, *triggers: dict[str, Any]) -> str:
    table = tocsin.create_table(
        "chatroom", str(uuid.uuid4()), "Cases", {"Title": "text", "Due": "datetime"}, now=NOW
    )
    tocsin.set_triggers(table["id"], list(triggers), now=NOW)
    table_id: str = table["id"]
    return table_id


def test_patching_the_offset_keeps_consumed_values_consumed(tocsin: Tocsin) -> None:
    table_id = table_with(tocsin, DUE)
    tocsin.insert_record(table_id, {"Title": "a", "Due": "2026-03-01T10:30"}, now=NOW)
    assert tocsin.tick(now=NOW)["runs_created"] == 1
    patched = tocsin.patch_trigger(
        table_id, "trg_due", {"schedule": {"offset_minutes": -120}}, now=NOW
    )
    assert patched["schedule"]["offset_minutes"] == -120
    assert patched["actions"] == DUE["actions"]  # untouched keys and ids stay
    assert tocsin.tick(now=NOW + timedelta(minutes=1))["runs_created"] == 0


def test_patching_an_interval_re_anchors_its_windows(tocsin: Tocsin) -> None:
    hourly = {
        "id": "trg_h",
        "on": "schedule",
        "schedule": {"type": "interval", "every_seconds": 3600},
        "actions": [{"type": "notify", "message": "x"}],
    }
    table_id = table_with(tocsin, hourly)
    assert tocsin.tick(now=NOW)["runs_created"] == 1
    tocsin.work(now=NOW)
    later = NOW + timedelta(minutes=30)
    tocsin.patch_trigger(table_id, "trg_h", {"schedule": {"every_seconds": 7200}}, now=later)
    assert tocsin.tick(now=later)["runs_created"] == 1  # the change is the new first window


def test_patch_and_delete_refusals_write_nothing(tocsin: Tocsin) -> None:
    table_id = table_with(tocsin, DUE)
    before = tocsin.get_triggers(table_id)
    with pytest.raises(ConfigError) as kind:
        tocsin.patch_trigger(
            table_id,
            "trg_due",
            {
                "schedule": {
                    "type": "interval",
                    "every_seconds": 60,
                    "column": None,
                    "offset_minutes": None,
                }
            },
            now=NOW,
        )
    assert kind.value.detail == messages.schedule_kind_change("trg_due")
    with pytest.raises(ValidationError):
        tocsin.patch_trigger(table_id, "trg_due", ["not", "an", "object"], now=NOW)
    with pytest.raises(NotFound):
        tocsin.delete_trigger(table_id, "trg_missing", now=NOW)
    with pytest.raises(NotFound):
        tocsin.get_trigger(str(uuid.uuid4()), "trg_due")
    assert tocsin.get_triggers(table_id) == before


def test_list_tables_pages_a_scope_and_checks_it(tocsin: Tocsin) -> None:
    scope_id = str(uuid.uuid4())
    ids = [tocsin.create_table("chatroom", scope_id, f"T{i}", {}, now=NOW)["id"] for i in range(3)]
    page = tocsin.list_tables("chatroom", scope_id.upper(), skip=1, limit=5)
    assert [t["id"] for t in page["items"]] == ids[1:] and page["total"] == 3
    with pytest.raises(ValidationError):
        tocsin.list_tables("team", scope_id)
    with pytest.raises(ValidationError):
        tocsin.list_tables("chatroom", "nope")
