"""The data plane and execution: tables, columns, records, actions, staged changes, commands."""

from __future__ import annotations

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


def page_invalid(skip: object, limit: object) -> str:
    return f"invalid page: skip must be >= 0 and limit in [1, 500] (got skip={skip}, limit={limit})"


def tick_limit_invalid(name: str, low: int, high: int, value: object) -> str:
    return f"{name} must be an integer in [{low}, {high}] (got {value!r})"


RECORD_DATA_NOT_OBJECT = "record data must be an object mapping column names to values"


def run_status_invalid(status: object) -> str:
    return f"run status filter '{status}' is invalid: use pending, running, done, failed or stuck"


# ---- data plane: values the store must be able to hold ----
def not_plain_json(what: str) -> str:
    return (
        f"{what} must be plain JSON: strings, finite numbers, booleans, null, lists and objects "
        "with string keys, nested at most 64 levels"
    )


REQUIRES_APPROVAL_NOT_BOOL = "requires_approval must be true or false"


# outbound action deadline
ACTION_TIMEOUT_INVALID = "timeout_s must be a positive number of seconds"


def action_deadline_passed(method: str, url: str, seconds: float, error: str) -> str:
    return (
        f"{method} {url} failed: {error}: no complete answer within the action's {seconds:g} s "
        "deadline (timeout_s, connect + headers + body)"
    )
