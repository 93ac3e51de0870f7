"""Every user-visible text of SPEC, verbatim, as a constant or a formatter.

Tests pin each one; nothing else in tocsin spells these sentences.
"""

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


def daily_timezone_unknown(tz: str) -> str:
    return (
        f"daily schedule timezone '{tz}' is not a known IANA zone. "
        "use an IANA name like 'Asia/Taipei' or 'America/New_York'"
    )


def did_you_mean(names: list[str]) -> str:
    """The suggestion appended after a SPEC text (issue 18): "" when there is none."""
    if not names:
        return ""
    quoted = [f"'{n}'" for n in names]
    listed = quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " or " + quoted[-1]
    return f" (did you mean {listed}?)"


def with_columns(text: str, columns: object) -> str:
    """A missing-column SPEC text followed by the table's columns (issue 18)."""
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


MATERIALIZE_SLOTS_DAILY_ONLY = "materialize_slots actions are allowed only on daily schedules"


def naive_datetime(name: str) -> str:
    return f"{name} must be a timezone-aware datetime (naive datetimes are refused)"


# ---- edges: HTTP auth and tokens (SPEC §15; texts the SPEC leaves to us) ----
TOKEN_INVALID = "Invalid or missing bearer token"
SCOPE_FORBIDDEN = "this token does not grant access to this scope"


def role_required(role: str) -> str:
    return f"this route requires the {role} role in this scope"


def token_scope_invalid(text: str) -> str:
    return (
        f"token scope '{text}' is invalid: use <chatroom|workspace|user>:<uuid>, "
        "e.g. chatroom:6f1c2a9e-0b7d-4c1e-9a53-2f0e8d7c4b11"
    )


def token_role_invalid(role: str) -> str:
    return f"token role '{role}' is invalid: use member or moderator"


INTERNAL_ERROR = "internal server error"


# ---- execution: actions, staged changes, commands (texts the SPEC leaves to us) ----
UPDATE_RECORD_NEEDS_ROW = (
    "update_record requires record context — interval/daily schedule triggers fire with no record"
)
STAGED_CHANGE_NOT_FOUND = "staged change not found"


def staged_change_decided(status: str) -> str:
    return f"staged change is {status}; only staged changes can be approved or rejected"


def command_not_registered(name: str) -> str:
    return f"invoke_command: no command named '{name}' is registered"


def unknown_action_type(kind: object) -> str:
    return f"unknown action type '{kind}'"


# ---- data plane: tables, columns, records, triggers ownership (texts the SPEC leaves to us) ----
def scope_invalid(scope: object) -> str:
    return f"scope '{scope}' is invalid: use chatroom, workspace or user"


def scope_id_invalid(scope_id: object) -> str:
    return f"scope_id '{scope_id}' is invalid: it must be a UUID"


TABLE_NAME_INVALID = "table name must be a non-empty string of at most 200 characters"
COLUMNS_NOT_OBJECT = "columns must be an object mapping column names to types"
ROWS_NOT_LIST = "records must be a list of objects mapping column names to values"
SCP_RULES_NOT_LIST = "scp_rules must be a list of rules or null"


def column_type_invalid(column: object, column_type: object) -> str:
    return (
        f"column '{column}' has invalid type '{column_type}'. valid types: "
        "text, number, boolean, date, datetime, select, json"
    )


def column_name_invalid(column: object) -> str:
    return f"column name {column!r} is invalid: it must be a non-empty string"


def column_unknown(column: object) -> str:
    return f"column '{column}' does not exist on this table"


def cell_invalid(column: str, column_type: str) -> str:
    expected = {
        "text": "a string",
        "number": "a number (int or float, not a boolean)",
        "boolean": "true or false",
        "date": "a date string 'YYYY-MM-DD'",
        "datetime": "an ISO 8601 datetime string",
        "select": "a string",
        "json": "any JSON value",
    }.get(column_type, column_type)
    return f"column '{column}' ({column_type}) expects {expected}"


def trigger_id_taken(trigger_id: str) -> str:
    return f"trigger id '{trigger_id}' belongs to another table; omit it to get a new id"


def page_invalid(skip: object, limit: object) -> str:
    return f"invalid page: skip must be >= 0 and limit in [1, 500] (got skip={skip}, limit={limit})"


def tick_limit_invalid(name: str, low: int, high: int, value: object) -> str:
    return f"{name} must be an integer in [{low}, {high}] (got {value!r})"


RECORD_DATA_NOT_OBJECT = "record data must be an object mapping column names to values"


