"""Why (not) on the command line: ``tocsin due``, ``tocsin triggers fires|skips|next|run
--table T TRIGGER`` and ``tocsin schedules skips|next|backfill``; Rich tables (``--json``)."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Annotated, Any

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

from tocsin import messages

from .data import TableOpt, TriggerArg, triggers_app
from .processes import CreateOpt
from .render import (
    JsonOpt,
    Limit,
    Skip,
    facade,
    output,
    print_history,
    print_next,
    print_rows,
    print_skips,
)
from .workflows import schedules_app

AtOpt = Annotated[
    str | None, typer.Option("--at", help="An ISO instant with its offset (2026-12-01T09:00Z).")
]
NOpt = Annotated[int, typer.Option("-n", min=1, max=1000, help="How many instants.")]
DUE_COLUMNS = ("kind", "target", "status", "reason", "runs", "detail")
TRIGGER_FIRE_COLUMNS = ("scheduled_for", "fired_at", "run_id", "run_status", "record_id")


def _instant(text: str | None, name: str = "--at") -> datetime | None:
    """An aware instant from ``text`` (``Z`` accepted); exit 2 when it is not one."""
    if text is None:
        return None
    try:
        at = datetime.fromisoformat(text.replace("z", "Z").replace("Z", "+00:00"))
    except ValueError:
        at = None
    if at is None or at.tzinfo is None:
        typer.echo(f"error: {messages.instant_option_invalid(name, text)}", err=True)
        raise typer.Exit(2)
    return at


def due(
    at: AtOpt = None,
    record_limit: Annotated[int, typer.Option(min=1, max=10000)] = 1000,
    as_json: JsonOpt = False,
    create: CreateOpt = False,
) -> None:
    """The global dry run: what a tick at --at (default now) fires, and why not for the
    rest. Read-only."""
    when = _instant(at)
    with facade(create=create) as t:
        report = t.due(at=when, record_limit=record_limit)
    rows = [_due_row(e) for e in report["fires"] + report["not_firing"]]
    title = messages.due_title(report["at"], report["runs"])
    output(report, as_json, lambda: print_rows(title, DUE_COLUMNS, rows))


def _due_row(entry: dict[str, Any]) -> dict[str, Any]:
    if entry["kind"] == "trigger":
        target = f"{entry['table_id']} / {entry['trigger_id']}"
    else:
        target = f"{entry['schedule_id']} ({entry['workflow_id']})"
    detail = ""
    if entry.get("scheduled_for"):
        detail = "for " + ", ".join(entry["scheduled_for"])
    elif entry.get("next_at"):
        detail = f"next at {entry['next_at']}"
    elif entry.get("error_codes"):
        detail = ", ".join(entry["error_codes"])
    elif entry.get("counts"):
        detail = ", ".join(f"{k}: {v}" for k, v in entry["counts"].items())
    waiting = ", ".join(f"{w['kind']} {w['subject']}" for w in entry.get("waiting_for") or [])
    if waiting:
        detail = f"{detail}; waiting for {waiting}".strip("; ")
    skipped = ", ".join(f"{s['reason']} ×{s['count']}" for s in entry.get("skips") or [])
    if skipped:
        detail = f"{detail}; skips {skipped}".strip("; ")
    reason = entry.get("reason") or ""
    return {**entry, "target": target, "reason": reason, "detail": detail}


@triggers_app.command("fires")
def trigger_fires(
    table_id: TableOpt,
    trigger_id: TriggerArg,
    skip: Skip = 0,
    limit: Limit = 50,
    as_json: JsonOpt = False,
    create: CreateOpt = False,
) -> None:
    """The fire history, newest first: each scheduled run (scheduled vs actual time, run,
    status) with the skipped occurrences between them (paged by the fires)."""
    with facade(create=create) as t:
        page = t.triggers.history(table_id, trigger_id, skip=skip, limit=limit)
    title = messages.fires_title(page["total"], trigger_id)
    print_history(page, as_json, title, TRIGGER_FIRE_COLUMNS)


@triggers_app.command("skips")
def trigger_skips(
    table_id: TableOpt,
    trigger_id: TriggerArg,
    skip: Skip = 0,
    limit: Limit = 50,
    as_json: JsonOpt = False,
    create: CreateOpt = False,
) -> None:
    """A trigger's skipped occurrences as ranges, newest first."""
    with facade(create=create) as t:
        page = t.skips(table_id, trigger_id, skip=skip, limit=limit)
    print_skips(page, as_json, trigger_id)


@triggers_app.command("next")
def trigger_next(
    table_id: TableOpt,
    trigger_id: TriggerArg,
    n: NOpt = 10,
    at: AtOpt = None,
    as_json: JsonOpt = False,
    create: CreateOpt = False,
) -> None:
    """The next instants a clock trigger fires at, in UTC and its zone."""
    when = _instant(at)
    with facade(create=create) as t:
        out = t.next_fires(table_id, trigger_id, n=n, now=when)
    print_next(out, as_json, messages.next_fires_title(trigger_id))


@triggers_app.command("run")
def trigger_run(table_id: TableOpt, trigger_id: TriggerArg, create: CreateOpt = False) -> None:
    """One manual run of a trigger now (never consumes or blocks a scheduled occurrence)."""
    with facade(create=create) as t:
        run = t.run_trigger(table_id, trigger_id)
    typer.echo(json.dumps(run, default=str))


@schedules_app.command("skips")
def schedule_skips(
    schedule_id: str,
    skip: Skip = 0,
    limit: Limit = 50,
    as_json: JsonOpt = False,
    create: CreateOpt = False,
) -> None:
    """A schedule's skipped instants as ranges, newest first."""
    with facade(create=create) as t:
        page = t.schedules.skips(schedule_id, skip=skip, limit=limit)
    print_skips(page, as_json, schedule_id)


@schedules_app.command("next")
def schedule_next(
    schedule_id: str,
    n: NOpt = 10,
    at: AtOpt = None,
    as_json: JsonOpt = False,
    create: CreateOpt = False,
) -> None:
    """The next instants a schedule fires at (none while paused)."""
    when = _instant(at)
    with facade(create=create) as t:
        out = t.schedules.next_fires(schedule_id, n=n, now=when)
    print_next(out, as_json, messages.next_fires_title(schedule_id))


@schedules_app.command("backfill")
def schedule_backfill(
    schedule_id: str,
    start: Annotated[str, typer.Option("--from", help="The first instant (included).")],
    end: Annotated[str, typer.Option("--to", help="The end (excluded).")],
    force: Annotated[bool, typer.Option("--force", help="Allow more than 10,000 runs.")] = False,
    create: CreateOpt = False,
) -> None:
    """One run per instant of [--from, --to), oldest first; repeating it creates nothing
    twice."""
    first, last = _instant(start, "--from"), _instant(end, "--to")
    assert first is not None and last is not None
    columns = (TextColumn("backfill"), BarColumn(), MofNCompleteColumn())
    with facade(create=create) as t, Progress(*columns, transient=True) as bar:
        task = bar.add_task("backfill", total=None)

        def progress(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        out = t.schedules.backfill(schedule_id, first, last, force=force, progress=progress)
    typer.echo(
        messages.backfilled_line(schedule_id, out["created"], out["existing"], out["instants"])
    )


def register(app: typer.Typer) -> None:
    """``tocsin due``; the trigger and schedule commands join ``triggers`` / ``schedules``."""
    app.command()(due)


__all__ = ["register"]
