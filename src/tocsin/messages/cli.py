"""The command line's own lines: its error and warning lines, what a command prints when it
succeeds, and its tables' titles (texts the SPEC leaves to us)."""

from __future__ import annotations


def cli_error(status: int, detail: str) -> str:
    return f"error ({status}): {detail}"


def cli_warning(note: str) -> str:
    return f"warning: {note}"


def count_title(total: int, noun: str) -> str:
    """A listing's title: ``3 schedule(s)``."""
    return f"{total} {noun}(s)"


def fires_title(total: int, owner_id: str) -> str:
    return f"{total} fire(s) of {owner_id}"


def lane_runs_title(total: int, lane_id: str) -> str:
    return f"{total} scheduled run(s) of {lane_id}"


def skips_title(total: int, owner_id: str) -> str:
    return f"{total} skip range(s) of {owner_id}"


def next_fires_title(owner_id: str) -> str:
    return f"next fires of {owner_id}"


def next_runs_title(lane_id: str) -> str:
    return f"next runs of {lane_id}"


def due_title(at: str, runs: int) -> str:
    return f"at {at}: {runs} run(s) would be created"


def paused_line(target_id: str) -> str:
    return f"paused {target_id}"


def resumed_line(target_id: str, next_at: object, *, lane: bool = False) -> str:
    return f"resumed {target_id}: next {'run' if lane else 'fire'} {next_at}"


def requeued_line(attempt_id: str, lane_id: str) -> str:
    return f"requeued {attempt_id} of {lane_id}: pending"


def schedule_created_line(schedule_id: str, next_at: object) -> str:
    return f"created {schedule_id}: next fire {next_at}"


def trigger_line(description: str) -> str:
    return f"trigger: {description}"


def backfilled_line(schedule_id: str, created: int, existing: int, instants: int) -> str:
    return (
        f"backfilled {schedule_id}: {created} run(s) created, {existing} already backfilled,"
        f" {instants} instant(s)"
    )


def table_created_line(name: str, kind: str, scope_id: str) -> str:
    return f"created table {name!r} in {kind}:{scope_id}"


def token_created_line(
    role: str, scope: str | None, granted: list[str], expires_at: str | None
) -> str:
    what = [f"a {role} token for {scope}"] if scope is not None else ["a token"]
    if granted:
        what.append(f"with {', '.join(sorted(set(granted)))}")
    until = f", expires {expires_at}" if expires_at else ""
    return f"created {' '.join(what)}{until} (stored hashed; copy it now):"


def token_revoked_line(token_id: str, scope: str, role: str) -> str:
    return f"revoked token {token_id} ({scope}, {role})"


def secret_rotated_line(scope: str) -> str:
    return f"new signing secret for {scope} (the previous one no longer signs):"


def iac_plan_line(counts: dict[str, int]) -> str:
    invalid = f", {counts['invalid']} invalid" if counts.get("invalid") else ""
    return (
        f"Plan: {counts['create']} to create, {counts['update']} to update, "
        f"{counts['delete']} to delete, {counts['noop']} unchanged{invalid}."
    )


def iac_applied_line(counts: dict[str, int]) -> str:
    return (
        f"Apply complete: {counts['create']} created, {counts['update']} updated, "
        f"{counts['delete']} deleted."
    )


def iac_created_schedule_line(workflow: str, schedule_id: str) -> str:
    return f"created workflow {workflow} / {schedule_id}"


def iac_created_trigger_line(table: str, trigger_id: str) -> str:
    return f"created {table} / {trigger_id}"


def demo_lines(env: dict[str, str], env_file: str) -> list[str]:
    """What ``tocsin demo`` prints once it serves: where, the tokens, the env file."""
    return [
        f"\ntocsin demo: {env['TOCSIN']}  (OpenAPI docs at {env['TOCSIN']}/docs)",
        f"  Studio (one-click sign-in):   {env['STUDIO']}",
        f"  admin token (X-ADMIN-TOKEN):  {env['ADMIN']}",
        f"  moderator token (Bearer):     {env['TOKEN']}",
        f"  schedules token (Bearer):     {env['SCHEDULES_TOKEN']}",
        f"  demo table:                   {env['TABLE']}",
        f"  demo workflow schedules:      {env['TOCSIN']}/api/schedules?workflowId=demo-digest",
        f"  in another shell: source {env_file}  (then try the README's curl examples)",
        "  runs appear within a minute; Ctrl-C stops the demo.\n",
    ]


def demo_port_in_use(host: str, port: int) -> str:
    return (
        f"error: {host}:{port} is already in use. "
        f"Pick a free port: make run PORT={port + 1}  (or tocsin demo --port {port + 1})"
    )