def run_status_invalid(status: object) -> str:
    return f"run status filter '{status}' is invalid: use pending, running, done, failed or stuck"


# ---- edges: request bodies (SPEC §15: bad input is 400/422, never 500) ----
BODY_NUL = "text must not contain NUL (\\u0000) characters"
BODY_NON_FINITE = "numbers must be finite (NaN and Infinity are not JSON)"


def body_too_deep(limit: int) -> str:
    return f"the request body nests deeper than {limit} levels"


# ---- data plane: values the store must be able to hold (issue 3 audit) ----
def not_plain_json(what: str) -> str:
    return (
        f"{what} must be plain JSON: strings, finite numbers, booleans, null, lists and objects "
        "with string keys, nested at most 64 levels"
    )


REQUIRES_APPROVAL_NOT_BOOL = "requires_approval must be true or false"


# ---- edges: request bodies, continued (issue 5 audit) ----
BODY_SURROGATE = "text must be valid Unicode (a lone UTF-16 surrogate such as \\ud800 is not)"


# §12 workflows and code-declared schedules
def workflow_id_invalid(kind: str, value: object) -> str:
    return (
        f"{kind} id must be a non-empty string of letters, digits, '_', '.' or '-' "
        f"(starting with a letter or digit, without '__'), got {value!r}"
    )


def schedule_timezone_unknown(tz: object) -> str:
    return (
        f"schedule timezone '{tz}' is not a known IANA zone. "
        "use an IANA name like 'Asia/Taipei' or 'America/New_York'"
    )


def schedule_overlap_invalid(value: object) -> str:
    return f"schedule overlap must be 'skip' or 'allow', got {value!r}"


def schedule_field_not_object(name: str) -> str:
    return f"schedule {name} must be an object (a JSON mapping) or omitted"


def schedule_host_zone(schedule_id: str, zone: str) -> str:
    return (
        f"schedule '{schedule_id}' has no timezone: it fires in the host's local zone "
        f"({zone}). Set an explicit IANA timezone so fire times do not depend on the server"
    )


def schedule_id_required(workflow_id: str) -> str:
    return f"workflow '{workflow_id}': every schedule in a list needs a unique, stable 'id'"


def schedule_id_duplicate(schedule_id: str) -> str:
    return f"duplicate schedule id '{schedule_id}'"


def schedule_id_too_long(schedule_id: str) -> str:
    return f"schedule id '{schedule_id}' is longer than 64 characters; shorten the ids"


def not_a_schedule(workflow_id: str) -> str:
    return f"workflow '{workflow_id}': schedule must be a Schedule or a list of Schedules"


def step_model_invalid(step_id: str) -> str:
    return f"step '{step_id}': input and output must be Pydantic models, and the step callable"


def parallel_empty(workflow_id: str) -> str:
    return f"workflow '{workflow_id}': parallel() needs at least one step"


def not_a_step(workflow_id: str, value: object) -> str:
    return f"workflow '{workflow_id}': expected a step made with @step(id=...), got {value!r}"


def step_id_duplicate(workflow_id: str, step_id: str) -> str:
    return f"workflow '{workflow_id}': duplicate step id '{step_id}'"


def workflow_without_steps(workflow_id: str) -> str:
    return f"workflow '{workflow_id}' has no steps: add one with .then(step) before .commit()"


def workflow_duplicate(workflow_id: str) -> str:
    return f"workflow '{workflow_id}' is registered twice"


def not_a_workflow(value: object) -> str:
    return f"expected a committed workflow (workflow(...).then(...).commit()), got {value!r}"


def workflow_unknown(workflow_id: object) -> str:
    return f"unknown workflow '{workflow_id}': no workflow with this id is registered"


SCHEDULE_NOT_FOUND = "schedule not found"
WORKFLOW_RUN_NOT_FOUND = "workflow run not found"


def schedule_declared(schedule_id: str) -> str:
    return (
        f"schedule '{schedule_id}' is declared in code: remove it from the workflow's "
        "schedule to delete it (pause it to stop it now)"
    )


def workflow_run_not_cancelable(status: str) -> str:
    return f"workflow run is {status}; only pending, running or suspended runs can be canceled"


def workflow_run_not_suspended(status: str) -> str:
    return f"workflow run is {status}; only suspended runs can be resumed"


def workflow_run_not_retryable(status: str) -> str:
    return f"workflow run is {status}; only failed or canceled runs can be retried"


