"""Commands on one table: ``tocsin runs list|retry`` and ``tocsin preview`` (SPEC §7–§9)."""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from tocsin.errors import TocsinError

from .processes import open_tocsin

runs_app = typer.Typer(help="List and retry a table's trigger runs.", no_args_is_help=True)

TableOpt = Annotated[str, typer.Option("--table", help="The table id.")]
RUN_COLUMNS = ("id", "trigger_id", "source", "status", "attempts", "scheduled_for", "error")


def _fail(exc: TocsinError) -> typer.Exit:
    typer.echo(f"error ({exc.status}): {exc.detail}", err=True)
    return typer.Exit(1)


def _render_runs(page: dict[str, Any], as_json: bool) -> None:
    if as_json:
        typer.echo(json.dumps(page, default=str))
        return
    grid = Table(title=f"{page['total']} run(s)")
    for name in RUN_COLUMNS:
        grid.add_column(name)
    for run in page["items"]:
        grid.add_row(*("" if run.get(c) is None else str(run.get(c)) for c in RUN_COLUMNS))
    Console().print(grid)


@runs_app.command("list")
def list_runs(
    table: TableOpt,
    status: Annotated[str | None, typer.Option(help="pending|running|done|failed|stuck")] = None,
    skip: Annotated[int, typer.Option(min=0)] = 0,
    limit: Annotated[int, typer.Option(min=1, max=500)] = 50,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """A table's runs, newest first."""
    tocsin = open_tocsin()
    try:
        page = tocsin.list_runs(table, status=status, skip=skip, limit=limit)
    except TocsinError as exc:
        raise _fail(exc) from None
    finally:
        tocsin.close()
    _render_runs(page, as_json)


@runs_app.command("retry")
def retry_run(table: TableOpt, run_id: Annotated[str, typer.Argument()]) -> None:
    """Reset a failed, pending or stale running run to pending."""
    tocsin = open_tocsin()
    try:
        run = tocsin.retry_run(table, run_id)
    except TocsinError as exc:
        raise _fail(exc) from None
    finally:
        tocsin.close()
    typer.echo(json.dumps(run, default=str))


def preview(table: TableOpt) -> None:
    """The schedule preview of a table (SPEC §7) as JSON; creates nothing."""
    tocsin = open_tocsin()
    try:
        document = tocsin.preview(table)
    except TocsinError as exc:
        raise _fail(exc) from None
    finally:
        tocsin.close()
    typer.echo(json.dumps(document, indent=2, default=str))


def register(app: typer.Typer) -> None:
    app.command()(preview)
