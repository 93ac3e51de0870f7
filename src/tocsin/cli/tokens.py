"""``tocsin tokens create``: a bearer token for one scope and role, and/or API-wide permissions
(``--permission schedules:read|schedules:write``, repeatable) (SPEC §12, §15)."""

from __future__ import annotations

from typing import Annotated

import typer

from tocsin.errors import TocsinError
from tocsin.service.auth import parse_scope

from .processes import open_tocsin

app = typer.Typer(help="API tokens (stored hashed; shown once).", no_args_is_help=True)


@app.command("create")
def create(
    scope: Annotated[str | None, typer.Option(help="<chatroom|workspace|user>:<uuid>")] = None,
    role: Annotated[str, typer.Option(help="member (read) or moderator")] = "member",
    permission: Annotated[
        list[str] | None,
        typer.Option("--permission", help="schedules:read or schedules:write (repeatable)."),
    ] = None,
) -> None:
    """Create a token; it is printed alone on the last line and never shown again."""
    granted = list(permission or [])
    if scope is None and not granted:
        typer.echo("error: give --scope, --permission, or both", err=True)
        raise typer.Exit(2)
    tocsin = open_tocsin()
    try:
        kind, scope_id = parse_scope(scope) if scope is not None else (None, None)
        token = tocsin.create_token(scope=kind, scope_id=scope_id, role=role, permissions=granted)
    except TocsinError as exc:
        typer.echo(f"error: {exc.detail}", err=True)
        raise typer.Exit(2) from None
    finally:
        tocsin.close()
    what = [f"a {role} token for {kind}:{scope_id}"] if kind is not None else ["a token"]
    if granted:
        what.append(f"with {', '.join(sorted(set(granted)))}")
    typer.echo(f"created {' '.join(what)} (stored hashed; copy it now):")
    typer.echo(token)