def workflow_run_status_invalid(status: object) -> str:
    return (
        f"invalid workflow run status '{status}'. valid statuses: "
        "pending, running, success, failed, suspended, canceled"
    )


WORKFLOW_RUN_CANCELED = "workflow run canceled"


def workflow_not_registered_here(workflow_id: str) -> str:
    return f"workflow '{workflow_id}' is not registered in this process"


def permission_required(permission: str) -> str:
    return f"this token lacks the '{permission}' permission"


def token_permission_invalid(permission: object) -> str:
    return f"invalid permission '{permission}'. valid permissions: schedules:read, schedules:write"


# issue 11: outbound action deadline
ACTION_TIMEOUT_INVALID = "timeout_s must be a positive number of seconds"


def action_deadline_passed(method: str, url: str, seconds: float, error: str) -> str:
    return (
        f"{method} {url} failed: {error}: no complete answer within the action's {seconds:g} s "
        "deadline (timeout_s, connect + headers + body)"
    )


# ---- limits: amplification and tenant reach (issue 11; texts the SPEC leaves to us) ----
def rendered_too_large(limit: int) -> str:
    return (
        f"the rendered template is larger than {limit} bytes (TOCSIN_MAX_RENDERED_BYTES); "
        "nothing was sent or written: repeat fewer or smaller cells"
    )


def setting_not_positive_int(name: str, raw: str) -> str:
    return f"{name} must be a positive whole number, got {raw!r}"


def too_many_columns(count: int, limit: int) -> str:
    return f"a table may have at most {limit} columns (TOCSIN_MAX_COLUMNS); got {count}"


def column_name_too_long(column: str, limit: int) -> str:
    shown = column if len(column) <= 40 else f"{column[:40]}…"
    return (
        f"column name '{shown}' is {len(column)} characters long: at most {limit} are allowed "
        "(TOCSIN_MAX_COLUMN_NAME_CHARS)"
    )


def record_too_large(size: int, limit: int) -> str:
    return (
        f"record data is {size} bytes as JSON: at most {limit} are allowed "
        "(TOCSIN_MAX_RECORD_BYTES)"
    )


def too_many_triggers(count: int, limit: int) -> str:
    return f"a table may have at most {limit} triggers (TOCSIN_MAX_TRIGGERS_PER_TABLE); got {count}"


def too_many_actions(trigger: str, count: int, limit: int) -> str:
    return (
        f"trigger {trigger} has {count} actions: at most {limit} are allowed per trigger "
        "(TOCSIN_MAX_ACTIONS_PER_TRIGGER)"
    )


def notify_other_chatroom(chatroom_id: object) -> str:
    return (
        f"notify chatroom_id '{chatroom_id}' is not this table's chatroom: a notify posts only "
        "to the chatroom the table belongs to (omit chatroom_id to post there)"
    )


def notify_outside_chatroom(scope: object) -> str:
    return (
        f"notify needs the table's own chatroom, and this table is in a {scope} scope: a notify "
        "posts only to the chatroom a table belongs to (chatroom_id cannot name another one)"
    )


# ---- settings and edges (issue 11 hardening) ----
def token_too_short(name: str, length: int, minimum: int) -> str:
    return (
        f"{name} is {length} characters long; a served token needs at least {minimum} "
        "(make one with: python -c 'import secrets; print(secrets.token_urlsafe(32))')"
    )


METRICS_ELSEWHERE = "metrics are served on TOCSIN_METRICS_PORT, not here"
METRICS_TOKEN_INVALID = "Invalid or missing metrics bearer token (TOCSIN_METRICS_TOKEN)"
DATABASE_UNAVAILABLE = "the database is unavailable; retry shortly"
TOKEN_EXPIRES_IN_PAST = "a token's expiry must lie in the future"
TOKEN_NOT_FOUND = "token not found"


def expires_in_invalid(text: str) -> str:
    return (
        f"--expires-in '{text}' is invalid: use a whole number and a unit, "
        "e.g. 90m, 12h, 30d or 2w (s, m, h, d, w)"
    )


def body_too_large(limit: int) -> str:
    return f"the request body is larger than {limit} bytes (TOCSIN_MAX_BODY_BYTES)"


def demo_running(database: str, holder: str, env_file: str) -> str:
    return (
        f"error: another tocsin demo is serving ./{database} from this directory ({holder}). "
        f"Use it (source {env_file}), or stop it (Ctrl-C) before starting a new one; "
        "a second demo at the same time needs another directory"
    )


