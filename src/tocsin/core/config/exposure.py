"""Actions that reach app code (``start_workflow``, ``invoke_command``) and who may save them
(SPEC §10, §15). Pure.

A tenant route saves a triggers config as the verified token it was called with (a
:class:`Saver`). Such an action may be saved from there only when its target is exposed to
tenants (``workflow(..., tenants=True)``, ``register_command(..., tenants=True)``) or the token
holds ``schedules:write``; the token's id is stored in the action under :data:`SAVED_BY`, and
the action checks it again when it runs (the target still exposed, or that token still holding
``schedules:write``). An action equal to the stored action of the same trigger and action id is
unchanged: it keeps what was stored and is not checked again (a PATCH of one trigger re-saves
the whole config). The in-process facade saves with no saver: trusted, as before; an action it
changes carries no token id.

:data:`SAVED_BY` belongs to the server: no author sends it (validation refuses it as an unknown
key) and no view of a config shows it (:func:`without_grants`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from tocsin import messages
from tocsin.errors import PermissionDenied

# action type -> the field that names the app code it reaches
GATED: dict[str, str] = {"start_workflow": "workflow_id", "invoke_command": "command"}
SAVED_BY = "saved_by_token"
ACTION_LISTS = ("actions", "on_failure")


def target_of(action: Mapping[str, Any]) -> tuple[str, str] | None:
    """``(type, target as written)`` of an action that reaches app code, else None."""
    kind = action.get("type")
    field = GATED.get(kind) if isinstance(kind, str) else None
    value = action.get(field) if field is not None else None
    return (str(kind), value) if isinstance(value, str) else None


@dataclass(frozen=True, slots=True)
class Saver:
    """A token saving a config from a tenant route: its id, whether it holds
    ``schedules:write``, and which targets are exposed to tenants (``exposed(type, target)``)."""

    token_id: str
    may_write: bool
    exposed: Callable[[str, str], bool]


def _actions(trigger: object) -> Iterator[dict[str, Any]]:
    if not isinstance(trigger, Mapping):
        return
    for key in ACTION_LISTS:
        listed = trigger.get(key)
        if isinstance(listed, list):
            yield from (a for a in listed if isinstance(a, dict))


def _without(action: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in action.items() if k != SAVED_BY}


def without_grants(config: object) -> object:
    """``config`` (a triggers list) as authors see it: a copy without :data:`SAVED_BY` in any
    action. Anything that is not a list of objects is returned as it is."""
    if not isinstance(config, list):
        return config
    out: list[object] = []
    for trigger in config:
        if isinstance(trigger, Mapping):
            trigger = dict(trigger)
            for key in ACTION_LISTS:
                listed = trigger.get(key)
                if isinstance(listed, list):
                    trigger[key] = [_without(a) if isinstance(a, Mapping) else a for a in listed]
        out.append(trigger)
    return out


def stamp_grants(
    config: list[dict[str, Any]], stored: object, saver: Saver | None
) -> list[dict[str, Any]]:
    """``config`` (validated, every id set) with :data:`SAVED_BY` on each action that reaches
    app code: kept from ``stored`` for an unchanged action, ``saver``'s token id for a new or
    changed one (none when the trusted facade saves). Raises :class:`PermissionDenied` (403)
    for a new or changed action ``saver`` may not save. Stamps ``config`` in place."""
    before = {
        (trigger.get("id"), action.get("id")): action
        for trigger in (stored if isinstance(stored, list) else [])
        for action in _actions(trigger)
    }
    for trigger in config:
        for action in _actions(trigger):
            target = target_of(action)
            if target is None:
                continue
            old = before.get((trigger["id"], action["id"]))
            if old is not None and _without(old) == action:
                if SAVED_BY in old:
                    action[SAVED_BY] = old[SAVED_BY]
                continue
            if saver is None:
                continue
            if not saver.may_write and not saver.exposed(*target):
                raise PermissionDenied(messages.target_not_exposed(*target))
            action[SAVED_BY] = saver.token_id
    return config


__all__ = ["GATED", "SAVED_BY", "Saver", "stamp_grants", "target_of", "without_grants"]
