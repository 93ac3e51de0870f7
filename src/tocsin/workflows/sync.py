"""``sync_schedules``: the declared schedules of the registered workflows → schedule rows (§12).

Run on every start (``tocsin serve|scheduler|worker --app``), in one transaction:

- a declaration without a row → inserted, ``next_fire_at`` = the first instant after ``now``
  (``created``; anchored at sync time, never backfilled);
- ``cron``, ``timezone`` or the compound trigger changed → ``next_fire_at`` recomputed from
  ``now``, latches reset (``rescheduled``);
- only ``input_data`` / ``initial_state`` / ``request_context`` / ``metadata`` / ``overlap``
  changed → patched in place, next fire kept (``patched``);
- nothing changed → ``unchanged``;
- a declared row whose declaration left the code → deleted (``deleted``; its fires stay).

``paused_at`` and the fire history are never written here, so a redeploy never unpauses.
Imperative schedules (``source = 'imperative'``) are not touched.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from datetime import datetime
from typing import Any

from tocsin import messages
from tocsin.core.model import WorkflowSchedule
from tocsin.engine.schedule_rows import next_fire_of, subjects_of
from tocsin.errors import ConfigError
from tocsin.store import records as store_records
from tocsin.store import schedules as store_schedules
from tocsin.store import trigger_events as store_events
from tocsin.store.tx import Store, Tx
from tocsin.workflows.definition import DeclaredSchedule, Workflow
from tocsin.workflows.hashing import definition_hash

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
    store: Store,
    declared: Sequence[DeclaredSchedule],
    *,
    now: datetime,
    workflows: Sequence[Workflow] | None = None,
) -> dict[str, list[str]]:
    """Upsert ``declared`` and delete the declared rows that are gone; ids per outcome.

    With ``workflows`` (the registry), every id a compound trigger names is checked first
    (unknown table, workflow or schedule: ConfigError, nothing written), and a workflow whose
    definition hash changed since the last sync emits ``definition_changed`` (SPEC §13).
    """
    report: dict[str, list[str]] = {name: [] for name in OUTCOMES}
    wanted = {d.id: d for d in declared}
    with store.begin() as tx:
        if workflows is not None:
            check_trigger_ids(tx, declared, {wf.id for wf in workflows})
            _definitions(tx, workflows, now)
        stored = {row.id: row for row in store_schedules.declared_schedules(tx)}
        for sid, decl in wanted.items():
            row = stored.get(sid)
            if row is None:
                created = store_schedules.insert_schedule(tx, values=schedule_row(decl, now))
                report["created" if created else "unchanged"].append(sid)
                continue
            outcome, values = schedule_changes(decl, row, now)
            if values:
                store_schedules.update_schedule(tx, schedule_id=sid, values=values, now=now)
            report[outcome].append(sid)
        for sid in sorted(set(stored) - set(wanted)):
            store_schedules.delete_schedule(tx, schedule_id=sid)
            report["deleted"].append(sid)
    return report


def _payload(decl: DeclaredSchedule) -> dict[str, Any]:
    return {name: getattr(decl, name) for name in PATCHABLE}


def check_trigger_ids(
    tx: Tx, declared: Sequence[DeclaredSchedule], workflow_ids: Collection[str]
) -> None:
    """Every table, workflow and schedule a compound trigger names must exist (ConfigError)."""
    schedule_ids = {d.id for d in declared}
    for decl in declared:
        if decl.trigger is None:
            continue
        for kind, subject in sorted(subjects_of(decl.trigger)):
            if kind == "table_updated":
                if store_records.get_table(tx, table_id=subject) is None:
                    raise _unknown(messages.trigger_table_unknown(decl.id, subject))
            elif kind == "schedule_succeeded":
                known = subject in schedule_ids
                if not known and not store_events.schedule_ids_exist(tx, ids=[subject]):
                    raise _unknown(messages.trigger_schedule_unknown(decl.id, subject))
            elif subject not in workflow_ids:
                raise _unknown(messages.trigger_workflow_unknown(decl.id, kind, subject))


def _unknown(text: str) -> ConfigError:
    return ConfigError(text, code="trigger_unknown_id")


def _definitions(tx: Tx, workflows: Sequence[Workflow], now: datetime) -> None:
    """Store each workflow's definition hash; a changed one emits ``definition_changed``."""
    digests = {wf.id: definition_hash(wf) for wf in workflows}
    stored = store_events.definition_hashes(tx, workflow_ids=digests)
    changed = [wid for wid, d in sorted(digests.items()) if stored.get(wid, d) != d]
    for wid, digest in sorted(digests.items()):
        if stored.get(wid) != digest:
            store_events.put_definition_hash(tx, workflow_id=wid, digest=digest, now=now)
    store_events.insert_events(tx, events=[("definition_changed", w) for w in changed], now=now)


def schedule_row(
    decl: DeclaredSchedule, now: datetime, *, source: str = "declared"
) -> dict[str, Any]:
    """The row of a new schedule: a declared one (its id ``wf_…``) or an imperative one
    (``source="imperative"``, its id ``sch_…``), first due at its next instant after ``now``."""
    return {
        "id": decl.id,
        "workflow_id": decl.workflow_id,
        "source": source,
        "cron": decl.cron,
        "timezone": decl.timezone,
        **_payload(decl),
        "paused_at": None,
        "next_fire_at": next_fire_of(decl.cron, decl.timezone, decl.trigger, now),
        "last_fire_id": None,
        "trigger_tree": decl.trigger,
        "latches": None,
        "evaluated_at": now,
        "created_at": now,
        "updated_at": now,
    }


def schedule_changes(
    decl: DeclaredSchedule, row: WorkflowSchedule, now: datetime
) -> tuple[str, dict[str, Any]]:
    payload = {k: v for k, v in _payload(decl).items() if getattr(row, k) != v}
    old = (row.cron, row.timezone, row.trigger_tree)
    if (decl.cron, decl.timezone, decl.trigger) != old:
        timing: dict[str, Any] = {"cron": decl.cron, "timezone": decl.timezone}
        timing["next_fire_at"] = next_fire_of(decl.cron, decl.timezone, decl.trigger, now)
        # a new tree starts with no latches, its time triggers evaluated from now
        timing.update(trigger_tree=decl.trigger, latches=None, evaluated_at=now)
        return "rescheduled", {**timing, **payload}
    if payload:
        return "patched", payload
    return "unchanged", {}


__all__ = [
    "OUTCOMES",
    "check_trigger_ids",
    "schedule_changes",
    "schedule_row",
    "sync_schedules",
]
