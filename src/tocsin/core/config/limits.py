"""Limits on what one tenant can make tocsin store or build; pure checks.

Each check raises ``ValidationError`` (400) naming the limit and its ``TOCSIN_*`` setting, and
lets through any input of the wrong shape: the validation that follows refuses that with its own
text. The limits come from the caller (``tocsin.settings.Settings`` satisfies :class:`ConfigLimits`;
core never reads settings itself):

- ``check_columns``: at most ``max_columns`` columns, each name at most ``max_column_name_chars``
  characters (at table creation);
- ``check_records``: each record's data at most ``max_record_bytes`` as compact UTF-8 JSON (on
  insert, and on update after merging the patch). This also bounds the row snapshot every run
  of a row event copies;
- ``check_triggers``: at most ``max_triggers_per_table`` triggers, ``max_actions_per_trigger``
  actions each (and as many ``on_failure`` alerts), and every ``notify`` (alerts included)
  posting to the table's own chatroom
  (:func:`tocsin.core.config.targets.check_notify_targets`).

The rendered-size cap is ``TemplateContext.max_bytes`` (:mod:`tocsin.core.config.templates`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Protocol

from tocsin import messages
from tocsin.core.config.targets import check_notify_targets
from tocsin.core.config.templates import utf8_size
from tocsin.core.model import Table
from tocsin.errors import ValidationError


class ConfigLimits(Protocol):
    """The limits the checks read (``Settings`` has them all)."""

    @property
    def max_record_bytes(self) -> int: ...

    @property
    def max_columns(self) -> int: ...

    @property
    def max_column_name_chars(self) -> int: ...

    @property
    def max_triggers_per_table(self) -> int: ...

    @property
    def max_actions_per_trigger(self) -> int: ...


def check_columns(columns: object, limits: ConfigLimits) -> None:
    """A table's columns: how many, and how long each name is."""
    if not isinstance(columns, Mapping):
        return
    if len(columns) > limits.max_columns:
        raise ValidationError(messages.too_many_columns(len(columns), limits.max_columns))
    for name in columns:
        if isinstance(name, str) and len(name) > limits.max_column_name_chars:
            raise ValidationError(messages.column_name_too_long(name, limits.max_column_name_chars))


def record_size(data: object) -> int | None:
    """The UTF-8 size of ``data`` as compact JSON; None when it is not JSON at all."""
    try:
        text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError, RecursionError):  # not JSON: validation says why
        return None
    return utf8_size(text)


def check_records(rows: Iterable[object], limits: ConfigLimits) -> None:
    """Every record's data (a mapping) within ``max_record_bytes``."""
    for data in rows:
        if not isinstance(data, Mapping):
            continue
        size = record_size(data)
        if size is not None and size > limits.max_record_bytes:
            raise ValidationError(messages.record_too_large(size, limits.max_record_bytes))


ACTION_LISTS = ("actions", "on_failure")


def check_triggers(raw: object, table: Table, limits: ConfigLimits) -> None:
    """A triggers config about to be saved on ``table``: counts, then notify targets."""
    if not isinstance(raw, list):
        return
    if len(raw) > limits.max_triggers_per_table:
        count, most = len(raw), limits.max_triggers_per_table
        raise ValidationError(messages.too_many_triggers(count, most))
    for index, trigger in enumerate(raw):
        if not isinstance(trigger, Mapping):
            continue
        for key in ACTION_LISTS:  # the alerts of on_failure are actions too, capped alike
            actions = trigger.get(key)
            if isinstance(actions, list) and len(actions) > limits.max_actions_per_trigger:
                trigger_id = trigger.get("id")
                label = f"'{trigger_id}'" if isinstance(trigger_id, str) else f"#{index + 1}"
                count, most = len(actions), limits.max_actions_per_trigger
                raise ValidationError(messages.too_many_actions(label, count, most))
    check_notify_targets(raw, scope=table.scope, scope_id=table.scope_id)


__all__ = ["ConfigLimits", "check_columns", "check_records", "check_triggers", "record_size"]
