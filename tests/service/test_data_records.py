"""The data plane through the facade: tables, typed records, row events (SPEC §2–§3, §8)."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from tocsin import messages
from tocsin.errors import NotFound, ValidationError
from tocsin.service import Tocsin

NOW = datetime(2026, 8, 27, 5, 2, 13, tzinfo=UTC)
CHATROOM = "11111111-1111-4111-8111-111111111111"


def minutes(n: float) -> timedelta:
    return timedelta(minutes=n)


def make_table(t: Tocsin) -> str:
    columns = {"Due": "datetime", "Status": "text", "N": "number"}
    return str(t.create_table("chatroom", str(uuid.uuid4()), "Cases", columns, now=NOW)["id"])


def notify(message: str) -> list[dict[str, Any]]:
    return [{"type": "notify", "message": message}]  # to the table's own chatroom


def runs_of(t: Tocsin, table_id: str) -> list[dict[str, Any]]:
    items = t.list_runs(table_id, limit=500, now=NOW)["items"]
    return sorted(items, key=lambda r: (r["created_at"], r["id"]))


SCOPE_ID = "22222222-2222-4222-8222-222222222222"
ALL_TYPES = {
    "T": "text",
    "N": "number",
    "B": "boolean",
    "D": "date",
    "DT": "datetime",
    "S": "select",
    "J": "json",
}


def test_create_table_validates_scope_ids_and_columns(tocsin: Tocsin) -> None:
    table = tocsin.create_table("workspace", SCOPE_ID, "All", ALL_TYPES, now=NOW)
    assert table["scope"] == "workspace" and table["scope_id"] == SCOPE_ID
    assert table["columns"] == ALL_TYPES and table["trashed"] is False
    assert tocsin.get_table(table["id"]) == table
    with pytest.raises(ValidationError) as scope:
        tocsin.create_table("team", SCOPE_ID, "X", {}, now=NOW)
    assert scope.value.detail == messages.scope_invalid("team")
    with pytest.raises(ValidationError) as scope_id:
        tocsin.create_table("user", "not-a-uuid", "X", {}, now=NOW)
    assert scope_id.value.detail == messages.scope_id_invalid("not-a-uuid")
    with pytest.raises(ValidationError) as column:
        tocsin.create_table("user", SCOPE_ID, "X", {"Due": "timestamp"}, now=NOW)
    assert column.value.status == 400 and "'Due'" in column.value.detail
    for blank in ("", "  "):
        with pytest.raises(ValidationError) as name:
            tocsin.create_table("user", SCOPE_ID, "X", {blank: "text"}, now=NOW)
        assert name.value.detail == (
            f"column name {blank!r} is invalid: it must be a non-empty string"
        )


@pytest.mark.parametrize(
    ("column", "value"),
    [
        ("T", 5),
        ("N", True),
        ("N", "5"),
        ("B", 1),
        ("D", "2026-02-30"),
        ("D", "2026-08-27T09:00"),
        ("DT", "tomorrow"),
        ("S", ["a"]),
        ("J", {1, 2}),
    ],
)
def test_cells_are_validated_per_column_type(tocsin: Tocsin, column: str, value: Any) -> None:
    table_id = tocsin.create_table("user", SCOPE_ID, "All", ALL_TYPES, now=NOW)["id"]
    with pytest.raises(ValidationError) as caught:
        tocsin.insert_records(table_id, [{"T": "fine"}, {column: value}], now=NOW)
    assert caught.value.detail == messages.cell_invalid(column, ALL_TYPES[column])
    assert tocsin.list_records(table_id)["total"] == 0  # nothing written


def test_valid_cells_and_unknown_columns(tocsin: Tocsin) -> None:
    table_id = tocsin.create_table("user", SCOPE_ID, "All", ALL_TYPES, now=NOW)["id"]
    row = {
        "T": "x",
        "N": 1.5,
        "B": False,
        "D": "2026-08-27",
        "DT": "2026-08-27T09:00:00Z",
        "S": "Open",
        "J": {"a": [1, None]},
    }
    [record_id] = tocsin.insert_records(table_id, [row], now=NOW)
    assert tocsin.get_record(table_id, record_id)["data"] == row
    with pytest.raises(ValidationError) as caught:
        tocsin.update_record(table_id, record_id, {"Ghost": 1}, now=NOW)
    assert caught.value.detail == messages.column_unknown("Ghost")


def test_partial_update_and_trash_restore(tocsin: Tocsin) -> None:
    table_id = make_table(tocsin)
    record = tocsin.insert_record(table_id, {"Status": "Open", "N": 1}, now=NOW)
    updated = tocsin.update_record(table_id, record["id"], {"N": 2}, now=NOW + minutes(1))
    assert updated["data"] == {"Status": "Open", "N": 2}
    assert tocsin.trash_record(table_id, record["id"], now=NOW)["trashed"] is True
    assert tocsin.list_records(table_id)["total"] == 0
    with pytest.raises(NotFound):
        tocsin.get_record(table_id, record["id"])
    with pytest.raises(NotFound):
        tocsin.update_record(table_id, record["id"], {"N": 3}, now=NOW)
    assert tocsin.restore_record(table_id, record["id"], now=NOW)["trashed"] is False
    page = tocsin.list_records(table_id, skip=0, limit=10)
    assert page["total"] == 1 and page["skip"] == 0 and page["limit"] == 10
    with pytest.raises(NotFound):
        tocsin.trash_record(table_id, str(uuid.uuid4()), now=NOW)


def test_trashed_table_refuses_writes_with_404(tocsin: Tocsin) -> None:
    table_id = make_table(tocsin)
    record = tocsin.insert_record(table_id, {"Status": "Open"}, now=NOW)
    assert tocsin.trash_table(table_id, now=NOW)["trashed"] is True
    assert tocsin.get_table(table_id)["trashed"] is True
    with pytest.raises(NotFound) as caught:
        tocsin.insert_records(table_id, [{"Status": "x"}], now=NOW)
    assert caught.value.detail == messages.TABLE_NOT_FOUND
    with pytest.raises(NotFound):
        tocsin.update_record(table_id, record["id"], {"Status": "x"}, now=NOW)
    with pytest.raises(NotFound):
        tocsin.preview(table_id, now=NOW)
    tocsin.restore_table(table_id, now=NOW)
    assert tocsin.update_record(table_id, record["id"], {"Status": "x"}, now=NOW)


def _row_trigger(on: str, when: list[Any] | None = None) -> dict[str, Any]:
    trigger: dict[str, Any] = {"name": on, "on": on, "actions": notify(on)}
    if when is not None:
        trigger["when"] = when
    return trigger


def test_row_events_create_runs_with_the_snapshot(tocsin: Tocsin) -> None:
    table_id = make_table(tocsin)
    done = [{"column": "Status", "op": "eq", "value": "Done"}]
    saved = tocsin.set_triggers(
        table_id,
        [
            _row_trigger("created"),
            _row_trigger("updated", done),
            _row_trigger("deleted"),
            _row_trigger("restored"),
        ],
        now=NOW,
    )
    by_event = {t["on"]: t for t in saved}
    record = tocsin.insert_record(table_id, {"Status": "Open"}, now=NOW)
    tocsin.update_record(table_id, record["id"], {"N": 1}, now=NOW + minutes(1))  # when: no
    tocsin.update_record(table_id, record["id"], {"Status": "Done"}, now=NOW + minutes(2))
    tocsin.trash_record(table_id, record["id"], now=NOW + minutes(3))
    tocsin.trash_record(table_id, record["id"], now=NOW + minutes(4))  # no change, no event
    tocsin.restore_record(table_id, record["id"], now=NOW + minutes(5))
    runs = runs_of(tocsin, table_id)
    assert [r["source"] for r in runs] == ["created", "updated", "deleted", "restored"]
    for run in runs:
        assert run["trigger_id"] == by_event[run["source"]]["id"]
        assert run["record_id"] == record["id"] and run["status"] == "pending"
        assert "payload" not in run  # a page of runs leaves the row out (§8)
    payloads = [tocsin.get_run(table_id, run["id"])["payload"] for run in runs]
    assert all(payload["id"] == record["id"] for payload in payloads)
    assert payloads[0]["data"] == {"Status": "Open"}
    assert payloads[1]["data"] == {"Status": "Done", "N": 1}
    assert runs[1]["definition"] == by_event["updated"]


def test_row_event_runs_are_in_the_write_transaction(tocsin: Tocsin) -> None:
    """A rejected write inserts no run either (validation happens before anything is written)."""
    table_id = make_table(tocsin)
    tocsin.set_triggers(table_id, [_row_trigger("created")], now=NOW)
    with pytest.raises(ValidationError):
        tocsin.insert_records(table_id, [{"Status": "ok"}, {"Status": 1}], now=NOW)
    assert runs_of(tocsin, table_id) == []
    tocsin.insert_records(table_id, [{"Status": "a"}, {"Status": "b"}], now=NOW)
    assert len(runs_of(tocsin, table_id)) == 2


def test_runs_listing_and_get_run(tocsin: Tocsin) -> None:
    table_id, other = make_table(tocsin), make_table(tocsin)
    tocsin.set_triggers(table_id, [_row_trigger("created")], now=NOW)
    tocsin.insert_records(table_id, [{"Status": "a"}, {"Status": "b"}], now=NOW)
    page = tocsin.list_runs(table_id, status="pending", skip=1, limit=1, now=NOW)
    assert page["total"] == 2 and len(page["items"]) == 1
    assert page["skip"] == 1 and page["limit"] == 1
    assert tocsin.list_runs(table_id, status="stuck", now=NOW)["total"] == 0
    run_id = page["items"][0]["id"]
    assert tocsin.get_run(table_id, run_id)["id"] == run_id
    with pytest.raises(NotFound) as caught:
        tocsin.get_run(other, run_id)
    assert caught.value.detail == messages.RUN_NOT_FOUND
    with pytest.raises(ValidationError):
        tocsin.list_runs(table_id, status="exploded", now=NOW)


def test_tick_limits_are_validated(tocsin: Tocsin) -> None:
    for kwargs in ({"table_limit": 0}, {"table_limit": 2001}, {"record_limit": 10001}):
        with pytest.raises(ValidationError):
            tocsin.tick(now=NOW, **kwargs)


def test_bad_table_input_is_a_400_never_a_database_error(tocsin: Tocsin) -> None:
    """A NUL in the name was a PostgreSQL DataError; a truthy string became requires_approval."""
    with pytest.raises(ValidationError) as nul:
        tocsin.create_table("chatroom", SCOPE_ID, "Ca\x00ses", {}, now=NOW)
    assert nul.value.detail == messages.BODY_NUL
    with pytest.raises(ValidationError) as surrogate:
        tocsin.create_table("chatroom", SCOPE_ID, "Ca\ud800ses", {}, now=NOW)
    assert surrogate.value.detail == messages.BODY_SURROGATE
    with pytest.raises(ValidationError) as approval:
        tocsin.create_table("chatroom", SCOPE_ID, "Cases", {}, requires_approval="no", now=NOW)  # type: ignore[arg-type]
    assert approval.value.detail == messages.REQUIRES_APPROVAL_NOT_BOOL


@pytest.mark.parametrize("value", [(1, 2), {1: "int key"}, [float("nan")], None])
def test_json_cells_must_be_plain_json(tocsin: Tocsin, value: Any) -> None:
    table_id = tocsin.create_table("user", SCOPE_ID, "All", ALL_TYPES, now=NOW)["id"]
    if value is None:  # nesting beyond 64 levels: refused, not a RecursionError
        value = []
        for _ in range(5000):
            value = [value]
    with pytest.raises(ValidationError) as caught:
        tocsin.insert_record(table_id, {"J": value}, now=NOW)
    assert caught.value.detail == messages.cell_invalid("J", "json")


def test_ids_that_cannot_exist_are_404(tocsin: Tocsin) -> None:
    """An int or NUL id reached PostgreSQL as a ProgrammingError/DataError (a 500)."""
    table_id = make_table(tocsin)
    for bad in (5, "x\x00", "x" * 65, "", "\ud800"):
        with pytest.raises(NotFound) as table:
            tocsin.get_table(bad)  # type: ignore[arg-type]
        assert table.value.detail == messages.TABLE_NOT_FOUND
        with pytest.raises(NotFound):
            tocsin.set_triggers(bad, [], now=NOW)  # type: ignore[arg-type]
        with pytest.raises(NotFound) as record:
            tocsin.update_record(table_id, bad, {"N": 1}, now=NOW)  # type: ignore[arg-type]
        assert record.value.detail == messages.RECORD_NOT_FOUND
        with pytest.raises(NotFound):
            tocsin.trash_record(table_id, bad, now=NOW)  # type: ignore[arg-type]
        with pytest.raises(NotFound):
            tocsin.get_record(table_id, bad)  # type: ignore[arg-type]
        with pytest.raises(NotFound) as run:
            tocsin.get_run(table_id, bad)  # type: ignore[arg-type]
        assert run.value.detail == messages.RUN_NOT_FOUND


@pytest.mark.parametrize(("skip", "limit"), [(2**63, 10), (True, 10), (0, True), (-1, 10)])
def test_page_bounds_are_a_400(tocsin: Tocsin, skip: Any, limit: Any) -> None:
    """A huge skip overflowed SQLite INTEGER / PostgreSQL bigint (an unhandled error)."""
    table_id = make_table(tocsin)
    with pytest.raises(ValidationError):
        tocsin.list_records(table_id, skip=skip, limit=limit)
    with pytest.raises(ValidationError):
        tocsin.list_runs(table_id, skip=skip, limit=limit, now=NOW)
