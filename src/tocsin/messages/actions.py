"""What an action answers: its failures (a run's ``error``) and its results (a run's
``action_results``). Texts the SPEC leaves to us."""

from __future__ import annotations

from collections.abc import Iterable


# ---- outbound requests: webhook and api_call ----
def host_unresolvable(host: str, reason: object | None = None) -> str:
    return f"cannot resolve host '{host}'" + ("" if reason is None else f": {reason}")


def outbound_url_invalid(url: str, reason: object) -> str:
    return f"outbound URL is invalid: '{url}': {reason}"


def outbound_url_not_http(url: str) -> str:
    return f"outbound URL must be http(s) with a host: '{url}'"


def outbound_address_refused(host: str, address: object) -> str:
    return (
        f"outbound request to '{host}' refused: {address} is a loopback, private or "
        "link-local address (allow it with TOCSIN_OUTBOUND_ALLOW)"
    )


def request_failed(method: str, url: str, exc: BaseException) -> str:
    return f"{method} {url} failed: {type(exc).__name__}: {exc}"


def request_answered(method: str, url: str, status: int, body: str) -> str:
    return f"{method} {url} answered {status}: {body[:200]}"


def api_call_method_invalid(method: str, allowed: Iterable[str]) -> str:
    return f"api_call method '{method}' is not one of {sorted(allowed)}"


# ---- record actions: create_record, update_record, delete_record ----
def target_table_missing(table_id: str) -> str:
    return f"target table '{table_id}' does not exist or is trashed"


def record_values_not_object(action_type: str) -> str:
    return f"{action_type} 'values' must be an object of column → value"


RECORD_ID_EMPTY = "record_id rendered empty: no record to write"


def change_staged(change_id: object, operation: str) -> str:
    return f"staged change {change_id} awaits approval ({operation})"


def record_written(verb: str, record_id: object, table_id: str) -> str:
    """``created`` / ``updated`` / ``deleted`` record … in table …"""
    return f"{verb} record {record_id} in table {table_id}"


# ---- invoke_command ----
INVOKE_INPUTS_NOT_OBJECT = "invoke_command 'inputs' must be an object of name → value"


def command_key_busy(name: str, key: str) -> str:
    return f"command {name}: key {key} is held by another attempt"


def command_conflict(name: str, exc: BaseException) -> str:
    return f"command {name}: {exc}"


def command_failed(name: str, exc: BaseException) -> str:
    return f"command {name} failed: {type(exc).__name__}: {exc}"


# ---- materialize_slots ----
def horizon_days_invalid(maximum: int) -> str:
    return f"materialize_slots horizon_days must be an integer in [1, {maximum}]"


MATERIALIZE_NEEDS_SOURCE = "materialize_slots needs a 'source_table_id'"


def slots_materialized(created: int, days: int, first_day: str) -> str:
    return f"materialized {created} new slot(s) over {days} day(s) from {first_day}"


# ---- the store under an action ----


def action_needs_string(action_type: str, key: str) -> str:
    return f"{action_type} action needs a non-empty '{key}' string"


ACTION_DEADLINE_REACHED = "the action's deadline passed"
