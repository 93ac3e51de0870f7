"""Trigger configs: schedules, predicates, actions, pause, compound and event trees,
field-change conditions, and the why-not texts."""

from __future__ import annotations

from collections.abc import Iterable

# ---- core: schedules, when predicates, triggers and actions (texts the SPEC leaves to us) ----
SCHEDULE_OBJECT_MISSING = "schedule triggers need a 'schedule' object (on: 'schedule')"


def schedule_not_object(value: object) -> str:
    return f"schedule must be a JSON object with a 'type', got {type(value).__name__}"


def schedule_unknown_keys(kind: str, keys: list[str], allowed: list[str]) -> str:
    return (
        f"{kind} schedule has unknown key(s) {', '.join(repr(k) for k in keys)}. "
        f"allowed keys: {', '.join(allowed)}"
    )


def schedule_column_missing(column: object) -> str:
    return f"date_column_reached column '{column}' does not exist on this table"


def schedule_column_wrong_type(column: str, column_type: str) -> str:
    return (
        f"date_column_reached column '{column}' is a {column_type} column; "
        "it must be a date or datetime column"
    )


INTERVAL_SECONDS_INVALID = (
    "interval every_seconds must be an integer in [60, 2592000] (1 minute to 30 days)"
)


def daily_time_invalid(value: object) -> str:
    return f"daily schedule at must be a 24-hour 'HH:MM' string like '01:30' (got {value!r})"


CRON_EXPRESSION_NOT_STRING = "expression must be a string of five fields"


def when_column_missing(column: object) -> str:
    return f"when predicate column '{column}' does not exist on this table"


def when_predicate_invalid(reason: str) -> str:
    return f"when predicate invalid: {reason}"


def trigger_invalid(reason: str) -> str:
    return f"trigger invalid: {reason}"


def trigger_id_duplicate(trigger_id: str) -> str:
    return f"trigger id '{trigger_id}' appears more than once in the triggers list"


def action_invalid(reason: str) -> str:
    return f"action invalid: {reason}"


RESERVED_HEADERS = (
    "Host, Content-Length, Transfer-Encoding, Connection, Idempotency-Key, User-Agent and "
    "X-Tocsin-*"
)


def header_reserved(kind: str, name: str) -> str:
    """A ``webhook`` / ``api_call`` header tocsin sets itself (refused at save; a stored config
    holding one fails its run before anything is sent)."""
    return (
        f"{kind} action header '{name}' is tocsin's own and cannot be configured "
        f"(in any case: {RESERVED_HEADERS}); remove it from 'headers'"
    )


MATERIALIZE_SLOTS_DAILY_ONLY = "materialize_slots actions are allowed only on daily schedules"


def naive_datetime(name: str) -> str:
    return f"{name} must be a timezone-aware datetime (naive datetimes are refused)"


# ---- table schedule triggers: pause and resume ----


def trigger_not_pausable(trigger_id: str, on: object) -> str:
    return (
        f"trigger '{trigger_id}' fires on row events (on: '{on}'): only schedule triggers "
        "(on: 'schedule') can be paused or resumed"
    )


def trigger_without_state(trigger_id: str) -> str:
    return (
        f"trigger '{trigger_id}' has no schedule state (its config is invalid): "
        "fix the trigger before pausing or resuming it"
    )


# --- compound / event triggers of workflow schedules (SPEC §13) ---------------------------


def trigger_cron_not_string(value: object) -> str:
    return f"a time trigger's cron must be a string, got {value!r}"


def trigger_repeated_invalid(value: object) -> str:
    return f"a time trigger's repeated must be 'both' or 'first', got {value!r}"


def trigger_missing_invalid(value: object) -> str:
    return f"a time trigger's missing must be 'skip' or 'shift', got {value!r}"


def trigger_event_unknown(kind: object, known: list[str]) -> str:
    return f"unknown event {kind!r}; known events: {', '.join(known)}"


def trigger_subject_invalid(kind: str, key: str, value: object) -> str:
    return (
        f"event '{kind}' needs '{key}': a non-empty string of at most 64 characters, got {value!r}"
    )


def trigger_compound_empty(op: str) -> str:
    word = "AND" if op == "all" else "OR"
    return f"an {word} trigger ('{op}') needs at least one trigger inside, got none"


def trigger_node_invalid(value: object) -> str:
    text = repr(value)
    if len(text) > 80:
        text = text[:77] + "..."
    return (
        'a trigger must be a time trigger ({"cron": ...}), an event trigger '
        '({"event": ...}), {"all": [...]} or {"any": [...]}; got ' + text
    )


def trigger_children_not_list(op: str) -> str:
    return f"'{op}' must be a list of triggers"


