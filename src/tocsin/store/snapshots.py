"""Row snapshots: the record a batch of runs was created with, stored once (SPEC §8).

A write that fires many row-event triggers (or a tick that fires many date triggers on one
record) creates many runs from one row. Each run used to carry its own copy of that row in
``runs.payload``: a table with 100 ``created`` triggers stored every 255 KB record 100 times.
Now the row goes once into ``row_snapshots`` and the runs name it by ``runs.snapshot_id``;
:data:`PAYLOAD` reads a run's payload from there (or from ``runs.payload`` for a run without a
snapshot: a recordless run's ``{}``).

Nothing deletes runs today. Whatever comes to delete them must delete the snapshots no run
names any more in the same transaction (``runs.snapshot_id`` is not a foreign key).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from sqlalchemy import func, insert, select, type_coerce

from tocsin.store.schema import row_snapshots, runs
from tocsin.store.tx import Tx

# a run's payload: its snapshot's, else its own column's
PAYLOAD = type_coerce(
    func.coalesce(
        select(row_snapshots.c.payload)
        .where(row_snapshots.c.id == runs.c.snapshot_id)
        .scalar_subquery(),
        runs.c.payload,
    ),
    runs.c.payload.type,
).label("payload")


class SnapshotBatch:
    """The row snapshots of one insert of runs: each distinct row once, named by the id of the
    first run created with it; only those of the runs actually inserted are stored.

    Two runs share a snapshot when they name the same record and carry the same payload (the
    same object, or an equal one: a write's triggers, a tick's date triggers on one record)."""

    def __init__(self) -> None:
        self._by_record: dict[str | None, list[tuple[str, Mapping[str, Any]]]] = {}
        self._of_run: dict[str, str] = {}

    def add(self, run_id: str, record_id: str | None, payload: Mapping[str, Any]) -> str | None:
        """The snapshot id of run ``run_id`` (None for an empty payload: the run keeps ``{}``)."""
        if not payload:
            return None
        known = self._by_record.setdefault(record_id, [])
        same = (sid for sid, row in known if row is payload or row == payload)
        snapshot_id = next(same, None)
        if snapshot_id is None:
            snapshot_id = run_id
            known.append((snapshot_id, payload))
        self._of_run[run_id] = snapshot_id
        return snapshot_id

    def store(self, tx: Tx, *, inserted: Iterable[str]) -> None:
        """Store the snapshots the ``inserted`` runs name (a refused run's row is not kept)."""
        wanted = {self._of_run[r] for r in inserted if r in self._of_run}
        rows = [
            {"id": snapshot_id, "payload": dict(row)}
            for known in self._by_record.values()
            for snapshot_id, row in known
            if snapshot_id in wanted
        ]
        if rows:
            tx.conn.execute(insert(row_snapshots), rows)