# ---- one trigger at a time, listings and the CLI (issue 18) ----
TRIGGER_NOT_FOUND = "trigger not found"
TRIGGER_PATCH_NOT_OBJECT = "a trigger patch must be a JSON object (RFC 7396 merge patch)"


def trigger_patch_id_mismatch(trigger_id: str, given: object) -> str:
    return f"a trigger patch keeps the trigger's id: '{trigger_id}' cannot become {given!r}"


def run_window_invalid(name: str) -> str:
    return f"{name} must be a datetime (ISO 8601; without an offset it is read as UTC)"


def unknown_query_parameters(names: list[str], allowed: list[str]) -> str:
    known = ", ".join(allowed) if allowed else "none"
    return f"unknown query parameter(s): {', '.join(names)}; this route accepts: {known}"


def no_database(path: str) -> str:
    return (
        f"no tocsin database here: TOCSIN_DATABASE_URL is unset and ./{path} does not exist. "
        "Set TOCSIN_DATABASE_URL (e.g. sqlite:///tocsin-demo.db after `make run`), run from the "
        "directory that holds the database, or pass --create to create a new one"
    )


def triggers_file_invalid(path: str, reason: str) -> str:
    return f"cannot read triggers from {path}: {reason}"


# --- lanes (SPEC §14, issue 16) ----------------------------------------------------------------


def contract_mismatch(field: str, expected: object, found: object) -> str:
    return f"contract field '{field}' does not verify: expected {expected!r}, found {found!r}"


def lane_window_invalid(start: object, end: object) -> str:
    return (
        f"a lane window needs two aware instants with start < end (half-open [start, end)); "
        f"got start={start!r}, end={end!r}"
    )


def lane_instant_out_of_range(instant: object, earliest: object, latest: object) -> str:
    return f"a lane instant must lie between {earliest} and {latest}, got {instant}"


def lane_attempt_invalid(attempt: object) -> str:
    return f"an attempt number is a positive integer, got {attempt!r}"


def lane_invalid(field: str, value: object) -> str:
    return f"invalid lane {field}: {value!r}"


def lane_duplicate(lane_id: str) -> str:
    return f"lane '{lane_id}' is registered twice"


def lane_unknown(lane_id: object) -> str:
    return f"unknown lane '{lane_id}': no lane with this id is registered"


def lane_trigger_kind_invalid(kind: object) -> str:
    return f"invalid trigger kind {kind!r}: use manual, retry or scheduled"


def lane_decision_invalid(decision: object) -> str:
    return f"invalid decision filter {decision!r}: use ready, noop, stopped, rejected or ignored"


LANE_RETRY_NEEDS_RUN_ID = "a retry names the run it retries: pass run_id"
LANE_RUN_ID_ONLY_FOR_RETRY = "run_id is only accepted with kind='retry'"
LANE_SCHEDULED_NEEDS_TIME = (
    "scheduled_for must be an aware datetime (the instant the run was due); "
    "a scheduled trigger needs it"
)
LANE_RETRY_KEEPS_ITS_TIME = "a retry keeps its run's scheduled_for: do not pass one"


def lane_run_not_found(run_id: object) -> str:
    return f"lane run '{run_id}' not found"


def lane_retry_policy_changed(run_id: str, recorded: str, current: str) -> str:
    return (
        f"run '{run_id}' was recorded under selection policy '{recorded}' but the lane now "
        f"runs '{current}': a changed policy is a new run, trigger its window again instead"
    )


def lane_attempt_superseded(attempt: int) -> str:
    return f"superseded by retry attempt {attempt} (this attempt was left unfinished)"


# §11 infrastructure as code (trigger documents)
def iac_line_invalid(line: int, reason: str) -> str:
    return f"line {line}: not a JSON object ({reason}); each line is one trigger document"


def iac_document_invalid(number: int, reason: str) -> str:
    return f"document {number}: {reason}"


IAC_DOCUMENTS_NOT_LIST = "documents must be a list of trigger documents (JSON objects)"
IAC_TABLES_NOT_NAMES = "tables must be a list of table names"


def iac_table_unknown(name: str, scope: str, scope_id: str) -> str:
    return (
        f"table '{name}' is not a live table of {scope}:{scope_id}. "
        "documents name their table by its name in the scope given"
    )


def iac_table_ambiguous(name: str, count: int) -> str:
    return (
        f"table name '{name}' names {count} live tables of this scope; "
        "trigger documents need table names that are unique within the scope"
    )


