"""Execution-test helpers: a fixed ``NOW``, tables with triggers, and runs to execute.

Tables and runs are created through the store (``insert_table``, ``set_table_triggers``,
``insert_run``) so each test states exactly the run it executes; what happens to the run is then
observed through the facade (``work``, ``get_run``-equivalent reads, ``retry_run``…). The
helpers answer the facade's dict shapes (``Table.as_dict()`` / ``Run.as_dict()``).
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from tocsin.service import Tocsin
from tocsin.store.records import insert_records, insert_table, set_table_trashed, set_table_triggers
from tocsin.store.runs import get_run, insert_run

NOW = datetime(2026, 8, 27, 5, 2, 13, tzinfo=UTC)
LATER = NOW + timedelta(seconds=30)
STALE = NOW + timedelta(seconds=301)


def new_id() -> str:
    return str(uuid.uuid4())


def trigger(*actions: dict[str, Any], on: str = "created", **extra: Any) -> dict[str, Any]:
    """A trigger dict with ids on every action (``act_1``, ``act_2``… unless given)."""
    acts = [{"id": f"act_{i + 1}", **a} for i, a in enumerate(actions)]
    return {"id": f"trg_{uuid.uuid4().hex[:12]}", "name": "t", "on": on, "actions": acts, **extra}


def make_table(
    t: Tocsin,
    *triggers: dict[str, Any],
    columns: dict[str, str] | None = None,
    scope: str = "chatroom",
    requires_approval: bool = False,
) -> dict[str, Any]:
    with t.store.begin() as tx:
        table = insert_table(
            tx,
            id=new_id(),
            scope=scope,
            scope_id=new_id(),
            name="Cases",
            columns=columns or {"Title": "text", "Status": "text", "N": "number"},
            requires_approval=requires_approval,
            now=NOW,
        )
        if triggers:
            set_table_triggers(tx, table_id=table.id, triggers=list(triggers), now=NOW)
    return {**table.as_dict(), "triggers": list(triggers) or None}


def add_record(t: Tocsin, table_id: str, data: dict[str, Any]) -> str:
    with t.store.begin() as tx:
        rows = insert_records(tx, table_id=table_id, rows=[{"id": new_id(), "data": data}], now=NOW)
    return str(rows[0]["id"])


def make_run(
    t: Tocsin,
    table: dict[str, Any],
    trg: dict[str, Any],
    *,
    record: tuple[str, dict[str, Any]] | None = None,
    source: str = "created",
    frozen: bool | None = None,
    scheduled_for: datetime | None = None,
    now: datetime = NOW,
) -> dict[str, Any]:
    """Insert a pending run of ``trg``; schedule runs freeze ``trg`` unless ``frozen=False``."""
    clock = source == "schedule" and record is None
    freeze = source == "schedule" if frozen is None else frozen
    with t.store.begin() as tx:
        run = insert_run(
            tx,
            id=new_id(),
            table_id=table["id"],
            trigger_id=trg["id"],
            record_id=record[0] if record else None,
            source=source,
            clock=clock,
            payload={"id": record[0], "data": record[1]} if record else {},
            definition=trg if freeze else None,
            identity=None,
            scheduled_for=scheduled_for,
            now=now,
        )
    assert run is not None
    return run.as_dict()


def read_run(t: Tocsin, run_id: str) -> dict[str, Any]:
    with t.store.read() as tx:
        run = get_run(tx, run_id=run_id)
    assert run is not None
    return run.as_dict()


def trash_table(t: Tocsin, table_id: str) -> None:
    with t.store.begin() as tx:
        set_table_trashed(tx, table_id=table_id, trashed=True, now=NOW)


def set_triggers(t: Tocsin, table_id: str, *triggers: dict[str, Any]) -> None:
    with t.store.begin() as tx:
        set_table_triggers(tx, table_id=table_id, triggers=list(triggers), now=NOW)


def no_wait(t: Tocsin) -> list[float]:
    """Make the in-run backoff record its delays instead of sleeping; returns the list."""
    slept: list[float] = []
    t.configure_retries(sleep=slept.append, jitter=lambda lo, hi: hi)
    return slept
