"""``tocsin tables …``, ``tocsin triggers …`` and ``tocsin messages``: the data plane from the
command line, through the facade. Lists print Rich tables (ids never truncated) or
JSON with ``--json``; errors are one line on stderr and exit code 1."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Annotated, Any

import typer
import yaml

from tocsin import messages
from tocsin.errors import TocsinError, ValidationError
from tocsin.service.auth import parse_scope

from .processes import CreateOpt, open_tocsin
from .render import JsonOpt, Limit, Skip, echo_json, fail, print_rows

tables_app = typer.Typer(help="A scope's tables: list, show, create.", no_args_is_help=True)
triggers_app = typer.Typer(
    help="A table's triggers: list, show, set (from a JSON or YAML file), pause, resume.",
    no_args_is_help=True,
)

TableOpt = Annotated[str, typer.Option("--table", help="The table id.")]
ScopeOpt = Annotated[str, typer.Option("--scope", help="<chatroom|workspace|user>:<uuid>")]
TriggerArg = Annotated[str, typer.Argument(help="The trigger id.")]
TABLE_COLUMNS = ("id", "name", "scope", "scope_id", "columns", "created_at")
TRIGGER_COLUMNS = ("id", "name", "on", "schedule", "actions")


@tables_app.command("list")
def list_tables(
    scope: ScopeOpt,
    skip: Skip = 0,
    limit: Limit = 50,
    as_json: JsonOpt = False,
    create: CreateOpt = False,
) -> None:
    """The scope's live tables, oldest first."""
    tocsin = open_tocsin(create=create)
    try:
        kind, scope_id = parse_scope(scope)
        page = tocsin.list_tables(kind, scope_id, skip=skip, limit=limit)
    except TocsinError as exc:
        raise fail(exc) from None
    finally:
        tocsin.close()
    if as_json:
        return echo_json(page)
    print_rows(f"{page['total']} table(s)", TABLE_COLUMNS, page["items"], ids=("id", "scope_id"))


@tables_app.command("show")
def show_table(
    table_id: Annotated[str, typer.Argument(help="The table id.")], create: CreateOpt = False
) -> None:
    """One table (columns, flags) with its triggers config, as JSON."""
    tocsin = open_tocsin(create=create)
    try:
        table = tocsin.get_table(table_id)
        table["triggers"] = tocsin.get_triggers(table_id) if not table["trashed"] else []
    except TocsinError as exc:
        raise fail(exc) from None
    finally:
        tocsin.close()
    echo_json(table)


def parse_columns(specs: list[str]) -> dict[str, str]:
    """``["Due=datetime", "Status=text"]`` → ``{"Due": "datetime", "Status": "text"}``."""
    columns: dict[str, str] = {}
    for spec in specs:
        name, sep, kind = spec.partition("=")
        if not sep or not name.strip():
            raise ValidationError(messages.column_option_invalid(spec))
        columns[name.strip()] = kind.strip()
    return columns


@tables_app.command("create")
def create_table(
    scope: ScopeOpt,
    name: Annotated[str, typer.Option("--name", help="The table's name.")],
    column: Annotated[
        list[str] | None,
        typer.Option("--column", help="NAME=TYPE (text, number, boolean, date, datetime, …)."),
    ] = None,
    create: CreateOpt = False,
    as_json: JsonOpt = False,
) -> None:
    """Create a table; prints its id alone on the last line (or the table with --json)."""
    tocsin = open_tocsin(create=create)
    try:
        kind, scope_id = parse_scope(scope)
        table = tocsin.create_table(kind, scope_id, name, parse_columns(column or []))
    except TocsinError as exc:
        raise fail(exc) from None
    finally:
        tocsin.close()
    if as_json:
        return echo_json(table)
    typer.echo(messages.table_created_line(table["name"], kind, scope_id))
    typer.echo(table["id"])


@triggers_app.command("list")
def list_triggers(table: TableOpt, as_json: JsonOpt = False, create: CreateOpt = False) -> None:
    """The table's triggers, each with its id."""
    tocsin = open_tocsin(create=create)
    try:
        triggers = tocsin.get_triggers(table)
    except TocsinError as exc:
        raise fail(exc) from None
    finally:
        tocsin.close()
    if as_json:
        return echo_json({"triggers": triggers})
    rows = [{**t, "actions": ", ".join(a["type"] for a in t.get("actions", []))} for t in triggers]
    print_rows(f"{len(rows)} trigger(s)", TRIGGER_COLUMNS, rows)


