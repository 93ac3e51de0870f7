"""Occurrence identities and enqueue dedup keys (SPEC §4.1, §5.4).

- date_column_reached: ``(trigger, record, normalised value)``; the value is ``YYYY-MM-DD`` for
  a ``date`` column and ``YYYY-MM-DD HH:MM`` for a ``datetime`` column, read with the naive-UTC
  cell rules (so ``2026-09-01T09:00:59+08:00`` is ``2026-09-01 09:00``). The offset is not part
  of it. The ledger stores ``date_identity(record_id, value)`` under the trigger id.
- clock kinds: ``(trigger, window start)``; ``clock_identity(window)`` is the window in UTC.
- a stored trigger definition: ``definition_digest(trigger)``, its content address (the runs it
  fires name it by this, not by a copy).

Dedup keys (SPEC §5.4, the transport-level guard; the ledger is the durable one):
``dedup_key(schedule, scheduled_for)`` of a clock run — a daily schedule with a timezone uses its
local date ``%Y%m%d`` in that zone, a UTC daily the UTC date; interval and cron use the UTC minute
``%Y%m%dT%H%M``. Years below 1000 are zero-padded (``strftime`` is not used). The run's views
carry it as ``dedup_key`` (``Run.dedup_key``); other runs have none.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from tocsin.core.time.instants import classify_cell, to_iso
from tocsin.core.time.zones import get_zone
from tocsin.errors import ConfigError


def normalize_value(column_type: str, cell: object) -> str | None:
    """The identity value of a cell, or None when it is missing/invalid (or the type is not
    ``date``/``datetime``)."""
    status, instant = classify_cell(cell)
    if status != "ok" or instant is None:
        return None
    return normalize_instant(column_type, instant)


def normalize_instant(column_type: str, instant: datetime) -> str | None:
    """``normalize_value`` of a cell already read as ``instant`` (naive-UTC rules applied)."""
    if column_type == "date":
        return instant.date().isoformat()
    if column_type == "datetime":
        return f"{instant.date().isoformat()} {instant.hour:02d}:{instant.minute:02d}"
    return None


def date_identity(record_id: str, value: str) -> str:
    """The ledger identity of one record value: ``record:<record_id>:<value>``."""
    return f"record:{record_id}:{value}"


def clock_identity(window: datetime) -> str:
    """The ledger identity of one clock window: ``window:<YYYY-MM-DDTHH:MM:SS>`` (UTC)."""
    return f"window:{to_iso(window)}"


def definition_digest(trigger: Mapping[str, Any]) -> str:
    """The content address of a stored trigger definition (``trigger_definitions.hash``): a
    128-bit BLAKE2b of its canonical JSON (sorted keys, no spaces), as 32 hex digits. Equal
    definitions share one row; a run names the one it executes by this digest."""
    text = json.dumps(trigger, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.blake2b(text.encode(), digest_size=16).hexdigest()


def _day(at: datetime) -> str:
    return f"{at.year:04d}{at.month:02d}{at.day:02d}"


def dedup_key(schedule: object, scheduled_for: datetime | None) -> str | None:
    """The enqueue dedup key of a clock run of ``schedule`` (its stored JSON) due at
    ``scheduled_for`` (aware, or naive UTC); None for other schedules or an unreadable zone."""
    if scheduled_for is None or not isinstance(schedule, Mapping):
        return None
    at = scheduled_for if scheduled_for.tzinfo is not None else scheduled_for.replace(tzinfo=UTC)
    kind = schedule.get("type")
    if kind == "daily":
        try:
            return _day(at.astimezone(get_zone(schedule.get("timezone") or "UTC")))
        except ConfigError:
            return None
    if kind in ("interval", "cron"):
        utc = at.astimezone(UTC)
        return f"{_day(utc)}T{utc.hour:02d}{utc.minute:02d}"
    return None


__all__ = [
    "clock_identity",
    "date_identity",
    "dedup_key",
    "definition_digest",
    "normalize_value",
]
