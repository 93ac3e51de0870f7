"""Row events (SPEC §3, §13): what a record write fires, in the write's own transaction.

- :func:`emit_row_event`: one pending run per row-event trigger that the event on a record fires
- :func:`table_updated`: the ``table_updated`` event compound triggers listen to
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from tocsin.core.model import Table, row_payload
from tocsin.engine.evaluate import row_event_triggers
from tocsin.engine.ids import uuid7s
from tocsin.store import runs as store_runs
from tocsin.store import trigger_events as store_events
from tocsin.store.tx import Tx


def emit_row_event(
    tx: Tx,
    table: Table,
    event: str,
    record: Mapping[str, Any],
    now: datetime,
    previous: Mapping[str, Any] | None = None,
) -> int:
    """Insert one pending run per row-event trigger that ``event`` on ``record`` fires (§3);
    ``previous``: the row before an update (``changed`` and ``was`` conditions, §13)."""
    data = record.get("data")
    row = dict(data) if isinstance(data, Mapping) else {}
    fired = row_event_triggers(table.triggers, event, row, previous)
    payload = row_payload(record)  # one row for every run: stored once (store.snapshots)
    new_runs = [
        store_runs.NewRun(
            id=run_id,
            table_id=table.id,
            trigger_id=str(trigger["id"]),
            record_id=str(record["id"]),
            source=event,
            clock=False,
            payload=payload,
            definition=trigger,
            identity=None,
            scheduled_for=None,
        )
        for trigger, run_id in zip(fired, uuid7s(now, len(fired)), strict=True)
    ]
    return len(store_runs.insert_runs(tx, runs_=new_runs, now=now))


def table_updated(tx: Tx, table_id: str, now: datetime) -> None:
    """The ``table_updated`` event of compound triggers (SPEC §13), in the write's transaction."""
    store_events.insert_events(tx, events=[("table_updated", table_id)], now=now)


__all__ = ["emit_row_event", "table_updated"]
