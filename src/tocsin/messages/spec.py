"""The texts SPEC gives verbatim (§2, §4–§9) and the not-found texts."""

from __future__ import annotations

# §4.1 date_column_reached
OFFSET_MINUTES_INVALID = (
    "date_column_reached offset_minutes must be an integer in [-43200, 43200] "
    "(negative = before the column instant, positive = after)"
)

# §4.3 / §4.4 timezones
DAILY_TIMEZONE_NOT_STRING = (
    "daily schedule timezone must be an IANA name string (e.g. 'Asia/Taipei')"
)


#: The most of a refused zone name a text quotes (IANA names are far shorter): a 100 KB "zone"
#: is not echoed back whole.
ZONE_QUOTE_CHARS = 64


def quoted_zone(tz: object) -> str:
    """``tz`` as a text quotes it: whole up to ``ZONE_QUOTE_CHARS``, else cut with ``…``."""
    text = str(tz)
    return text if len(text) <= ZONE_QUOTE_CHARS else text[:ZONE_QUOTE_CHARS] + "…"


def daily_timezone_unknown(tz: str) -> str:
    return (
        f"daily schedule timezone '{quoted_zone(tz)}' is not a known IANA zone. "
        "use an IANA name like 'Asia/Taipei' or 'America/New_York'"
    )


def did_you_mean(names: list[str]) -> str:
    """The suggestion appended after a SPEC text: "" when there is none."""
    if not names:
        return ""
    quoted = [f"'{n}'" for n in names]
    listed = quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " or " + quoted[-1]
    return f" (did you mean {listed}?)"


def with_columns(text: str, columns: object) -> str:
    """A missing-column SPEC text followed by the table's columns."""
    names = [str(c) for c in columns] if columns else []  # type: ignore[attr-defined]
    listed = ", ".join(names) if names else "none"
    return f"{text}. columns: {listed}"


def datetime_offset_ignored(column: str, value: str, offset: str) -> str:
    """The ``warnings`` entry of a record write whose datetime cell carries an offset (§4.1)."""
    return (
        f"column '{column}': the offset {offset} in '{value}' is ignored, not converted: "
        "datetime cells are naive UTC, so this cell is read as that wall time in UTC. "
        "convert to UTC (or write Z) before writing"
    )


# §4.4 cron
def cron_invalid(reason: str) -> str:
    return f"cron schedule invalid: {reason}"


CRON_WHEN_NOT_ALLOWED = (
    "cron_when_not_allowed: cron schedules are recordless and take no when predicates"
)
CRON_ROW_TOKENS = (
    "cron schedules are recordless — '$row' tokens and row-targeted actions are invalid"
)


# §4.5 other rules
def invalid_schedule_type(kind: object) -> str:
    return (
        f"invalid schedule type '{kind}'. valid types: date_column_reached, interval, daily, cron"
    )


def invoke_command_row_input(name: str) -> str:
    return (
        f"invoke_command input '{name}': \"$row\" tokens require record context — "
        "interval/daily schedule triggers fire with no record"
    )


DELETE_RECORD_NEEDS_ROW = (
    "delete_record requires record context — interval/daily schedule triggers fire with no record"
)


# §5.2 changes
def schedule_kind_change(trigger_id: str) -> str:
    return (
        f"schedule_kind_change_requires_new_trigger_id: trigger '{trigger_id}' changes its "
        "schedule type in place. retire the old trigger id and create the new schedule kind "
        "under a new trigger id"
    )


# §2 channel SCP exclusivity (the SPEC fixes the reason, not the words)
SCP_WITH_TRIGGERS = (
    "triggers cannot coexist with channel SCP rules: a trigger has no acting chatroom "
    "and therefore cannot satisfy the channel floor"
)

# §6 root auth
ADMIN_DENIED = "BaseRoot access denied: Invalid X-ADMIN-TOKEN"

# §8 runs
TRIGGER_CONFIG_GONE = "trigger config no longer exists"


# §9.4 retry
def retry_refused(status: str) -> str:
    return f"run is {status}; only failed/pending (or stale-running) runs can be retried"


RETRY_ANOTHER_ACTIVE = "another run is active for this schedule trigger; retry after it completes"

# Not-found texts (the SPEC names the status, these are ours)
TABLE_NOT_FOUND = "table not found"
RECORD_NOT_FOUND = "record not found"
RUN_NOT_FOUND = "trigger run not found"
