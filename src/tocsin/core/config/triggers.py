"""Triggers config: full validation (SPEC §3–§5.2) and the preview's invalid-arm codes (§7).

``validate_triggers`` returns the normalised config: every trigger and action has an id (kept
when sent, else ``new_id("trg")`` / ``new_id("act")``), schedules are omit-when-default, and
unknown keys anywhere are refused. Errors are ``ConfigError`` with a stable ``code``: the §7
codes where one applies, plus ``trigger_invalid``, ``action_invalid``, ``cron_row_tokens`` and
``schedule_kind_change_requires_new_trigger_id`` for problems the preview never shows.

``classify_stored`` never raises: it lists the §7 codes that make a *stored* schedule trigger
unusable. ``when`` is checked only where it is evaluated (date_column_reached) or forbidden
(cron); on interval/daily it is ignored (the preview warns instead).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any, TypeGuard

from tocsin import messages
from tocsin.core.config.action_checks import table_problem
from tocsin.core.config.action_fields import ACTION_FIELDS, ACTION_TYPES, FIELD_CHECKS
from tocsin.core.config.predicates import validate_changed, validate_when
from tocsin.core.config.templates import has_row_tokens
from tocsin.core.schedules.retry import validate_retry
from tocsin.core.schedules.spec import (
    CronSchedule,
    Daily,
    ScheduleSpec,
    normalize_schedule,
    parse_schedule,
    schedule_problems,
    schedule_to_dict,
)
from tocsin.errors import ConfigError

EVENTS = ("created", "updated", "deleted", "restored", "schedule")
_TRIGGER_KEYS: tuple[str, ...] = ("id", "name", "on", "changed", "when", "schedule", "actions")
_TRIGGER_KEYS += ("retry", "on_failure")  # retry policy and failure alerts
_TRIGGER_KEYS += ("max_concurrent",)  # row events: runs running at once (engine.configs checks)
_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:\-]{0,63}", re.ASCII)


NewId = Callable[[str], str]


def validate_triggers(
    raw: object,
    columns: Mapping[str, str],
    *,
    new_id: NewId,
    previous: list[dict[str, Any]] | None,
) -> list[dict[str, Any]]:
    """The normalised triggers config, or ``ConfigError`` for the first problem."""
    if not isinstance(raw, list):
        raise _trigger_error(messages.TRIGGERS_NOT_LIST)
    old_kinds = {
        t["id"]: stored_schedule_type(t)
        for t in previous or []
        if isinstance(t, Mapping) and isinstance(t.get("id"), str)
    }
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    for item in raw:
        trigger = _validate_trigger(item, columns, new_id)
        trigger_id = trigger["id"]
        if trigger_id in seen:
            detail = messages.trigger_id_duplicate(trigger_id)
            raise ConfigError(detail, code="trigger_id_duplicate")
        seen.add(trigger_id)
        old, new = old_kinds.get(trigger_id), stored_schedule_type(trigger)
        if old is not None and new is not None and old != new:
            raise ConfigError(
                messages.schedule_kind_change(trigger_id),
                code="schedule_kind_change_requires_new_trigger_id",
            )
        out.append(trigger)
    return out


def _validate_trigger(item: object, columns: Mapping[str, str], new_id: NewId) -> dict[str, Any]:
    if not isinstance(item, Mapping):
        raise _trigger_error(messages.TRIGGER_NOT_OBJECT)
    _refuse_unknown(item, _TRIGGER_KEYS, "trigger", _trigger_error)
    trigger_id = _given_or_new_id(item.get("id"), "trg", new_id, _trigger_error)
    if "name" in item and not isinstance(item["name"], str):
        raise _trigger_error(messages.TRIGGER_NAME_NOT_STRING)
    on = item.get("on")
    if on not in EVENTS:
        raise _trigger_error(messages.trigger_on_invalid(EVENTS, on))
    schedule: ScheduleSpec | None = None
    if on == "schedule":
        schedule = parse_schedule(item.get("schedule"), columns)
    elif item.get("schedule") is not None:
        raise _trigger_error(messages.SCHEDULE_ONLY_ON_SCHEDULE)
    if isinstance(schedule, CronSchedule) and item.get("when"):
        raise ConfigError(messages.CRON_WHEN_NOT_ALLOWED, code="cron_when_not_allowed")
    changed = validate_changed(on, item.get("changed"), columns)
    when = validate_when(item.get("when"), columns, previous=on == "updated")
    actions = _validate_actions(item.get("actions"), new_id, columns, what="actions")
    alerts = None
    if item.get("on_failure") is not None:
        alerts = _validate_actions(item["on_failure"], new_id, columns, what="on_failure")
        _refuse_shared_ids(actions, alerts)
    _check_schedule_actions(schedule, actions + (alerts or []))
    out: dict[str, Any] = {"id": trigger_id}
    if "name" in item:
        out["name"] = item["name"]
    out["on"] = on
    if changed is not None:
        out["changed"] = changed
    if "when" in item and item["when"] is not None:
        out["when"] = when
    if schedule is not None:
        out["schedule"] = schedule_to_dict(schedule)
    out["actions"] = actions
    if item.get("retry") is not None:
        out["retry"] = validate_retry(item["retry"])
    if item.get("max_concurrent") is not None:
        out["max_concurrent"] = item["max_concurrent"]
    if alerts is not None:
        out["on_failure"] = alerts
    return out


def _refuse_shared_ids(actions: list[dict[str, Any]], alerts: list[dict[str, Any]]) -> None:
    shared = {a["id"] for a in actions} & {a["id"] for a in alerts}
    if shared:
        raise _action_error(messages.action_id_shared(min(shared)))


def _check_schedule_actions(schedule: ScheduleSpec | None, actions: list[dict[str, Any]]) -> None:
    if isinstance(schedule, CronSchedule) and has_row_tokens(actions):
        raise ConfigError(messages.CRON_ROW_TOKENS, code="cron_row_tokens")
    slots = any(a["type"] == "materialize_slots" for a in actions)
    if slots and not isinstance(schedule, Daily):
        raise ConfigError(messages.MATERIALIZE_SLOTS_DAILY_ONLY, code="action_invalid")


def _validate_actions(
    raw: object, new_id: NewId, columns: Mapping[str, str], *, what: str
) -> list[dict[str, Any]]:
    if not isinstance(raw, list):
        raise _action_error(messages.actions_not_list(what))
    if not raw:
        raise _action_error(messages.actions_empty(what))
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    for item in raw:
        action = _validate_action(item, new_id)
        if (problem := table_problem(action, columns)) is not None:
            raise _action_error(problem)
        if action["id"] in seen:
            raise _action_error(messages.action_id_repeated(action["id"]))
        seen.add(action["id"])
        out.append(action)
    return out


def validate_alerts(raw: object) -> list[dict[str, Any]]:
    """A code-declared ``on_failure`` list (a workflow's, a schedule's, a lane's): the same
    checks as a trigger's alerts, recordless (no ``$row`` column exists), each action without
    an ``id`` given ``on-failure-<n>`` (its position, from 1)."""
    positions = iter(range(1, 10_000))
    return _validate_actions(raw, lambda _: f"on-failure-{next(positions)}", {}, what="on_failure")


def _validate_action(item: object, new_id: NewId) -> dict[str, Any]:
    if not isinstance(item, Mapping):
        raise _action_error(messages.ACTION_NOT_OBJECT)
    kind = item.get("type")
    if not isinstance(kind, str) or kind not in ACTION_FIELDS:
        raise _action_error(messages.action_type_unknown(kind, ACTION_TYPES))
    required, optional = ACTION_FIELDS[kind]
    _refuse_unknown(item, ("id", "type", *required, *optional), f"{kind} action", _action_error)
    out: dict[str, Any] = {"id": _given_or_new_id(item.get("id"), "act", new_id, _action_error)}
    out["type"] = kind
    for field, check in {**required, **optional}.items():
        if field not in item:
            if field in required:
                raise _action_error(messages.action_field_missing(kind, field))
            continue
        ok, expected = FIELD_CHECKS[check]
        if not ok(item[field]):
            raise _action_error(messages.action_field_invalid(kind, field, expected))
        out[field] = item[field]
    return out


def well_formed_id(value: object) -> TypeGuard[str]:
    """Whether ``value`` is a usable trigger or action id (1-64 letters, digits, ``_-.:``)."""
    return isinstance(value, str) and _ID.fullmatch(value) is not None


def _given_or_new_id(
    value: object, prefix: str, new_id: NewId, error: Callable[[str], ConfigError]
) -> str:
    if value is None or value == "":
        return new_id(prefix)
    if not well_formed_id(value):
        raise error(messages.config_id_invalid(value))
    return value


def _refuse_unknown(
    item: Mapping[Any, Any],
    allowed: tuple[str, ...],
    what: str,
    error: Callable[[str], ConfigError],
) -> None:
    unknown = sorted(str(k) for k in item if k not in allowed)
    if unknown:
        raise error(messages.config_keys_unknown(what, unknown, allowed))


def _trigger_error(reason: str) -> ConfigError:
    return ConfigError(messages.trigger_invalid(reason), code="trigger_invalid")


def _action_error(reason: str) -> ConfigError:
    return ConfigError(messages.action_invalid(reason), code="action_invalid")


def normalize_trigger(raw: Mapping[str, Any]) -> dict[str, Any]:
    """Omit-when-default on one authored trigger, nothing else (no ids, no validation): what
    IaC compares so that explicit defaults plan as noop (SPEC §11)."""
    out = dict(raw)
    if isinstance(out.get("schedule"), Mapping):
        out["schedule"] = normalize_schedule(out["schedule"])
    return out


def is_schedule_trigger(trigger: object) -> bool:
    """A stored trigger the scheduler looks at (``on: "schedule"``)."""
    return isinstance(trigger, Mapping) and trigger.get("on") == "schedule"


def stored_schedule_type(trigger: object) -> str | None:
    """The ``schedule.type`` of a stored trigger as written (any string), else None."""
    schedule = trigger.get("schedule") if isinstance(trigger, Mapping) else None
    kind = schedule.get("type") if isinstance(schedule, Mapping) else None
    return kind if isinstance(kind, str) else None


def classify_stored(trigger: object, columns: Mapping[str, str]) -> list[str]:
    """The §7 error codes of one stored schedule trigger (empty when usable); never raises."""
    try:
        return _classify(trigger, columns)
    except Exception:  # a stored config must never break a tick or a preview
        return ["stored_schedule_invalid"]


def _classify(trigger: object, columns: Mapping[str, str]) -> list[str]:
    if not isinstance(trigger, Mapping):
        return ["stored_schedule_invalid"]
    codes = [] if well_formed_id(trigger.get("id")) else ["trigger_id_missing"]
    codes.extend(p.code for p in schedule_problems(trigger.get("schedule"), columns))
    kind, when = stored_schedule_type(trigger), trigger.get("when")
    if kind == "cron" and when:
        codes.append("cron_when_not_allowed")
    elif kind == "date_column_reached":
        try:
            validate_when(when, columns)
        except ConfigError as exc:
            codes.append(exc.code)
    return list(dict.fromkeys(codes))


def classify_stored_config(triggers: object, columns: Mapping[str, str]) -> list[list[str]]:
    """``classify_stored`` for each stored trigger, plus ``trigger_id_duplicate`` on every
    trigger whose id is shared with another one (any ``on``)."""
    if not isinstance(triggers, list):
        return []
    ids = [t.get("id") if isinstance(t, Mapping) else None for t in triggers]
    counts: dict[str, int] = {}
    for trigger_id in ids:
        if isinstance(trigger_id, str):
            counts[trigger_id] = counts.get(trigger_id, 0) + 1
    result = []
    for trigger, trigger_id in zip(triggers, ids, strict=True):
        codes = classify_stored(trigger, columns)
        if isinstance(trigger_id, str) and counts[trigger_id] > 1:
            codes.append("trigger_id_duplicate")
        result.append(codes)
    return result


__all__ = [
    "ACTION_TYPES",
    "EVENTS",
    "classify_stored",
    "classify_stored_config",
    "is_schedule_trigger",
    "normalize_trigger",
    "stored_schedule_type",
    "validate_alerts",
    "validate_triggers",
    "well_formed_id",
]
