"""The edges: HTTP auth and tokens, request bodies, limits, settings, listings and the CLI,
Studio."""

from __future__ import annotations

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


# ---- edges: actions that reach app code, saved from a tenant route (SPEC §10, §15) ----
_TARGETS = {
    "start_workflow": ("workflow", "workflow(..., tenants=True)", "no workflow was started"),
    "invoke_command": ("command", "register_command(..., tenants=True)", "no command was invoked"),
}


def target_not_exposed(kind: str, target: str) -> str:
    """A tenant token without ``schedules:write`` saves an action whose target is not exposed."""
    noun, how, _ = _TARGETS[kind]
    return (
        f"{kind} action: {noun} '{target}' is not exposed to tenants ({how}); saving it needs "
        "a token with the 'schedules:write' permission"
    )


def target_refused(kind: str, target: str, token_id: str) -> str:
    """The run-time check of a tenant-saved action failed: target not exposed, token gone."""
    noun, _, effect = _TARGETS[kind]
    return (
        f"{kind} action refused: {noun} '{target}' is not exposed to tenants and token "
        f"{token_id}, which saved this action, no longer holds the 'schedules:write' permission "
        f"(revoked, expired or deleted); {effect}"
    )


# ---- edges: request bodies (SPEC §15: bad input is 400/422, never 500) ----
BODY_NUL = "text must not contain NUL (\\u0000) characters"
BODY_NON_FINITE = "numbers must be finite (NaN and Infinity are not JSON)"


def body_too_deep(limit: int) -> str:
    return f"the request body nests deeper than {limit} levels"


# ---- edges: request bodies, continued ----
BODY_SURROGATE = "text must be valid Unicode (a lone UTF-16 surrogate such as \\ud800 is not)"


# ---- limits: amplification and tenant reach (texts the SPEC leaves to us) ----
def rendered_too_large(limit: int) -> str:
    return (
        f"the rendered template is larger than {limit} bytes (TOCSIN_MAX_RENDERED_BYTES); "
        "nothing was sent or written: repeat fewer or smaller cells"
    )


def setting_not_positive_int(name: str, raw: str) -> str:
    return f"{name} must be a positive whole number, got {raw!r}"


def setting_not_timeout(name: str, raw: str) -> str:
    return f"{name} must be a number of seconds >= 0 (0: no limit), got {raw!r}"


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


# ---- settings and edges: tokens, bounds and hardening ----
def token_too_short(name: str, length: int, minimum: int) -> str:
    return (
        f"{name} is {length} characters long; a served token needs at least {minimum} "
        "(make one with: python -c 'import secrets; print(secrets.token_urlsafe(32))')"
    )


METRICS_ELSEWHERE = "metrics are served on TOCSIN_METRICS_PORT, not here"
METRICS_TOKEN_INVALID = "Invalid or missing metrics bearer token (TOCSIN_METRICS_TOKEN)"
DATABASE_UNAVAILABLE = "the database is unavailable; retry shortly"
STORAGE_FULL = "storage full: the database cannot grow; free space and retry"


# ---- a database outage, as the worker and the ticker log it: one line when it starts, one when
# it ends (the traceback once, with the first) ----
def database_unavailable(reason: str) -> str:
    return (
        f"database unavailable ({reason}); retrying with a pause that doubles up to "
        "TOCSIN_DB_BACKOFF_MAX_S, and logging nothing more until it is back"
    )


def database_back(seconds: float) -> str:
    return f"database back after {seconds:.0f} s"


def transient_conflict(reason: str) -> str:
    """A lock conflict or a timeout (a pool's ``lock_timeout``, ``statement_timeout``): 503 with
    ``Retry-After`` for a request, retried in place for a run (SPEC §9.5)."""
    return f"transient database conflict: {reason}"


def statement_canceled(reason: str) -> str:
    """A statement past its pool's ``statement_timeout``: 503 with ``Retry-After``."""
    return f"the database canceled a statement ({reason}); retry shortly"


TOKEN_EXPIRES_IN_PAST = "a token's expiry must lie in the future"
TOKEN_NOT_FOUND = "token not found"


def expires_in_invalid(text: str) -> str:
    return (
        f"--expires-in '{text}' is invalid: use a whole number and a unit, "
        "e.g. 90m, 12h, 30d or 2w (s, m, h, d, w)"
    )


def body_too_large(limit: int) -> str:
    return f"the request body is larger than {limit} bytes (TOCSIN_MAX_BODY_BYTES)"


def body_too_slow(seconds: float) -> str:
    return f"the request body did not arrive within {seconds:g} s (TOCSIN_BODY_TIMEOUT_S)"


def demo_running(database: str, holder: str, env_file: str) -> str:
    return (
        f"error: another tocsin demo is serving ./{database} from this directory ({holder}). "
        f"Use it (source {env_file}), or stop it (Ctrl-C) before starting a new one; "
        "a second demo at the same time needs another directory"
    )


# ---- one trigger at a time, listings and the CLI ----
TRIGGER_NOT_FOUND = "trigger not found"
TRIGGER_PATCH_NOT_OBJECT = "a trigger patch must be a JSON object (RFC 7396 merge patch)"


def trigger_patch_id_mismatch(trigger_id: str, given: object) -> str:
    return f"a trigger patch keeps the trigger's id: '{trigger_id}' cannot become {given!r}"


def run_window_invalid(name: str) -> str:
    return f"{name} must be a datetime (ISO 8601; without an offset it is read as UTC)"


def unknown_query_parameters(names: list[str], allowed: list[str]) -> str:
    known = ", ".join(allowed) if allowed else "none"
    return f"unknown query parameter(s): {', '.join(names)}; this route accepts: {known}"


NO_BODY_EXPECTED = (
    "this route takes no request body (send none, or {}): its fields would be ignored"
)


def outbound_allow_invalid(entry: str, problem: str) -> str:
    return f"TOCSIN_OUTBOUND_ALLOW entry {entry!r}: {problem}"


def no_database(path: str) -> str:
    return (
        f"no tocsin database here: TOCSIN_DATABASE_URL is unset and ./{path} does not exist. "
        "Set TOCSIN_DATABASE_URL (e.g. sqlite:///tocsin-demo.db after `make run`), run from the "
        "directory that holds the database, or pass --create to create a new one"
    )


def workflows_code_not_loaded(count: int) -> str:
    return (
        f"code not loaded for {count} workflow(s): listed from the database's schedules and "
        "runs. Pass --app module:attr (or set TOCSIN_APP) with their code to see their steps "
        "and start them"
    )


def workflow_given_twice(positional: str, option: str) -> str:
    return f"two workflows given: {positional!r} and --workflow {option!r}; give one"


def triggers_file_invalid(path: str, reason: str) -> str:
    return f"cannot read triggers from {path}: {reason}"


# --- Studio (SPEC §16) -----------------------------------------------------------------------
def studio_bad_request(where: str, problem: str) -> str:
    return f"this address is not one Studio can show: {where}: {problem}"


STUDIO_CSRF_INVALID = "this form is missing its CSRF token or it does not match; reload the page"
STUDIO_READ_ONLY = "your token may look but not change this (ask for a moderator or write token)"


def studio_sign_in_limited(per_minute: int, retry_after_s: int) -> str:
    return (
        f"too many sign-ins from this address (at most {per_minute} a minute); "
        f"try again in {retry_after_s} s"
    )


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


INSTANT_NOT_TEXT = (
    "an instant is ISO 8601 text such as '2026-12-01T09:00:00Z', not a number of seconds"
)
