"""The fields of each action type and the checks their values must pass (SPEC §10). Pure.

``ACTION_FIELDS``: type → (required fields, optional fields), each field naming its check in
``FIELD_CHECKS`` (check, what the value must be: the error text's words).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from typing import Any

HTTP_METHODS = frozenset({"GET", "POST", "PUT", "PATCH", "DELETE"})
WEBHOOK_METHODS = ("POST", "PUT", "PATCH")
MAX_HORIZON_DAYS = 366
# a header name is an RFC 9110 token; a value may not break out of its line (CR, LF, NUL): such
# a config would fail every run, so it is refused when saved
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_LINE_BREAKERS = frozenset("\r\n\0")


def _headers_ok(value: object) -> bool:
    return isinstance(value, Mapping) and all(
        isinstance(k, str)
        and _TOKEN.fullmatch(k) is not None
        and isinstance(v, str)
        and _LINE_BREAKERS.isdisjoint(v)
        for k, v in value.items()
    )


_SLOT_COLUMNS = ("weekday_column", "start_column", "end_column", "slot_minutes_column")
# type -> (required fields, optional fields); a field maps to the name of its check
ACTION_FIELDS: dict[str, tuple[dict[str, str], dict[str, str]]] = {
    "notify": ({"message": "text"}, {"chatroom_id": "text"}),
    "webhook": (
        {"url": "text"},
        {"payload": "json", "headers": "headers", "timeout_s": "seconds", "method": "hook_method"},
    ),
    "api_call": (
        {"method": "method", "url": "text"},
        {"headers": "headers", "body": "json", "timeout_s": "seconds"},
    ),
    "create_record": ({"values": "object"}, {"table_id": "text"}),
    "update_record": ({"record": "text", "values": "object"}, {"table_id": "text"}),
    "delete_record": ({"record": "text"}, {"table_id": "text"}),
    "invoke_command": ({"command": "text"}, {"inputs": "object"}),
    "materialize_slots": (
        {"source_table_id": "text", "horizon_days": "days"},
        {"target_table_id": "text", "capacity_column": "text"}
        | dict.fromkeys(_SLOT_COLUMNS, "text"),
    ),
    "start_workflow": ({"workflow_id": "text"}, {"input": "json"}),
}
ACTION_TYPES = tuple(ACTION_FIELDS)
FIELD_CHECKS: dict[str, tuple[Callable[[Any], bool], str]] = {
    "text": (lambda v: isinstance(v, str) and bool(v.strip()), "a non-empty string"),
    "json": (lambda v: True, "any JSON value"),
    "object": (lambda v: isinstance(v, Mapping), "an object"),
    "headers": (
        _headers_ok,
        "an object of header names (RFC 9110 tokens) to string values without CR, LF or NUL",
    ),
    "method": (lambda v: isinstance(v, str) and v.upper() in HTTP_METHODS, "an HTTP method"),
    "hook_method": (lambda v: v in WEBHOOK_METHODS, "one of " + ", ".join(WEBHOOK_METHODS)),
    # an outbound action's timeout_s (the runtime caps it: TOCSIN_ACTION_TIMEOUT_MAX_S)
    "seconds": (
        lambda v: type(v) in (int, float) and 0 < v < math.inf,
        "a positive number of seconds",
    ),
    "days": (
        lambda v: type(v) is int and 1 <= v <= MAX_HORIZON_DAYS,
        f"an integer in [1, {MAX_HORIZON_DAYS}]",
    ),
}


__all__ = [
    "ACTION_FIELDS",
    "ACTION_TYPES",
    "FIELD_CHECKS",
    "HTTP_METHODS",
    "MAX_HORIZON_DAYS",
    "WEBHOOK_METHODS",
]
