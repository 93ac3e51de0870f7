"""Driving tocsin: settings read from the environment, ``--app`` loading, the command line's
own errors and the facade's argument checks. Texts the SPEC leaves to us."""

from __future__ import annotations

from collections.abc import Iterable


# ---- settings (TOCSIN_* variables) ----
def setting_not_positive_seconds(name: str, raw: str) -> str:
    return f"{name} must be a positive number of seconds, got {raw!r}"


def setting_not_address(name: str, raw: str) -> str:
    return f"{name} must be PORT or HOST:PORT (port in [1, 65535]), got {raw!r}"


# ---- --app module:attr (TOCSIN_APP) ----
def app_spec_invalid(spec: str) -> str:
    return f"--app must be 'module:attr', got {spec!r}"


def app_module_unimportable(module_name: str, reason: object) -> str:
    return f"cannot import {module_name!r} for --app: {reason}"


def app_attribute_missing(module_name: str, attr: str) -> str:
    return f"module {module_name!r} has no attribute {attr!r}"


def app_not_workflows(spec: str) -> str:
    return f"--app {spec!r} must name a Tocsin, a workflow or a list of workflows"


# ---- the command line ----
def column_option_invalid(spec: str) -> str:
    return f"--column '{spec}' must be NAME=TYPE (e.g. Due=datetime)"


# ---- the facade's arguments ----
def now_not_aware(now: object) -> str:
    return f"now must be an aware datetime, got {now!r}"


COMMAND_NAME_EMPTY = "command name must be a non-empty string"
OLDER_THAN_NEGATIVE = "older_than_s must be >= 0"


def requeue_status_invalid(allowed: Iterable[str]) -> str:
    return f"requeue status must be one of {', '.join(allowed)}"


def change_status_invalid(allowed: Iterable[str]) -> str:
    return f"status must be one of {', '.join(allowed)}"


def page_bounds_invalid(maximum: int) -> str:
    return f"skip must be >= 0 and limit in [1, {maximum}]"


# ---- the command line's own answers (each printed after "error: " where it is one) ----
TOKEN_CREATE_NEEDS_GRANT = "give --scope, --permission, or both"


def option_not_json(name: str, reason: object) -> str:
    return f"{name} is not valid JSON: {reason}"


def input_not_json(reason: object) -> str:
    return f"--input is not JSON: {reason}"


def instant_option_invalid(name: str, text: str) -> str:
    return f"{name} must be an ISO instant with an offset, got {text!r}"


def database_unopenable(url: str, reason: str) -> str:
    return f"cannot open the database {url}: {reason}"


def file_unreadable(path: object, reason: object) -> str:
    return f"cannot read {path}: {reason}"


def contract_line_not_json(number: int, reason: str) -> str:
    return f"line {number}: not JSON ({reason})"


def contract_line_mismatch(number: int, field: str, detail: str) -> str:
    return f"line {number}: field {field}: {detail}"


def contracts_verified(count: int) -> str:
    return f"{count} contract(s) verified"


IAC_NO_CHANGES = "No changes. Nothing to apply."
IAC_CONFIRM_APPLY = "Apply these changes?"
IAC_APPLY_CANCELLED = "Apply cancelled."
IAC_EXPORT_NEEDS_WHAT = "give --scope (trigger documents), --schedules or --workflow"

CLAIM_PAST_LIMIT = "a claim met another at a trigger's max_concurrent; claiming again"


# ---- a caller's mistake in the Python API (never a user's input: that is checked first) ----
def run_pool_size_invalid(size: object) -> str:
    return f"RunPool size must be >= 1, got {size}"


RUN_POOL_FULL = "RunPool.submit without a free slot"
TENANT_SAVE_NEEDS_TOKEN = "a tenant save needs the principal of a stored token"


def staged_operation_unknown(operation: object) -> str:
    return f"unknown staged operation {operation!r}"


def change_decision_invalid(status: object) -> str:
    return f"decide_change: {status!r} is not a decision"


def change_finish_invalid(status: object) -> str:
    return f"finish_change: {status!r} does not follow applying"


def store_naive_datetime(value: object) -> str:
    return f"naive datetime refused by the store: {value!r}"


MIGRATIONS_OUTSIDE_TOCSIN = "tocsin migrations run through tocsin.store.migrate.upgrade_to_head"


def pool_role_unknown(role: object) -> str:
    return f"unknown pool role {role!r}"


def run_filter_unknown(status: object, known: object) -> str:
    return f"unknown run status filter {status!r}; expected one of {known}"


def finish_status_invalid(status: object) -> str:
    return f"finish_runs: not a status a run finishes in: {status!r}"


def requeue_runs_status_invalid(status: object) -> str:
    return f"requeue_runs: status must be pending or running, not {status!r}"


WRITE_IN_READ_ONLY = "write attempted in a read-only transaction"