def iac_trigger_id_in_two_tables(trigger_id: str) -> str:
    return f"trigger id '{trigger_id}' appears in documents of two tables"


# --- schedule documents: imperative workflow schedules as code (SPEC §11, §12) --------------

IAC_DOCUMENT_BOTH_KINDS = (
    "a document names either a 'table' (a trigger document) or a 'workflow' (a schedule "
    "document), not both"
)
IAC_TABLES_NEED_SCOPE = "table documents need a scope (<chatroom|workspace|user>:<uuid>)"
IAC_WORKFLOWS_NOT_NAMES = "workflows must be a list of workflow ids"
IAC_SCHEDULES_NOT_HERE = (
    "schedule documents ('workflow') are not taken here: this endpoint manages one scope's "
    "table triggers; plan and apply schedule documents with the CLI or the Python facade"
)


def iac_schedule_keys_unknown(keys: list[str], allowed: list[str]) -> str:
    return f"unknown keys {keys} in a schedule document; it may hold {allowed}"


def iac_schedule_id_invalid(value: object) -> str:
    return (
        f"schedule id {value!r} is invalid: an imperative schedule id is 'sch_' followed by "
        "letters, digits, '_', '.' or '-' (at most 64 characters), or left out"
    )


def iac_schedule_id_twice(schedule_id: str) -> str:
    return f"schedule id '{schedule_id}' appears in two schedule documents"


def iac_schedule_declared(schedule_id: str) -> str:
    return (
        f"schedule '{schedule_id}' is declared in code: schedule documents manage imperative "
        "schedules only (a declared schedule changes with its workflow's code)"
    )


def iac_schedule_other_workflow(schedule_id: str, stored: str, given: str) -> str:
    return (
        f"schedule '{schedule_id}' belongs to workflow '{stored}', not '{given}': a schedule "
        "does not move between workflows (delete it and create a new one)"
    )


# --- Studio (issue 13, SPEC §16) --------------------------------------------------------------
STUDIO_CSRF_INVALID = "this form is missing its CSRF token or it does not match; reload the page"
STUDIO_READ_ONLY = "your token may look but not change this (ask for a moderator or write token)"
STUDIO_TOKEN_INVALID = "that token is not valid (unknown, expired or revoked); paste another"
STUDIO_NO_SCHEDULES = "your token lacks the 'schedules:read' permission needed for this page"
STUDIO_NO_SCOPE = "your token has no table scope (chatroom, workspace or user)"
STUDIO_MODERATOR_ONLY = (
    "triggers, the schedule preview and runs need a moderator token of this table's scope"
)
STUDIO_RESUME_DATA_INVALID = "resume data must be JSON (or left empty)"


def studio_lane_instant_invalid(field: str, value: object, zone: str) -> str:
    return (
        f"window {field} must be a date and time like 2026-09-08T07:30 (read in the lane's "
        f"zone, {zone}); got {value!r}"
    )


# ---- table schedule triggers: pause and resume (issue 12) ----


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


# --- compound / event triggers of workflow schedules (SPEC §13, issue 14) --------------------


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


# --- field-change conditions of row-event triggers (SPEC §13, issue 14) ----------------------

CHANGED_ONLY_ON_UPDATED = "changed is only allowed with on: 'updated'"
CHANGED_NOT_LIST = "changed must be a non-empty list of column names"
CHANGED_DUPLICATE = "changed lists a column more than once"


def changed_column_missing(column: object) -> str:
    return f"changed column '{column}' does not exist on this table"


# --- issue 17: why didn't it fire? -------------------------------------------------------------

NEXT_FIRES_CLOCK_ONLY = (
    "next fires are computed for interval, daily and cron triggers; a date_column_reached"
    " trigger fires per record (see the schedule preview)"
)
TRIGGER_INVALID_NO_FIRES = "the trigger's stored config is invalid: it never fires until fixed"


def count_invalid(name: str, low: int, high: int, value: object) -> str:
    return f"{name} must be an integer from {low} to {high}, got {value!r}"


def backfill_too_many(count: int, limit: int) -> str:
    return (
        f"the backfill range holds {count} instants, more than {limit}:"
        " narrow it or pass force=True (--force)"
    )


def backfill_range_invalid() -> str:
    return "the backfill range is empty: start must be before end"


def catch_up_invalid(value: object) -> str:
    return f"catch_up must be 'latest', 'none' or 'all', got {value!r}"


def max_catch_up_invalid(value: object) -> str:
    return f"max_catch_up must be an integer from 1 to 10000, got {value!r}"
