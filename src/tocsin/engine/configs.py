"""``triggers.set``: persist a validated config and keep trigger state in step (SPEC §2–§5.2).

A full replace, validated before anything is written (``core.config.triggers.validate_triggers``:
ids, omit-when-default, the kind-change guard). Then each schedule trigger's durable state row:

====================================================  ==========================================
change                                                effect on the state row
====================================================  ==========================================
new schedule trigger                                  created; clock kinds anchored at ``now``
name, when, actions only                              untouched
clock kind: every_seconds, at, expression, timezone   re-anchored from ``now`` (history kept)
date kind: column or offset_minutes                   cursor restarts (the ledger is kept)
trigger removed                                       retired (state and ledger kept)
removed id added again                                revived with its ledger
====================================================  ==========================================

``next_due_at`` is kept current per trigger and per table (DESIGN §5): clock triggers store their
next window; date triggers are candidates until a tick has examined every record without a due
one (then: their earliest future fire instant) and again after any record write
(:func:`wake_date_triggers`) or config save; a table with nothing scheduled is never loaded.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

from tocsin import messages
from tocsin.core.config.adoption import adopt_ids
from tocsin.core.config.cells import is_plain_json
from tocsin.core.config.exposure import Saver, stamp_grants, without_grants
from tocsin.core.config.limits import ConfigLimits, check_triggers
from tocsin.core.config.triggers import validate_triggers
from tocsin.core.model import Table, TriggerState
from tocsin.core.schedules import windows
from tocsin.core.schedules.identity import definition_digest
from tocsin.core.schedules.spec import CLOCK_KINDS, ScheduleSpec, parse_schedule, schedule_to_dict
from tocsin.engine.evaluate import clock_next_due
from tocsin.errors import ConfigError, ValidationError
from tocsin.store import records as store_records
from tocsin.store import runs as store_runs
from tocsin.store import state as store_state
from tocsin.store.tx import Tx

# A date trigger may have due rows at any time: its table stays a tick candidate.
ALWAYS_DUE = datetime(1970, 1, 1, tzinfo=UTC)
# A table with nothing scheduled (row events only, or only broken triggers): never loaded.
NEVER_DUE = datetime(9999, 12, 31, tzinfo=UTC)


def schedule_hash(spec: ScheduleSpec) -> str:
    """A digest of the timing fields; a different digest means a re-anchoring edit (§5.2)."""
    canonical = json.dumps(schedule_to_dict(spec), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def has_triggers(table: Table) -> bool:
    """True when the table carries at least one trigger."""
    return bool(table.triggers)


def has_scp_rules(table: Table) -> bool:
    """True when the table carries channel SCP rules (§2)."""
    return bool(table.scp_rules)


def initial_next_due(
    spec: ScheduleSpec, anchor: datetime | None, last: datetime | None
) -> datetime:
    """The state's ``next_due_at``: the next window for clock kinds, always for date triggers."""
    if spec.kind not in CLOCK_KINDS or anchor is None:
        return ALWAYS_DUE
    return clock_next_due(spec, anchor=anchor, last_consumed=last) or NEVER_DUE


def check_triggers_config(
    tx: Tx,
    *,
    table: Table,
    raw: object,
    limits: ConfigLimits,
    new_id: Callable[[str], str],
    saver: Saver | None = None,
) -> list[dict[str, Any]]:
    """The normalized config ``raw`` would save on ``table``, or the error saving it would
    raise; writes nothing. The one check of every triggers save: ``PUT``, the one-trigger
    ``PATCH`` / ``DELETE``, IaC apply (every changed table before any is saved) and IaC plan
    (which reports what apply would refuse): the tenant limits and notify targets
    (``core.config.limits.check_triggers``), then ``validate_triggers`` and the rules that need the
    table or its stored state.

    Triggers and actions sent without ids adopt the ids of structurally equal stored ones
    (``core.config.adoption``): re-sending an unchanged config keeps every state row and ledger.
    ``saver``: the token of a tenant route (None: the trusted in-process caller); an action
    that reaches app code is refused (403) or stamped with its id (``core.config.exposure``).
    """
    check_triggers(raw, table, limits)
    columns: dict[str, str] = dict(table.columns)
    previous = table.triggers
    stored = previous if isinstance(previous, list) else None
    authored = without_grants(stored)  # adoption compares what authors see
    config = validate_triggers(adopt_ids(raw, authored), columns, new_id=new_id, previous=stored)
    _check_max_concurrent(config)
    if config and has_scp_rules(table):
        raise ValidationError(messages.SCP_WITH_TRIGGERS)
    if not is_plain_json(config):
        raise ValidationError(messages.not_plain_json("triggers"))
    specs = _specs(config, columns)
    _refuse_kind_change(tx, table_id=table.id, specs=specs)
    return stamp_grants(config, stored, saver)


