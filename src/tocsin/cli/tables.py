"""Commands on one table: ``tocsin runs list|retry`` and ``tocsin preview`` (SPEC §7–§9).

They open an existing database only (``processes.open_tocsin``): with ``TOCSIN_DATABASE_URL``
unset and no ``./tocsin.db`` they say so instead of answering "table not found"."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Annotated, Any

import typer

from tocsin import messages
from tocsin.errors import TocsinError, ValidationError

from .processes import CreateOpt, open_tocsin
from .render import fail, print_rows

runs_app = typer.Typer(help="List and retry a table's trigger runs.", no_args_is_help=True)

TableOpt = Annotated[str, typer.Option("--table", help="The table id.")]
RUN_COLUMNS = ("id", "trigger_id", "source", "status", "attempts", "scheduled_for", "error")


WINDOW = "ISO 8601, e.g. 2026-09-01T09:00Z; UTC unless it carries an offset"
Since = Annotated[str | None, typer.Option(help=f"Runs created at or after ({WINDOW}).")]
Until = Annotated[str | None, typer.Option(help=f"Runs created before ({WINDOW}).")]


def parse_instant(name: str, text: str | None) -> datetime | None:
    """``--since``/``--until``: ISO 8601 (a date, or a date and time, ``Z`` or an offset)."""
    if text is None:
        return None
    try:
        return datetime.fromisoformat(text)
    except ValueError:
        raise ValidationError(messages.run_window_invalid(f"--{name} {text!r}")) from None


def _render_runs(page: dict[str, Any], as_json: bool) -> None:
    if as_json:
        typer.echo(json.dumps(page, default=str))
        return
    ids = ("id", "trigger_id")
    print_rows(f"{page['total']} run(s)", RUN_COLUMNS, page["items"], ids=ids)


@runs_app.command("list")
def list_runs(
    table: TableOpt,
    status: Annotated[str | None, typer.Option(help="pending|running|done|failed|stuck")] = None,
    skip: Annotated[int, typer.Option(min=0)] = 0,
    limit: Annotated[int, typer.Option(min=1, max=500)] = 50,
    trigger: Annotated[str | None, typer.Option("--trigger", help="Only this trigger.")] = None,
    record: Annotated[str | None, typer.Option("--record", help="Only this record.")] = None,
    since: Since = None,
    until: Until = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    create: CreateOpt = False,
) -> None:
    """A table's runs, newest first; --trigger, --record, --since and --until narrow it."""
    tocsin = open_tocsin(create=create)
    try:
        page = tocsin.list_runs(
            table,
            status=status,
            skip=skip,
            limit=limit,
            trigger_id=trigger,
            record_id=record,
            since=parse_instant("since", since),
            until=parse_instant("until", until),
        )
    except TocsinError as exc:
        raise fail(exc) from None
    finally:
        tocsin.close()
    _render_runs(page, as_json)


@runs_app.command("retry")
def retry_run(
    table: TableOpt, run_id: Annotated[str, typer.Argument()], create: CreateOpt = False
) -> None:
    """Reset a failed, pending or stale running run to pending."""
    tocsin = open_tocsin(create=create)
    try:
        run = tocsin.retry_run(table, run_id)
    except TocsinError as exc:
        raise fail(exc) from None
    finally:
        tocsin.close()
    typer.echo(json.dumps(run, default=str))


def preview(table: TableOpt, create: CreateOpt = False) -> None:
    """The schedule preview of a table (SPEC §7) as JSON; creates nothing."""
    tocsin = open_tocsin(create=create)
    try:
        document = tocsin.preview(table)
    except TocsinError as exc:
        raise fail(exc) from None
    finally:
        tocsin.close()
    typer.echo(json.dumps(document, indent=2, default=str))


def register(app: typer.Typer) -> None:
    app.command()(preview)
