"""Workflows and schedules (§12), lanes (§14), infrastructure as code (§11)."""

from __future__ import annotations

from datetime import datetime

from tocsin.messages.spec import quoted_zone


# §12 workflows and code-declared schedules
def workflow_id_invalid(kind: str, value: object) -> str:
    return (
        f"{kind} id must be a non-empty string of letters, digits, '_', '.' or '-' "
        f"(starting with a letter or digit, without '__'), got {value!r}"
    )


def schedule_timezone_unknown(tz: object) -> str:
    return (
        f"schedule timezone '{quoted_zone(tz)}' is not a known IANA zone. "
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


def workflow_tenants_not_bool(workflow_id: str) -> str:
    return f"workflow '{workflow_id}': tenants must be True or False"


def max_concurrent_invalid(owner: str, value: object) -> str:
    return f"{owner}: max_concurrent must be a whole number from 1 to 10000, got {value!r}"


def workflow_duplicate(workflow_id: str) -> str:
    return f"workflow '{workflow_id}' is registered twice"


def not_a_workflow(value: object) -> str:
    return f"expected a committed workflow (workflow(...).then(...).commit()), got {value!r}"


def workflow_unknown(workflow_id: object) -> str:
    return f"unknown workflow '{workflow_id}': no workflow with this id is registered"


def workflow_start_input_invalid(workflow_id: str, problems: list[str]) -> str:
    return (
        f"input invalid for workflow '{workflow_id}' (its input model refuses it; "
        f"nothing was started): {'; '.join(problems)}"
    )


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


# --- lanes (SPEC §14) -------------------------------------------------------------------------


def contract_mismatch(field: str, expected: object, found: object) -> str:
    return f"contract field '{field}' does not verify: expected {expected!r}, found {found!r}"


# what a contract field was expected to be, and what was found where it was absent
CONTRACT_EXPECTED_VALUE = "a value"
CONTRACT_FOUND_MISSING = "missing"
CONTRACT_EXPECTED_TEXT = "a non-empty string"
CONTRACT_EXPECTED_INSTANT = "RFC 3339 with an offset"
CONTRACT_EXPECTED_REFS = "a list of refs"
CONTRACT_EXPECTED_LIST = "a list"
CONTRACT_EXPECTED_REJECTIONS = "{ref, reason} entries"
CONTRACT_EXPECTED_NOT_ASKED = "rejected or ignored"
CONTRACT_EXPECTED_NO_SELECTION = "empty (source not asked)"
CONTRACT_EXPECTED_OBJECT = "a JSON object"
CONTRACT_EXPECTED_AFTER_START = "after window.start_inclusive"


def contract_expected_attempt(run_id: str) -> str:
    return f"attempt_<hash of {run_id} and 1..>"


def selection_policy_raised(exc: BaseException) -> str:
    return f"selection policy raised {type(exc).__name__}: {exc}"


def lane_window_invalid(start: object, end: object) -> str:
    return (
        f"a lane window needs two aware instants with start < end (half-open [start, end)); "
        f"got start={_instant(start)}, end={_instant(end)}"
    )


def _instant(value: object) -> str:
    """An instant as RFC 3339 (a naive one marked so); anything else as its repr."""
    if isinstance(value, datetime):
        text = value.isoformat()
        return text if value.tzinfo is not None else f"{text} (naive)"
    return repr(value)


def lane_instant_out_of_range(instant: object, earliest: object, latest: object) -> str:
    return f"a lane instant must lie between {earliest} and {latest}, got {instant}"


def lane_attempt_invalid(attempt: object) -> str:
    return f"an attempt number is a positive integer, got {attempt!r}"


def lane_invalid(field: str, value: object) -> str:
    return f"invalid lane {field}: {value!r}"


LANE_ZONE_MISSING = "schedule.timezone (a scheduled lane names its zone)"
LANE_ZONE_DIFFERS = "timezone (differs from schedule.timezone)"


def lane_row_vanished(lane_id: str) -> str:
    return f"lane row {lane_id!r} vanished"


def lane_without_schedule(lane_id: str) -> str:
    return f"lane {lane_id!r} has no schedule"


def lane_duplicate(lane_id: str) -> str:
    return f"lane '{lane_id}' is registered twice"


def lane_unknown(lane_id: object) -> str:
    return f"unknown lane '{lane_id}': no lane with this id is registered"


def lane_not_scheduled(lane_id: object) -> str:
    return f"lane '{lane_id}' has no schedule: only a scheduled lane can be paused or resumed"


def lane_trigger_kind_invalid(kind: object) -> str:
    return f"invalid trigger kind {kind!r}: use manual, retry or scheduled"


def lane_decision_invalid(decision: object) -> str:
    return f"invalid decision filter {decision!r}: use ready, noop, stopped, rejected or ignored"


LANE_WINDOW_MISSING = (
    "this lane trigger needs a window: "
    '{"start_inclusive": ..., "end_exclusive": ...}, two aware instants with start < end'
)
LANE_RETRY_NEEDS_RUN_ID = "a retry names the run it retries: pass run_id"
LANE_RUN_ID_ONLY_FOR_RETRY = "run_id is only accepted with kind='retry'"
LANE_SCHEDULED_NEEDS_TIME = (
    "scheduled_for must be an aware datetime (the instant the run was due); "
    "a scheduled trigger needs it"
)
LANE_RETRY_KEEPS_ITS_TIME = "a retry keeps its run's scheduled_for: do not pass one"


def lane_run_not_found(run_id: object) -> str:
    return f"lane run '{run_id}' not found"


def lane_attempt_not_found(attempt_id: object) -> str:
    return f"lane attempt '{attempt_id}' not found"


def lane_attempt_not_requeueable(status: str) -> str:
    return (
        f"lane attempt is {status}; only pending (or stale-running) attempts can be requeued;"
        " a failed run is retried with kind 'retry'"
    )


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


def iac_trigger_refused(table: str, trigger: str, detail: str) -> str:
    """A plan entry apply would refuse: ``detail`` is the text ``PUT …/triggers`` answers."""
    return f"table '{table}', trigger {trigger}: {detail}"


def iac_trigger_label(trigger_id: object, name: object, position: int) -> str:
    """A trigger of a plan: ``'<id>'``, else its position among its table's documents (and its
    name when it has one)."""
    if isinstance(trigger_id, str) and trigger_id:
        return f"'{trigger_id}'"
    return f"#{position} '{name}'" if isinstance(name, str) and name else f"#{position}"


def iac_plan_invalid(count: int) -> str:
    """``tocsin plan`` / ``tocsin apply`` when documents would be refused (exit 1)."""
    noun = "document is" if count == 1 else "documents are"
    return f"{count} {noun} invalid: apply would refuse them (400) and write nothing"


def trigger_unreadable(exc: object) -> str:
    return f"unreadable trigger: {exc}"


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


def iac_schedule_key_not_string(key: str, value: object) -> str:
    return f"{key} must be a string, got {value!r}"


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


# retries, failure alerts and timeouts of workflow runs and lanes
def _seconds(value: float) -> str:
    return f"{value:g} s"


def run_policy_invalid(owner: str, reason: str) -> str:
    """``owner``: ``workflow 'w'``, ``step 's'``, ``schedule 'wf_w'``, ``lane 'l'``."""
    return f"{owner}: {reason}"


def on_failure_invalid(owner: str, value: object) -> str:
    return (
        f"{owner}: on_failure must be a list of actions or a callable taking the failed run, "
        f"got {type(value).__name__}"
    )


def timeout_s_invalid(owner: str, value: object) -> str:
    return f"{owner}: timeout_s must be a number of seconds above 0 (at most 86400), got {value!r}"


def step_timed_out(step_id: str, limit_s: float) -> str:
    return f"step '{step_id}' timed out after {_seconds(limit_s)} (its timeout_s)"


def run_timed_out(step_id: str, workflow_id: str, limit_s: float) -> str:
    return (
        f"step '{step_id}' timed out: workflow '{workflow_id}' runs for at most "
        f"{_seconds(limit_s)} (its timeout_s)"
    )


def alert_callable_failed(error: str) -> str:
    return f"on_failure callable raised: {error}"


def alert_action_failed(action_id: str, error: str) -> str:
    return f"on_failure action '{action_id}' failed: {error}"


ALERT_NO_ACTIONS_HERE = "on_failure actions cannot run here: this process has no action runner"
