"""``materialize_slots``: roster rows → concrete bookable slot records (SPEC §10; daily only).

Config (column names are configurable, defaults shown)::

    {"type": "materialize_slots", "source_table_id": "<uuid>", "horizon_days": 14,
     "target_table_id": "<uuid>",              # default: the run's own table
     "weekday_column": "weekday", "start_column": "start", "end_column": "end",
     "slot_minutes_column": "slot_minutes", "capacity_column": "capacity"}

- Source and target tables must be live and in the run's table's scope.
- Each live roster row of the source table names a weekday
  (0–6 with Sunday = 0 as in cron, 7 = Sunday, or a name like ``Mon``/``monday``), a local
  ``HH:MM`` start and end, a slot length in minutes and a capacity.
- The horizon is ``horizon_days`` local dates (1..366) starting at the local date of the run's
  ``scheduled_for`` in the daily schedule's timezone (UTC when it has none).
- Each slot is a target record with the same start, end and capacity column names as the
  roster, holding naive *local* wall times ``YYYY-MM-DDTHH:MM`` (what a booking page shows) and
  the row's capacity. Slots end at or before the row's end.
- Idempotent per slot: a slot whose ``(start, end)`` already exists in the target table (live or
  trashed, so a cancelled slot is not resurrected) is not created again.
- Writes go through the facade, so row events and validation apply; the approval gate is not
  consulted for generated slots.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from datetime import date, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from tocsin import messages
from tocsin.actions.base import ActionContext, ActionError
from tocsin.actions.records import scoped_table
from tocsin.store.records import list_records

COLUMN_DEFAULTS = {
    "weekday": "weekday",
    "start": "start",
    "end": "end",
    "slot_minutes": "slot_minutes",
    "capacity": "capacity",
}
MAX_HORIZON_DAYS = 366
PAGE = 1000
SLOT_FORMAT = "%Y-%m-%dT%H:%M"
DAY_NAMES = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")


def cron_weekday(value: Any) -> int | None:
    """0..6 with Sunday = 0 from an int (7 = Sunday) or a day name; None when unreadable."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float) and int(value) == value and 0 <= int(value) <= 7:
        return int(value) % 7
    if isinstance(value, str):
        text = value.strip().lower()
        if text.isdigit():
            return cron_weekday(int(text))
        if text[:3] in DAY_NAMES:
            return DAY_NAMES.index(text[:3])
    return None


def parse_hhmm(value: Any) -> time | None:
    try:
        hour, minute = str(value).strip().split(":")
        return time(int(hour), int(minute))
    except (ValueError, TypeError):
        return None


def roster_slots(
    row: Mapping[str, Any], cols: Mapping[str, str], day: date
) -> Iterator[dict[str, Any]]:
    """The slots one roster row yields on ``day`` (none on other weekdays or when unreadable)."""
    if cron_weekday(row.get(cols["weekday"])) != (day.weekday() + 1) % 7:
        return
    start, end = parse_hhmm(row.get(cols["start"])), parse_hhmm(row.get(cols["end"]))
    minutes = row.get(cols["slot_minutes"])
    if start is None or end is None or isinstance(minutes, bool):
        return
    if not isinstance(minutes, int | float) or int(minutes) <= 0:
        return
    step = timedelta(minutes=int(minutes))
    cursor, stop = datetime.combine(day, start), datetime.combine(day, end)
    while cursor + step <= stop:
        yield {"start": cursor, "end": cursor + step, "capacity": row.get(cols["capacity"])}
        cursor += step


def column_names(config: Mapping[str, Any]) -> dict[str, str]:
    """Roster column names (``<role>_column`` keys), defaulting to the role names."""
    names = dict(COLUMN_DEFAULTS)
    for role in COLUMN_DEFAULTS:
        given = config.get(f"{role}_column")
        if isinstance(given, str) and given:
            names[role] = given
    return names


def all_rows(ctx: ActionContext, table_id: str, *, include_trashed: bool) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    with ctx.env.store.read() as tx:
        while True:
            items, _total = list_records(
                tx, table_id=table_id, skip=len(out), limit=PAGE, include_trashed=include_trashed
            )
            out.extend(items)
            if len(items) < PAGE:
                return out


def first_day(ctx: ActionContext) -> date:
    schedule = ctx.trigger.get("schedule") or {}
    if schedule.get("type") != "daily":
        raise ActionError(messages.MATERIALIZE_SLOTS_DAILY_ONLY)
    zone = ZoneInfo(schedule.get("timezone") or "UTC")
    instant = ctx.run.get("scheduled_for") or ctx.now
    return instant.astimezone(zone).date()


def horizon(config: Mapping[str, Any]) -> int:
    days = config.get("horizon_days", 14)
    if isinstance(days, bool) or not isinstance(days, int) or not 1 <= days <= MAX_HORIZON_DAYS:
        raise ActionError(messages.horizon_days_invalid(MAX_HORIZON_DAYS))
    return days


class MaterializeSlots:
    type = "materialize_slots"

    def execute(self, ctx: ActionContext, config: Mapping[str, Any]) -> str:
        start_day, days = first_day(ctx), horizon(config)
        source_id = config.get("source_table_id")
        if not isinstance(source_id, str) or not source_id:
            raise ActionError(messages.MATERIALIZE_NEEDS_SOURCE)
        target_id = str(config.get("target_table_id") or ctx.run["table_id"])
        for table_id in (source_id, target_id):
            scoped_table(ctx, table_id)  # live and in the run's scope, at every attempt
        cols = column_names(config)
        roster = [r["data"] for r in all_rows(ctx, source_id, include_trashed=False)]
        existing = {
            (str(r["data"].get(cols["start"])), str(r["data"].get(cols["end"])))
            for r in all_rows(ctx, target_id, include_trashed=True)
        }
        created = 0
        for offset in range(days):
            for row in roster:
                for slot in roster_slots(row, cols, start_day + timedelta(days=offset)):
                    key = (slot["start"].strftime(SLOT_FORMAT), slot["end"].strftime(SLOT_FORMAT))
                    if key in existing:
                        continue
                    data = {cols["start"]: key[0], cols["end"]: key[1]}
                    data[cols["capacity"]] = slot["capacity"]
                    ctx.env.records.create_record(target_id, data, now=ctx.now)
                    existing.add(key)
                    created += 1
        return messages.slots_materialized(created, days, start_day.isoformat())
