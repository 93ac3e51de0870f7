"""Helpers for the engine tests: tables, triggers and run bookkeeping through the facade.

Time is explicit everywhere: ``NOW`` and offsets from it; nothing sleeps.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from tocsin.service import Tocsin
from tocsin.store import records as store_records
from tocsin.store import runs as store_runs

NOW = datetime(2026, 8, 27, 5, 2, 13, tzinfo=UTC)
CHATROOM = "11111111-1111-4111-8111-111111111111"
COLUMNS = {"Due": "datetime", "Day": "date", "Status": "text", "N": "number"}


def minutes(n: float) -> timedelta:
    return timedelta(minutes=n)


def hours(n: float) -> timedelta:
    return timedelta(hours=n)


def make_table(t: Tocsin, columns: dict[str, str] | None = None, *, now: datetime = NOW) -> str:
    """A fresh chatroom table; returns its id."""
    table = t.create_table(
        "chatroom", str(uuid.uuid4()), "Cases", columns or dict(COLUMNS), now=now
    )
    return str(table["id"])


def notify(message: str = "hello") -> list[dict[str, Any]]:
    return [{"type": "notify", "message": message}]  # to the table's own chatroom


def date_trigger(
    column: str = "Due", offset: int | None = None, when: list[Any] | None = None, **extra: Any
) -> dict[str, Any]:
    schedule: dict[str, Any] = {"type": "date_column_reached", "column": column}
    if offset is not None:
        schedule["offset_minutes"] = offset
    trigger: dict[str, Any] = {"name": "due", "on": "schedule", "schedule": schedule}
    if when is not None:
        trigger["when"] = when
    trigger["actions"] = notify()
    trigger.update(extra)
    return trigger


def clock_trigger(schedule: dict[str, Any], **extra: Any) -> dict[str, Any]:
    trigger: dict[str, Any] = {"name": "clock", "on": "schedule", "schedule": schedule}
    trigger["actions"] = notify()
    trigger.update(extra)
    return trigger


def interval(every: int = 3600, **extra: Any) -> dict[str, Any]:
    return clock_trigger({"type": "interval", "every_seconds": every}, **extra)


def runs_of(t: Tocsin, table_id: str, trigger_id: str | None = None) -> list[dict[str, Any]]:
    """Every run of a table (oldest first), optionally of one trigger."""
    items = t.list_runs(table_id, limit=500, now=NOW)["items"]
    items = [r for r in items if trigger_id is None or r["trigger_id"] == trigger_id]
    return sorted(items, key=lambda r: (r["created_at"], r["scheduled_for"] or NOW, r["id"]))


def finish(t: Tocsin, run_id: str, status: str, *, now: datetime) -> None:
    """Claim a pending run and end it ``done`` or ``failed`` (what a worker would do)."""
    with t.store.begin() as tx:
        claimed = store_runs.claim_run(tx, run_id=run_id, now=now)
        assert claimed is not None
        error = "boom" if status == "failed" else None
        row = store_runs.FinishRow(run_id, claimed.attempts, status, now, error=error)
        assert store_runs.finish_runs(tx, rows=[row]) == {run_id}


def finish_all(t: Tocsin, table_id: str, status: str = "done", *, now: datetime) -> None:
    for run in runs_of(t, table_id):
        if run["status"] == "pending":
            finish(t, run["id"], status, now=now)


def write_raw_triggers(t: Tocsin, table_id: str, triggers: list[Any], *, now: datetime) -> None:
    """Store a triggers config as is, bypassing validation (a broken stored config)."""
    with t.store.begin() as tx:
        store_records.set_table_triggers(tx, table_id=table_id, triggers=triggers, now=now)


def write_raw_cells(
    t: Tocsin, table_id: str, record_id: str, data: dict[str, Any], *, now: datetime
) -> None:
    """Overwrite a record's cells without validation (cells a tick must survive)."""
    with t.store.begin() as tx:
        store_records.update_record_data(
            tx, table_id=table_id, record_id=record_id, data=data, now=now
        )
