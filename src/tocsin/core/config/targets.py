"""Where an action may reach: a ``notify`` posts only to its table's own chatroom.

A table belongs to one scope (``chatroom``, ``workspace`` or ``user`` and a UUID). Its notify
actions post to the chatroom of that scope: ``chatroom_id`` may be omitted or name that same
chatroom, never another one, or one tenant's trigger could post into another tenant's feed. A
workspace or user scope owns no chatroom feed, so a table there has no notify target at all.
Checked when a config is saved (:func:`check_notify_targets`, 400) and again when the action
runs (:func:`notify_chatroom`), for configs stored before the rule.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping

from tocsin import messages
from tocsin.errors import ConfigError


def notify_chatroom(chatroom_id: object, *, scope: object, scope_id: object) -> str:
    """The chatroom a ``notify`` of a table in ``(scope, scope_id)`` posts to: always the table's
    own chatroom, whether ``chatroom_id`` is omitted or names it (any spelling of the same UUID).

    ``ConfigError`` (``action_invalid``) for any other chatroom and for a table outside a
    chatroom scope (a workspace or user scope owns no chatroom feed): a tenant's trigger never
    posts into another tenant's feed.
    """
    if scope != "chatroom" or not isinstance(scope_id, str) or not scope_id:
        raise ConfigError(messages.notify_outside_chatroom(scope), code="action_invalid")
    if chatroom_id is None or chatroom_id == "" or _same_uuid(chatroom_id, scope_id):
        return scope_id
    raise ConfigError(messages.notify_other_chatroom(chatroom_id), code="action_invalid")


def check_notify_targets(raw: object, *, scope: object, scope_id: object) -> None:
    """At save: every ``notify`` of a (raw) triggers list, its ``on_failure`` alerts included,
    posts to the table's own chatroom.

    Only well-shaped notify actions are looked at; ``validate_triggers`` refuses the others.
    """
    for trigger in raw if isinstance(raw, list) else ():
        if not isinstance(trigger, Mapping):
            continue
        lists = (trigger.get("actions"), trigger.get("on_failure"))  # alerts post too
        actions = [a for listed in lists if isinstance(listed, list) for a in listed]
        for action in actions:
            if not isinstance(action, Mapping) or action.get("type") != "notify":
                continue
            chatroom_id = action.get("chatroom_id")
            if chatroom_id is None or isinstance(chatroom_id, str):
                notify_chatroom(chatroom_id, scope=scope, scope_id=scope_id)


def _same_uuid(text: object, canonical: str) -> bool:
    if not isinstance(text, str):
        return False
    try:
        return str(uuid.UUID(text)) == canonical
    except ValueError:
        return text == canonical


__all__ = ["check_notify_targets", "notify_chatroom"]