MAX_CONCURRENT = 10_000


def _check_max_concurrent(config: list[dict[str, Any]]) -> None:
    """A row-event trigger's ``max_concurrent``: a whole number from 1 to 10,000 of its runs
    running at once (``store.runs`` claims no more); a schedule trigger has none (one active
    run already, SPEC §5.3)."""
    for trigger in config:
        value = trigger.get("max_concurrent")
        if value is None:
            continue
        tid = str(trigger["id"])
        if trigger.get("on") == "schedule":
            reason = messages.max_concurrent_on_clock(tid)
            raise ConfigError(messages.trigger_invalid(reason), code="trigger_invalid")
        if isinstance(value, bool) or not isinstance(value, int) or not 0 < value <= MAX_CONCURRENT:
            reason = messages.max_concurrent_not_count(tid, value)
            raise ConfigError(messages.trigger_invalid(reason), code="trigger_invalid")


def _specs(config: list[dict[str, Any]], columns: Mapping[str, str]) -> dict[str, ScheduleSpec]:
    return {t["id"]: parse_schedule(t["schedule"], columns) for t in config if _is_schedule(t)}


def set_triggers_config(
    tx: Tx,
    *,
    table: Table,
    raw: object,
    now: datetime,
    limits: ConfigLimits,
    new_id: Callable[[str], str],
    saver: Saver | None = None,
) -> list[dict[str, Any]]:
    """Validate (:func:`check_triggers_config`), persist and re-sync trigger state; returns
    the normalized config with ids, as authors see it (``core.config.exposure.without_grants``)."""
    config = check_triggers_config(
        tx, table=table, raw=raw, limits=limits, new_id=new_id, saver=saver
    )
    table_id = table.id
    specs = _specs(config, dict(table.columns))
    store_records.set_table_triggers(tx, table_id=table_id, triggers=config or None, now=now)
    sync_states(tx, table_id=table_id, specs=specs, now=now)
    freeze_definitions(tx, table_id=table_id, config=config)
    refresh_table_next_due(tx, table_id=table_id)
    return authored_config(config)


def authored_config(stored: object) -> list[dict[str, Any]]:
    """A stored triggers config as authors see it and send it back: a copy without the token
    ids of ``core.config.exposure`` (``[]`` when none)."""
    shown = without_grants(stored)
    return list(shown) if isinstance(shown, list) else []


def freeze_definitions(tx: Tx, *, table_id: str, config: list[dict[str, Any]]) -> None:
    """Store each schedule trigger's definition (``trigger_definitions``) and point its state
    row at it: the definition the runs it fires freeze, by hash (SPEC §8, §9.3)."""
    found = {t["id"]: (definition_digest(t), t) for t in config if _is_schedule(t)}
    store_runs.put_definitions(tx, definitions=dict(found.values()))
    hashes = {tid: digest for tid, (digest, _) in found.items()}
    store_state.set_definition_hashes(tx, table_id=table_id, hashes=hashes)


def _is_schedule(trigger: Mapping[str, Any]) -> bool:
    return trigger.get("on") == "schedule" and isinstance(trigger.get("schedule"), Mapping)


def _refuse_kind_change(tx: Tx, *, table_id: str, specs: Mapping[str, ScheduleSpec]) -> None:
    """400 when a retired id of this table comes back as a new kind (a trigger id is unique
    within its table only: another table's state for the same id is not looked at).

    (A kind change against the *current* config is refused by ``validate_triggers``.)
    """
    states = store_state.get_states(tx, table_id=table_id) if specs else {}
    for trigger_id, spec in specs.items():
        state = states.get(trigger_id)
        if state is not None and state.kind != spec.kind:
            raise ConfigError(
                messages.schedule_kind_change(trigger_id),
                code="schedule_kind_change_requires_new_trigger_id",
            )


