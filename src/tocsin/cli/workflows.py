"""``tocsin schedules list|show|pause|resume|fires`` and ``tocsin workflows list|start|runs``
(SPEC §12, §16), printed as Rich tables (``--json`` for machines)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from tocsin.errors import TocsinError
from tocsin.service import Tocsin

from .processes import AppOpt, open_tocsin
from .render import printable

schedules_app = typer.Typer(help="Workflow schedules: list, show, pause, resume, fires.")
workflows_app = typer.Typer(help="Workflows: list, start, runs.")

JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON.")]
Skip = Annotated[int, typer.Option(min=0)]
Limit = Annotated[int, typer.Option(min=1, max=500)]
SCHEDULE_COLUMNS = ("id", "workflow_id", "cron", "timezone", "next_fire_at", "paused", "last")
FIRE_COLUMNS = ("scheduled_for", "fired_at", "run_id", "publish_status", "run_status", "error")
RUN_COLUMNS = ("id", "workflow_id", "trigger", "status", "started_at", "duration_ms", "error")


@contextmanager
def _facade(app: str | None = None) -> Iterator[Tocsin]:
    tocsin = open_tocsin(app)
    try:
        yield tocsin
    except TocsinError as exc:
        typer.echo(f"error ({exc.status}): {exc.detail}", err=True)
        raise typer.Exit(1) from None
    finally:
        tocsin.close()


def _cell(value: Any) -> Text:
    """Plain text (no Rich markup), control characters shown as ``\\xNN``."""
    return Text("" if value is None else printable(str(value)))


def _table(title: str, columns: Sequence[str], rows: list[dict[str, Any]]) -> None:
    grid = Table(title=title)
    for name in columns:
        grid.add_column(name)
    for row in rows:
        grid.add_row(*(_cell(row.get(c)) for c in columns))
    Console(width=200).print(grid)


def _print(data: Any, as_json: bool, render: Callable[[], None]) -> None:
    if as_json:
        typer.echo(json.dumps(data, default=str))
    else:
        render()


def _schedule_row(s: dict[str, Any]) -> dict[str, Any]:
    last = s.get("last_fire") or {}
    return {**s, "last": last.get("run_status") or last.get("publish_status")}


@schedules_app.command("list")
def schedules_list(
    workflow: Annotated[str | None, typer.Option("--workflow")] = None,
    skip: Skip = 0,
    limit: Limit = 50,
    as_json: JsonOpt = False,
) -> None:
    """All schedules (``--workflow`` filters)."""
    with _facade() as t:
        page = t.schedules.list(workflow_id=workflow, skip=skip, limit=limit)
    rows = [_schedule_row(s) for s in page["items"]]
    _print(page, as_json, lambda: _table(f"{page['total']} schedule(s)", SCHEDULE_COLUMNS, rows))


@schedules_app.command("show")
def schedules_show(schedule_id: str, as_json: JsonOpt = False) -> None:
    """One schedule with its last fire."""
    with _facade() as t:
        sched = t.schedules.get(schedule_id)
    _print(sched, as_json, lambda: _table(sched["id"], SCHEDULE_COLUMNS, [_schedule_row(sched)]))


@schedules_app.command("pause")
def schedules_pause(schedule_id: str) -> None:
    """Stop firing (persisted; idempotent; a redeploy never unpauses)."""
    with _facade() as t:
        sched = t.schedules.pause(schedule_id)
    typer.echo(f"paused {sched['id']}")


@schedules_app.command("resume")
def schedules_resume(schedule_id: str) -> None:
    """Fire again from the next regular instant (no backlog)."""
    with _facade() as t:
        sched = t.schedules.resume(schedule_id)
    typer.echo(f"resumed {sched['id']}: next fire {sched['next_fire_at']}")


@schedules_app.command("fires")
def schedules_fires(
    schedule_id: str, skip: Skip = 0, limit: Limit = 50, as_json: JsonOpt = False
) -> None:
    """The fire history, newest first."""
    with _facade() as t:
        page = t.schedules.fires(schedule_id, skip=skip, limit=limit)
    title = f"{page['total']} fire(s) of {schedule_id}"
    _print(page, as_json, lambda: _table(title, FIRE_COLUMNS, page["items"]))


@workflows_app.command("list")
def workflows_list(app: AppOpt = None, as_json: JsonOpt = False) -> None:
    """The workflows of ``--app`` (or ``TOCSIN_APP``) with their schedules."""
    with _facade(app) as t:
        items = t.list_workflows()
    rows = [{**w, "schedules": ", ".join(w["schedules"]), "steps": len(w["steps"])} for w in items]
    columns = ("id", "steps", "schedules", "description")
    _print(items, as_json, lambda: _table(f"{len(items)} workflow(s)", columns, rows))


@workflows_app.command("start")
def workflows_start(
    workflow_id: str,
    app: AppOpt = None,
    input_json: Annotated[str, typer.Option("--input", help="The input as JSON.")] = "null",
    wait: Annotated[bool, typer.Option("--wait/--no-wait", help="Run it now.")] = True,
) -> None:
    """Start a workflow of ``--app``; prints the run as JSON."""
    try:
        data = json.loads(input_json)
    except ValueError as exc:
        typer.echo(f"error: --input is not JSON: {exc}", err=True)
        raise typer.Exit(2) from None
    with _facade(app) as t:
        run = t.start_workflow(workflow_id, data, wait=wait)
    typer.echo(json.dumps(run, default=str))


@workflows_app.command("runs")
def workflows_runs(
    workflow: Annotated[str | None, typer.Option("--workflow")] = None,
    status: Annotated[str | None, typer.Option(help="pending|running|success|failed|…")] = None,
    skip: Skip = 0,
    limit: Limit = 50,
    as_json: JsonOpt = False,
) -> None:
    """Workflow runs, newest first."""
    with _facade() as t:
        page = t.workflow_runs(workflow_id=workflow, status=status, skip=skip, limit=limit)
    _print(page, as_json, lambda: _table(f"{page['total']} run(s)", RUN_COLUMNS, page["items"]))


__all__ = ["schedules_app", "workflows_app"]
