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


def due_title(at: str, runs: int) -> str:
    return f"at {at}: {runs} run(s) would be created"


def paused_line(target_id: str) -> str:
    return f"paused {target_id}"


def resumed_line(target_id: str, next_at: object, *, lane: bool = False) -> str:
    return f"resumed {target_id}: next {'run' if lane else 'fire'} {next_at}"


def schedule_created_line(schedule_id: str, next_at: object) -> str:
    return f"created {schedule_id}: next fire {next_at}"


def trigger_line(description: str) -> str:
    return f"trigger: {description}"


def backfilled_line(schedule_id: str, created: int, existing: int, instants: int) -> str:
    return (
        f"backfilled {schedule_id}: {created} run(s) created, {existing} already backfilled,"
        f" {instants} instant(s)"
    )