def sync_states(tx: Tx, *, table_id: str, specs: Mapping[str, ScheduleSpec], now: datetime) -> None:
    """Create, keep, re-anchor, revive or retire each state row after a config change (§5.2)."""
    states = store_state.get_states(tx, table_id=table_id)
    for trigger_id, spec in specs.items():
        _sync_one(tx, table_id, trigger_id, spec, states.get(trigger_id), now)
    store_state.retire_states(tx, table_id=table_id, keep_ids=specs.keys(), now=now)


def _sync_one(
    tx: Tx,
    table_id: str,
    trigger_id: str,
    spec: ScheduleSpec,
    state: TriggerState | None,
    now: datetime,
) -> None:
    digest = schedule_hash(spec)
    clock = spec.kind in CLOCK_KINDS
    if state is None:
        anchor = windows.initial_anchor(spec, now) if clock else None
        store_state.upsert_state(
            tx,
            trigger_id=trigger_id,
            table_id=table_id,
            kind=spec.kind,
            anchor=anchor,
            schedule_hash=digest,
            now=now,
            next_due_at=initial_next_due(spec, anchor, None),
        )
        return
    if state.retired:
        store_state.revive_state(tx, table_id=table_id, trigger_id=trigger_id, now=now)
    last = state.last_consumed
    if state.schedule_hash != digest:
        anchor = windows.initial_anchor(spec, now) if clock else None
        store_state.reanchor_state(
            tx,
            table_id=table_id,
            trigger_id=trigger_id,
            anchor=anchor,
            schedule_hash=digest,
            now=now,
            next_due_at=initial_next_due(spec, anchor, last),
        )
    elif state.retired or not clock:  # a date trigger's `when` may have changed: re-read
        next_due = initial_next_due(spec, state.anchor, last)
        store_state.set_next_dues(tx, next_dues=[(table_id, trigger_id, next_due)])


def _is_date_trigger(trigger: object) -> bool:
    if not isinstance(trigger, Mapping) or trigger.get("on") != "schedule":
        return False
    schedule = trigger.get("schedule")
    return isinstance(schedule, Mapping) and schedule.get("type") == "date_column_reached"


def wake_date_triggers(tx: Tx, *, table: Table) -> None:
    """A record was written (created, updated, restored): the table's date triggers may have due
    rows again, so they and the table become tick candidates (``ALWAYS_DUE``).

    Call it in the write's transaction, after the write: on PostgreSQL the UPDATE of the table
    row waits for a tick holding it, then overrides the ``next_due_at`` that tick computed
    without seeing this write.
    """
    stored = table.triggers
    if not isinstance(stored, list) or not any(_is_date_trigger(t) for t in stored):
        return
    table_id = table.id
    store_records.lower_table_next_due(tx, table_id=table_id, next_due_at=ALWAYS_DUE)
    store_state.lower_next_due(
        tx, table_id=table_id, kind="date_column_reached", next_due_at=ALWAYS_DUE
    )


def refresh_table_next_due(tx: Tx, *, table_id: str) -> datetime:
    """The table's ``next_due_at`` = the earliest of its live, unpaused states' (NEVER_DUE when
    none)."""
    states = store_state.get_states(tx, table_id=table_id).values()
    dues = [s.next_due_at for s in states if not (s.retired or s.paused or s.next_due_at is None)]
    next_due = min(dues, default=NEVER_DUE)
    store_records.set_table_next_due(tx, table_id=table_id, next_due_at=next_due)
    return next_due


def set_scp_rules(tx: Tx, *, table: Table, rules: object, now: datetime) -> list[Any] | None:
    """Replace the table's channel SCP rules; 400 while the table has triggers (§2)."""
    if rules is not None and not isinstance(rules, list):
        raise ValidationError(messages.SCP_RULES_NOT_LIST)
    if not is_plain_json(rules):
        raise ValidationError(messages.not_plain_json("scp_rules"))
    if rules and has_triggers(table):
        raise ValidationError(messages.SCP_WITH_TRIGGERS)
    stored = list(rules) if rules else None
    store_records.set_table_scp_rules(tx, table_id=table.id, scp_rules=stored, now=now)
    return stored


__all__ = [
    "ALWAYS_DUE",
    "NEVER_DUE",
    "authored_config",
    "check_triggers_config",
    "freeze_definitions",
    "has_scp_rules",
    "has_triggers",
    "refresh_table_next_due",
    "schedule_hash",
    "set_scp_rules",
    "set_triggers_config",
    "sync_states",
    "wake_date_triggers",
]
