"""``tocsin export | plan | apply``: trigger documents as code, the Terraform way (SPEC §11).

- ``tocsin export --scope chatroom:<uuid> [--table NAME]… > triggers.jsonl``
- ``tocsin export --schedules [--workflow ID]… > schedules.jsonl``: the imperative workflow
  schedules (declared ones belong to code and are left out); both options may be combined
- ``tocsin plan triggers.jsonl --scope …  [--json]``: a coloured per-trigger (per-schedule) diff;
  exit code 0 = no changes, 2 = changes, 1 = error (``terraform plan -detailed-exitcode``), an
  ``invalid`` entry (a trigger apply would refuse, with its reason) included: a CI gate that
  only plans fails on what apply would refuse
- ``tocsin apply triggers.jsonl --scope … [--yes]``: shows the plan, asks, then applies (never
  asks when the plan has an ``invalid`` entry: exit 1, nothing written)

``FILE`` may be ``-`` for standard input. ``--scope`` is needed only for trigger documents
(``"table"``); schedule documents (``"workflow"``) need the workflows registered: ``--app`` (or
``TOCSIN_APP``).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape

from tocsin import iac, messages
from tocsin.errors import SettingsError, TocsinError
from tocsin.service import Tocsin
from tocsin.service.auth import parse_scope

from .processes import AppOpt, CreateOpt, open_tocsin
from .render import fail, printable

ScopeOpt = Annotated[
    str | None,
    typer.Option("--scope", help="<chatroom|workspace|user>:<uuid> (for trigger documents)"),
]
FileArg = Annotated[str, typer.Argument(metavar="FILE", help="JSON Lines documents, or -")]
NO_CHANGES, CHANGES, ERROR = 0, 2, 1
STYLE = {
    "create": ("+", "green"),
    "update": ("~", "yellow"),
    "delete": ("-", "red"),
    "noop": ("=", "dim"),
    "invalid": ("!", "red"),
}


def _error(text: str) -> typer.Exit:
    typer.echo(f"error: {text}", err=True)
    return typer.Exit(ERROR)


def _read(path: str) -> list[dict[str, Any]]:
    try:
        text = sys.stdin.read() if path == "-" else Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise _error(messages.file_unreadable(path, exc)) from None
    try:
        return iac.loads(text)
    except TocsinError as exc:
        raise _error(f"{path}: {exc.detail}") from None


def _open(app: str | None = None, *, create: bool = False) -> Tocsin:
    """The facade; any failure to open it is exit code 1 here (2 means "changes")."""
    try:
        return open_tocsin(app, create=create)
    except SettingsError as exc:
        raise _error(str(exc)) from None
    except typer.Exit as exc:
        if exc.exit_code == CHANGES:
            raise typer.Exit(ERROR) from None
        raise


def _scope(text: str | None) -> tuple[str | None, str | None]:
    if text is None:
        return None, None
    try:
        return parse_scope(text)
    except TocsinError as exc:
        raise _error(exc.detail) from None


def _value(value: object) -> str:
    return escape(printable(json.dumps(value, ensure_ascii=False, sort_keys=True)))


def _change_line(change: dict[str, Any]) -> str:
    path = escape(printable(change["path"] or "(trigger)"))
    if "before" not in change:
        return f"    [green]+ {path}: {_value(change['after'])}[/]"
    if "after" not in change:
        return f"    [red]- {path}: {_value(change['before'])}[/]"
    before, after = _value(change["before"]), _value(change["after"])
    return f"    [yellow]~ {path}: {before} → {after}[/]"


def summary(entries: list[dict[str, Any]]) -> dict[str, int]:
    """How many entries of each action."""
    counts = dict.fromkeys(STYLE, 0)
    for entry in entries:
        counts[entry["action"]] += 1
    return counts


def render(console: Console, entries: list[dict[str, Any]]) -> None:
    """The per-trigger diff, then one summary line."""
    for entry in entries:
        sign, colour = STYLE[entry["action"]]
        adopted = " (adopted)" if entry.get("adopted") else ""
        if "workflow" in entry:
            who = entry["schedule_id"] or "(new id)"
            head = f"{sign} {entry['action']:<6} workflow {entry['workflow']} / {who}{adopted}"
        else:
            who = entry["trigger_id"] or "(new id)"
            name = f' "{entry["name"]}"' if entry["name"] is not None else ""
            head = f"{sign} {entry['action']:<6} {entry['table']} / {who}{name}{adopted}"
        console.print(f"[{colour}]{escape(printable(head))}[/]")
        for note in entry.get("warnings", ()):
            console.print(f"    [yellow]warning: {escape(printable(note))}[/]")
        if "detail" in entry:
            console.print(f"    [red]refused: {escape(printable(entry['detail']))}[/]")
        if entry["action"] != "noop":
            for change in entry["changes"]:
                console.print(_change_line(change))
    console.print(f"[bold]{messages.iac_plan_line(summary(entries))}[/]")


def _render_applied(console: Console, entries: list[dict[str, Any]]) -> None:
    for entry in entries:
        if entry["action"] == "create" and "workflow" in entry:
            head = messages.iac_created_schedule_line(entry["workflow"], entry["schedule_id"])
            console.print(f"[green]{escape(printable(head))}[/]")
        elif entry["action"] == "create":
            head = messages.iac_created_trigger_line(entry["table"], entry["trigger_id"])
            console.print(f"[green]{escape(printable(head))}[/]")
    console.print(f"[bold]{messages.iac_applied_line(summary(entries))}[/]")


def _has_changes(entries: list[dict[str, Any]]) -> bool:
    return any(e["action"] != "noop" for e in entries)


def _refuse_invalid(entries: list[dict[str, Any]]) -> None:
    """Exit 1 when any entry is ``invalid`` (apply would answer 400)."""
    count = summary(entries)["invalid"]
    if count:
        raise _error(messages.iac_plan_invalid(count))


def _run(tocsin: Tocsin, call: Any) -> Any:
    try:
        return call()
    except TocsinError as exc:
        raise fail(exc, ERROR) from None
    finally:
        tocsin.close()


def export(
    scope: ScopeOpt = None,
    table: Annotated[
        list[str] | None, typer.Option("--table", help="Only this table (repeatable).")
    ] = None,
    schedules: Annotated[
        bool, typer.Option("--schedules", help="Also the imperative workflow schedules.")
    ] = False,
    workflow: Annotated[
        list[str] | None,
        typer.Option("--workflow", help="Only this workflow's schedules (repeatable)."),
    ] = None,
    create: CreateOpt = False,
) -> None:
    """Write the scope's triggers and/or the imperative workflow schedules as JSON Lines
    (normalized; byte-stable) to stdout."""
    kind, scope_id = _scope(scope)
    with_schedules = schedules or bool(workflow)
    if kind is None and not with_schedules:
        raise _error(messages.IAC_EXPORT_NEEDS_WHAT)
    tocsin = _open(create=create)

    def documents() -> list[dict[str, Any]]:
        out = []
        if kind is not None and scope_id is not None:
            out = tocsin.export(kind, scope_id, tables=table or None)
        if with_schedules:
            out += tocsin.export_schedules(workflow or None)
        return out

    sys.stdout.write(iac.dumps(_run(tocsin, documents)))


def plan(
    file: FileArg,
    scope: ScopeOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the plan as JSON.")] = False,
    app: AppOpt = None,
    create: CreateOpt = False,
) -> None:
    """Compare documents with the stored triggers and schedules; exit 0 no changes, 2
    changes, 1 error (a document apply would refuse included)."""
    kind, scope_id = _scope(scope)
    documents = _read(file)
    tocsin = _open(app, create=create)
    entries = _run(tocsin, lambda: tocsin.plan(kind, scope_id, documents))
    if as_json:
        typer.echo(json.dumps({"plan": entries}, ensure_ascii=False))
    else:
        render(Console(soft_wrap=True), entries)
    _refuse_invalid(entries)
    raise typer.Exit(CHANGES if _has_changes(entries) else NO_CHANGES)


def apply(
    file: FileArg,
    scope: ScopeOpt = None,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Apply without asking.")] = False,
    app: AppOpt = None,
    create: CreateOpt = False,
) -> None:
    """Show the plan, ask, and carry it out through the same validation as the API."""
    kind, scope_id = _scope(scope)
    documents = _read(file)
    console = Console(soft_wrap=True)
    tocsin = _open(app, create=create)
    try:
        entries = tocsin.plan(kind, scope_id, documents)
        render(console, entries)
        _refuse_invalid(entries)
        if not _has_changes(entries):
            console.print(messages.IAC_NO_CHANGES)
            return
        if not yes and not typer.confirm(messages.IAC_CONFIRM_APPLY, default=False):
            typer.echo(messages.IAC_APPLY_CANCELLED, err=True)
            raise typer.Exit(ERROR)
        done = tocsin.apply(kind, scope_id, documents)
    except TocsinError as exc:
        raise fail(exc, ERROR) from None
    finally:
        tocsin.close()
    _render_applied(console, done)


def register(app: typer.Typer) -> None:
    app.command()(export)
    app.command()(plan)
    app.command()(apply)


__all__ = ["register", "render", "summary"]