@triggers_app.command("show")
def show_trigger(table: TableOpt, trigger_id: TriggerArg, create: CreateOpt = False) -> None:
    """One trigger, as JSON."""
    tocsin = open_tocsin(create=create)
    try:
        trigger = tocsin.get_trigger(table, trigger_id)
    except TocsinError as exc:
        raise fail(exc) from None
    finally:
        tocsin.close()
    echo_json(trigger)


class Yaml12Loader(yaml.SafeLoader):  # type: ignore[misc]  # no PyYAML stubs installed
    """YAML with YAML 1.2 booleans: only ``true``/``false`` are booleans. YAML 1.1 (PyYAML's
    default) would read the key ``on:`` (every trigger has one) as ``True``, and ``yes``/``no``/
    ``off`` values as booleans too."""


Yaml12Loader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:bool"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
Yaml12Loader.add_implicit_resolver(
    "tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")
)


def read_triggers(path: str) -> Any:
    """The triggers list in a JSON or YAML file (``-`` reads standard input): a list, or an
    object with a ``triggers`` list (the body of ``PUT …/triggers``)."""
    try:
        text = typer.get_text_stream("stdin").read() if path == "-" else Path(path).read_text()
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise ValidationError(messages.triggers_file_invalid(path, reason)) from None
    try:
        loaded = (
            json.loads(text) if path.endswith(".json") else yaml.load(text, Loader=Yaml12Loader)
        )
    except (ValueError, yaml.YAMLError) as exc:
        reason = str(exc).splitlines()[0]
        raise ValidationError(messages.triggers_file_invalid(path, reason)) from None
    if isinstance(loaded, dict) and set(loaded) == {"triggers"}:
        return loaded["triggers"]
    return loaded


@triggers_app.command("set")
def set_triggers(
    table: TableOpt,
    file: Annotated[str, typer.Option("--file", "-f", help="A .json or .yaml file; - = stdin.")],
    as_json: JsonOpt = False,
    create: CreateOpt = False,
) -> None:
    """Replace the table's whole triggers list (as PUT …/triggers does); prints the saved ids."""
    tocsin = open_tocsin(create=create)
    try:
        saved = tocsin.set_triggers(table, read_triggers(file))
    except TocsinError as exc:
        raise fail(exc) from None
    finally:
        tocsin.close()
    if as_json:
        return echo_json({"triggers": saved})
    print_rows(f"saved {len(saved)} trigger(s)", ("id", "name", "on"), saved)


def _pause_or_resume(table: str, trigger_id: str, *, pause: bool, create: bool) -> None:
    tocsin = open_tocsin(create=create)
    try:
        if pause:
            result = tocsin.pause_trigger(table, trigger_id)
        else:
            result = tocsin.resume_trigger(table, trigger_id)
    except TocsinError as exc:
        raise fail(exc) from None
    finally:
        tocsin.close()
    echo_json(result)


@triggers_app.command("pause")
def pause_trigger(table: TableOpt, trigger_id: TriggerArg, create: CreateOpt = False) -> None:
    """Pause one trigger (it keeps its id and state; no runs until resumed)."""
    _pause_or_resume(table, trigger_id, pause=True, create=create)


@triggers_app.command("resume")
def resume_trigger(table: TableOpt, trigger_id: TriggerArg, create: CreateOpt = False) -> None:
    """Resume a paused trigger."""
    _pause_or_resume(table, trigger_id, pause=False, create=create)


def list_messages(
    chatroom: Annotated[str, typer.Option("--chatroom", help="The chatroom's UUID.")],
    skip: Skip = 0,
    limit: Limit = 50,
    as_json: JsonOpt = False,
    create: CreateOpt = False,
) -> None:
    """A chatroom's message feed (what notify actions post), newest first."""
    tocsin = open_tocsin(create=create)
    try:
        _, chatroom_id = parse_scope(f"chatroom:{chatroom}")
        page = tocsin.messages(chatroom_id, skip=skip, limit=limit)
    except TocsinError as exc:
        raise fail(exc) from None
    finally:
        tocsin.close()
    if as_json:
        return echo_json(page)
    columns = ("created_at", "text", "run_id", "id")
    print_rows(f"{page['total']} message(s)", columns, page["items"], ids=("id", "run_id"))


def register(app: typer.Typer) -> None:
    app.add_typer(tables_app, name="tables")
    app.add_typer(triggers_app, name="triggers")
    app.command("messages")(list_messages)


__all__ = ["register", "tables_app", "triggers_app"]
