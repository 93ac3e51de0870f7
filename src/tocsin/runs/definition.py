"""Which trigger definition a run executes, and with which row (SPEC §8, §9.3).

- Row-event runs (``created|updated|deleted|restored``) re-read the *current* trigger config of
  their table at every attempt, by trigger id: editing the trigger changes what a retry does.
- Schedule runs execute the definition frozen into the run at creation: editing or deleting the
  live trigger does not change or fail them. Schedule runs without a frozen definition (legacy)
  behave like row-event runs.
- Either way the table must still exist and be live: a missing or trashed table (or, for live
  definitions, a trigger id no longer in the config) fails the run with exactly
  ``trigger config no longer exists``.
- A frozen definition is re-validated against the table's *current* schema at every attempt
  (:func:`frozen_problem`): a column it names that was dropped or retyped since fails the run with
  the same text saving that trigger would get now.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tocsin.core.config.exposure import without_grants
from tocsin.core.config.triggers import validate_triggers
from tocsin.core.model import Run, Table
from tocsin.errors import ConfigError

RecordSnapshot = Mapping[str, Any]


def live_trigger(table: Table, trigger_id: str) -> dict[str, Any] | None:
    """The trigger ``trigger_id`` of the table's current config, or None."""
    for trigger in table.triggers or []:
        if isinstance(trigger, Mapping) and trigger.get("id") == trigger_id:
            return dict(trigger)
    return None


def resolve_definition(run: Run, table: Table | None) -> dict[str, Any] | None:
    """The trigger definition ``run`` executes now; None when its config no longer exists."""
    if table is None or table.trashed:
        return None
    frozen = run.definition
    if run.source == "schedule" and isinstance(frozen, Mapping):
        return dict(frozen)
    return live_trigger(table, run.trigger_id)


def frozen_problem(run: Run, table: Table) -> str | None:
    """Why the run's frozen definition is no longer valid for its table's schema, or None.

    Only frozen (schedule) definitions are checked: live ones were validated when they were set.
    """
    frozen = run.definition
    if run.source != "schedule" or not isinstance(frozen, Mapping):
        return None
    try:
        authored = without_grants([frozen])  # the token id it was saved by is the server's
        validate_triggers(authored, table.columns or {}, new_id=_no_new_ids, previous=None)
    except ConfigError as exc:
        return exc.detail
    return None


def _no_new_ids(prefix: str) -> str:
    return f"{prefix}_frozen"  # a frozen definition already carries every id


def row_snapshot(run: Run) -> RecordSnapshot | None:
    """The record's column values the run was created with; None for recordless runs.

    The payload is either the cells themselves or a record dict holding them under ``data``.
    """
    if run.record_id is None:
        return None
    payload = run.payload or {}
    if not isinstance(payload, Mapping):
        return {}
    data = payload.get("data")
    return dict(data) if isinstance(data, Mapping) else dict(payload)


def action_list(definition: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The definition's actions (non-object entries become empty actions, which then fail)."""
    actions = definition.get("actions") or []
    if not isinstance(actions, list):
        return []
    return [dict(a) if isinstance(a, Mapping) else {} for a in actions]
