"""``sync_schedules``: the declared schedules of the registered workflows → schedule rows (§12).

Run on every start (``tocsin serve|scheduler|worker --app``), in one transaction:

- a declaration without a row → inserted, ``next_fire_at`` = the first instant after ``now``
  (``created``; anchored at sync time, never backfilled);
- ``cron`` or ``timezone`` changed → ``next_fire_at`` recomputed from ``now`` (``rescheduled``);
- only ``input_data`` / ``initial_state`` / ``request_context`` / ``metadata`` / ``overlap``
  changed → patched in place, next fire kept (``patched``);
- nothing changed → ``unchanged``;
- a declared row whose declaration left the code → deleted (``deleted``; its fires stay).

``paused`` and the fire history are never written here, so a redeploy never unpauses.
Imperative schedules (``source = 'imperative'``) are not touched.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from tocsin.store import schedules as store_schedules
from tocsin.store.tx import Store
from tocsin.workflows.definition import DeclaredSchedule
from tocsin.workflows.timing import next_fire_after

OUTCOMES = ("created", "rescheduled", "patched", "deleted", "unchanged")
PATCHABLE = (
    "input_data",
    "initial_state",
    "request_context",
    "metadata",
    "overlap",
    "catch_up",
    "max_catch_up",
)


def sync_schedules(
    store: Store, declared: Sequence[DeclaredSchedule], *, now: datetime
) -> dict[str, list[str]]:
    """Upsert ``declared`` and delete the declared rows that are gone; ids per outcome."""
    report: dict[str, list[str]] = {name: [] for name in OUTCOMES}
    wanted = {d.id: d for d in declared}
    with store.begin() as tx:
        stored = {row["id"]: row for row in store_schedules.declared_schedules(tx)}
        for sid, decl in wanted.items():
            row = stored.get(sid)
            if row is None:
                created = store_schedules.insert_schedule(tx, values=_new_row(decl, now))
                report["created" if created else "unchanged"].append(sid)
                continue
            outcome, values = _diff(decl, row, now)
            if values:
                store_schedules.update_schedule(tx, schedule_id=sid, values=values, now=now)
            report[outcome].append(sid)
        for sid in sorted(set(stored) - set(wanted)):
            store_schedules.delete_schedule(tx, schedule_id=sid)
            report["deleted"].append(sid)
    return report


def _payload(decl: DeclaredSchedule) -> dict[str, Any]:
    return {name: getattr(decl, name) for name in PATCHABLE}


def _new_row(decl: DeclaredSchedule, now: datetime) -> dict[str, Any]:
    return {
        "id": decl.id,
        "workflow_id": decl.workflow_id,
        "source": "declared",
        "cron": decl.cron,
        "timezone": decl.timezone,
        **_payload(decl),
        "paused": False,
        "next_fire_at": next_fire_after(decl.cron, decl.timezone, now),
        "last_fire_id": None,
        "created_at": now,
        "updated_at": now,
    }


def _diff(
    decl: DeclaredSchedule, row: Mapping[str, Any], now: datetime
) -> tuple[str, dict[str, Any]]:
    payload = {k: v for k, v in _payload(decl).items() if row.get(k) != v}
    if (decl.cron, decl.timezone) != (row["cron"], row["timezone"]):
        timing: dict[str, Any] = {"cron": decl.cron, "timezone": decl.timezone}
        timing["next_fire_at"] = next_fire_after(decl.cron, decl.timezone, now)
        return "rescheduled", {**timing, **payload}
    if payload:
        return "patched", payload
    return "unchanged", {}


__all__ = ["OUTCOMES", "sync_schedules"]