def trigger_keys_unknown(kind: str, keys: list[str], allowed: list[str]) -> str:
    return f"unknown keys in a '{kind}' trigger: {', '.join(keys)}; allowed: {', '.join(allowed)}"


def trigger_too_deep(depth: int) -> str:
    return f"a trigger tree may nest at most {depth} levels"


def trigger_too_many_leaves(count: int) -> str:
    return f"a trigger tree may hold at most {count} time and event triggers"


def trigger_and_of_times(schedule_id: str) -> str:
    return (
        f"schedule '{schedule_id}': an AND of time triggers fires only when their instants "
        "coincide; a single, more specific time trigger is better (SPEC §13)"
    )


def schedule_cron_or_trigger(value: object) -> str:
    return f"a schedule needs exactly one of cron= or trigger=, got {value}"


def trigger_table_unknown(schedule_id: str, table_id: str) -> str:
    return f"schedule '{schedule_id}': event 'table_updated' names unknown table '{table_id}'"


def trigger_workflow_unknown(schedule_id: str, kind: str, workflow_id: str) -> str:
    return f"schedule '{schedule_id}': event '{kind}' names unknown workflow '{workflow_id}'"


def trigger_schedule_unknown(schedule_id: str, other: str) -> str:
    return f"schedule '{schedule_id}': event 'schedule_succeeded' names unknown schedule '{other}'"


# --- field-change conditions of row-event triggers (SPEC §13) -----------------------------

CHANGED_ONLY_ON_UPDATED = "changed is only allowed with on: 'updated'"
CHANGED_NOT_LIST = "changed must be a non-empty list of column names"
CHANGED_DUPLICATE = "changed lists a column more than once"


def changed_column_missing(column: object) -> str:
    return f"changed column '{column}' does not exist on this table"


# --- why didn't it fire? --------------------------------------------------------------------

NEXT_FIRES_CLOCK_ONLY = (
    "next fires are computed for interval, daily and cron triggers; a date_column_reached"
    " trigger fires per record (see the schedule preview)"
)
TRIGGER_INVALID_NO_FIRES = "the trigger's stored config is invalid: it never fires until fixed"


def count_invalid(name: str, low: int, high: int, value: object) -> str:
    return f"{name} must be an integer from {low} to {high}, got {value!r}"


def backfill_too_many(limit: int, *, forced: bool) -> str:
    """The count stops at ``limit + 1``: the range is said to hold more than ``limit``."""
    if forced:
        return (
            f"the backfill range holds more than {limit} instants, the most a forced backfill"
            " takes: narrow it"
        )
    return (
        f"the backfill range holds more than {limit} instants: narrow it or pass force=True"
        " (--force)"
    )


def backfill_compound(schedule_id: str) -> str:
    return (
        f"schedule '{schedule_id}' fires on a compound trigger tree: backfill takes the instants"
        " of a cron schedule only"
    )


def backfill_range_invalid() -> str:
    return "the backfill range is empty: start must be before end"


def catch_up_invalid(value: object) -> str:
    return f"catch_up must be 'latest', 'none' or 'all', got {value!r}"


def max_catch_up_invalid(value: object) -> str:
    return f"max_catch_up must be an integer from 1 to 10000, got {value!r}"


# --- the reasons inside trigger_invalid / action_invalid / when_predicate_invalid ------------
TRIGGERS_NOT_LIST = "triggers must be a list of trigger objects"
TRIGGER_NOT_OBJECT = "each trigger must be an object"
TRIGGER_NAME_NOT_STRING = "name must be a string"
SCHEDULE_ONLY_ON_SCHEDULE = "a schedule is only allowed with on: 'schedule'"
ACTION_NOT_OBJECT = "each action must be an object"


def trigger_on_invalid(events: Iterable[str], on: object) -> str:
    return f"on must be one of {', '.join(events)} (got {on!r})"


def action_id_shared(action_id: str) -> str:
    return f"action id '{action_id}' appears in both actions and on_failure (ids are per trigger)"


def actions_not_list(what: str) -> str:
    return f"{what} must be a list of action objects"


def actions_empty(what: str) -> str:
    return f"{what} must hold at least one action (got an empty list)"


def action_id_repeated(action_id: object) -> str:
    return f"action id '{action_id}' appears more than once"


def action_type_unknown(kind: object, valid: Iterable[str]) -> str:
    return f"unknown action type {kind!r}. valid types: {', '.join(valid)}"


def action_field_missing(kind: str, field: str) -> str:
    return f"{kind} action needs '{field}'"


def action_field_invalid(kind: str, field: str, expected: str) -> str:
    return f"{kind} action '{field}' must be {expected}"


def config_id_invalid(value: object) -> str:
    return (
        f"id {value!r} must be 1-64 letters, digits, '_', '-', '.' or ':' "
        "(omit it to get a new one)"
    )


