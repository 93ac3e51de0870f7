"""Table triggers and their schedule preview in words, for people (SPEC §4, §7).

Pure functions over the normalized trigger config and the preview document; cron readings come
from ``core.time.cron.explain`` so Studio and the CLI say the same thing.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tocsin.core.time.cron import CronError, explain, parse

ROW_EVENTS = {
    "created": "When a record is created",
    "updated": "When a record is updated",
    "deleted": "When a record is deleted",
    "restored": "When a record is restored",
}
DATE_COUNTS = (
    ("due_now", "due now (the next tick fires them)"),
    ("scheduled_for_future", "scheduled for later"),
    ("already_fired", "already fired for their current value (or skipped by a pause)"),
    ("when_filter_mismatch", "not matching the when filter"),
    ("missing_schedule_value", "with an empty date"),
    ("invalid_schedule_value", "with a date that cannot be read"),
)
WARNINGS = {
    "when_ignored_for_recordless_schedule": "Its when filter is ignored: this schedule fires "
    "for the table, not for records.",
    "overdue_records_will_fire": "Overdue records will fire at the next tick.",
    "trigger_paused": "Paused: the scheduler fires nothing for it until it is resumed (from "
    "then on, without backlog).",
}


def _zone(schedule: Mapping[str, Any]) -> str:
    return str(schedule.get("timezone") or "UTC")


def _offset(minutes: int) -> str:
    if not minutes:
        return ""
    size = abs(minutes)
    amount = f"{size // 1440} day(s)" if size % 1440 == 0 else f"{size} minute(s)"
    return f" {amount} {'before' if minutes < 0 else 'after'}"


def cron_words(expression: str, dialect: str = "strict") -> str:
    try:
        return explain(parse(expression, dialect=dialect))  # type: ignore[arg-type]
    except CronError:
        return "an expression that cannot be read"


def trigger_words(trigger: Mapping[str, Any]) -> str:
    """``{"on": "schedule", "schedule": {"type": "daily", "at": "09:00"}}`` → "Every day at
    09:00 (UTC)"."""
    on = str(trigger.get("on"))
    if on != "schedule":
        return ROW_EVENTS.get(on, f"On {on}")
    schedule = trigger.get("schedule") or {}
    kind = schedule.get("type")
    if kind == "interval":
        return f"Every {schedule.get('every_seconds')} seconds"
    if kind == "daily":
        return f"Every day at {schedule.get('at')} ({_zone(schedule)})"
    if kind == "cron":
        expression = str(schedule.get("expression"))
        return f"{cron_words(expression)} ({_zone(schedule)})"
    if kind == "date_column_reached":
        offset = int(schedule.get("offset_minutes") or 0)
        return f"When a record's {schedule.get('column')} is reached{_offset(offset)}"
    return f"An unsupported schedule ({kind})"


def preview_lines(arm: Mapping[str, Any]) -> list[str]:
    """Why this trigger is, or is not, due at the preview's instant."""
    if arm.get("config_status") == "invalid":
        codes = ", ".join(arm.get("error_codes") or [])
        return [f"The scheduler skips this trigger: its config is invalid ({codes})."]
    lines: list[str] = []
    if arm.get("paused"):
        return [WARNINGS["trigger_paused"]]
    if arm.get("kind") == "date_column_reached":
        scanned = int(arm.get("records_scanned") or 0)
        lines.append(f"{scanned} record(s) looked at:")
        lines += [f"{arm[key]} {text}" for key, text in DATE_COUNTS if arm.get(key)]
        if arm.get("truncated"):
            lines.append(f"{arm.get('unscanned')} more record(s) are read by later ticks.")
    else:
        if arm.get("active_run"):
            lines.append("Not due: a run of this trigger is still active.")
        elif arm.get("due_now"):
            lines.append("Due now: the next tick fires it.")
        elif arm.get("due_at"):
            lines.append("Not due yet: it waits for its next window.")
        else:
            lines.append("No window is due.")
        if arm.get("last_consumed_window_at") is None:
            lines.append("It has never fired.")
    lines += [WARNINGS.get(w, w) for w in arm.get("warnings") or []]
    return lines


LANE_REASONS = {
    "selected": "at least one candidate was accepted; the handler was called with them",
    "source_empty": "the source answered with no candidates",
    "no_eligible_input": "the source answered, but no candidate was in the window and passed "
    "the policy",
    "source_unavailable": "the source could not be asked; nothing was selected",
    "window_overlap": "this window overlaps one already recorded for the lane; the source was "
    "not asked",
    "duplicate_trigger": "this run was already recorded (same run id); the source was not asked",
}


def lane_reason_words(reason: object) -> str:
    """A lane decision's reason (SPEC §14) in words; an unknown reason as it is."""
    return LANE_REASONS.get(str(reason), str(reason))


SKIP_REASONS = {
    "coalesced": "coalesced (downtime: the latest missed instant fired instead)",
    "active_run": "a run was still active (overlap skip)",
    "paused": "paused",
    "dst_gap": "the wall time does not exist (DST gap)",
    "table_trashed": "the table was in the trash",
    "invalid_config": "the trigger's config is invalid",
    "compound_unsatisfied": "its events had not occurred (compound trigger)",
}


def skip_reason_words(reason: object) -> str:
    """A skip range's reason in words; an unknown reason as it is."""
    return SKIP_REASONS.get(str(reason), str(reason))


__all__ = [
    "cron_words",
    "lane_reason_words",
    "preview_lines",
    "skip_reason_words",
    "trigger_words",
]