def config_keys_unknown(what: str, unknown: Iterable[str], allowed: Iterable[str]) -> str:
    keys = ", ".join(repr(k) for k in unknown)
    return f"{what} has unknown key(s) {keys}. allowed keys: {', '.join(allowed)}"


# when predicates
WHEN_NOT_LIST = "when must be a list of {column, op, value} objects"
PREDICATE_NOT_OBJECT = "each predicate must be an object with column, op and value"
WAS_ONLY_ON_UPDATED = "'was' tests the value before an update: only on: 'updated' triggers"
WAS_NOT_SCALAR = "'was' needs a scalar value (string, number, boolean or null)"
OP_IN_NOT_LIST = "op 'in' needs a list of scalar values"


def was_keys_unknown(unknown: Iterable[str]) -> str:
    return f"a 'was' predicate takes only column and was, not {', '.join(unknown)}"


def predicate_keys_unknown(unknown: Iterable[str]) -> str:
    return f"unknown key(s) {', '.join(repr(k) for k in unknown)}"


def op_unknown(op: object, valid: Iterable[str]) -> str:
    return f"unknown op {op!r}. valid ops: {', '.join(valid)}"


def op_needs_value(op: str) -> str:
    return f"op '{op}' needs a value"


def op_needs_string_or_number(op: str) -> str:
    return f"op '{op}' needs a string or number value"


def op_needs_scalar(op: str) -> str:
    return f"op '{op}' needs a scalar value (string, number, boolean or null)"


# retry policies
RETRY_NOT_OBJECT = 'retry must be an object like {"max_attempts": 5, "backoff_s": 30}'


def retry_max_attempts_invalid(limit: int, given: object) -> str:
    return f"retry max_attempts must be an integer in [1, {limit}] (got {given!r})"


def retry_backoff_invalid(limit: float, given: object) -> str:
    return f"retry backoff_s must be a number in (0, {limit}] (got {given!r})"


def retry_factor_invalid(limit: float, given: object) -> str:
    return f"retry factor must be a number in [1, {limit}] (got {given!r})"


def retry_max_backoff_invalid(limit: float, given: object) -> str:
    return f"retry max_backoff_s must be a number in [backoff_s, {limit}] (got {given!r})"


def retry_jitter_invalid(given: object) -> str:
    return f"retry jitter must be true or false (got {given!r})"


# actions checked against the table at save
def url_not_http(url: str) -> str:
    return f"url must be an http:// or https:// URL with a host (got {url!r})"


def action_problem(kind: str, problem: str) -> str:
    return f"{kind} action {problem}"


def action_row_column_missing(kind: str, column: str, hint: str) -> str:
    return f"{kind} action uses '$row.{column}' but this table has no column '{column}'. {hint}"


def columns_listed(names: Iterable[str]) -> str:
    return "columns: " + (", ".join(names) or "none")


def max_concurrent_not_count(trigger_id: str, value: object) -> str:
    return (
        f"trigger '{trigger_id}': max_concurrent must be a whole number from 1 to 10000,"
        f" got {value!r}"
    )


def max_concurrent_on_clock(trigger_id: str) -> str:
    return (
        f"trigger '{trigger_id}': max_concurrent applies to row-event triggers only"
        " (a schedule trigger already runs one run at a time)"
    )


# ---- the cron functions' arguments (``tocsin.Cron``, ``tocsin.core.time.cron``) ----
def cron_repeated_invalid(repeated: object) -> str:
    return f"repeated must be 'first' or 'both', got {repeated!r}"


def cron_instant_naive(instant: object) -> str:
    return f"cron evaluation needs an aware datetime, got naive {instant!r}"


def cron_dialect_unknown(dialect: object) -> str:
    return f"unknown cron dialect {dialect!r}; expected 'strict' or 'extended'"


def zone_without_offset(zone: object) -> str:
    return f"zone {zone} has no UTC offset"


def zone_argument_invalid(tz: object) -> str:
    return f"tz must be an IANA zone name or a ZoneInfo, got {type(tz).__name__}"


def zone_unknown(tz: object) -> str:
    return f"unknown IANA timezone {tz!r}"


TABLE_CLOCK_WITHOUT_TREE = "a table clock trigger has no trigger tree"


# ---- engine: a trigger that reached a decision it cannot take (a caller's bug) ----
def clock_trigger_without_timing(trigger_id: object) -> str:
    return f"clock trigger {trigger_id!r} has no clock timing"


def manual_events_mixed(schedule_id: object) -> str:
    return f"schedule {schedule_id!r}: manual events are decided alone, for their own schedule"


def trigger_invalid_for_verdict(trigger_id: object, error_codes: object) -> str:
    return f"trigger {trigger_id!r} is invalid: {error_codes}"
