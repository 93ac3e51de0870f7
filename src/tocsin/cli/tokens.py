"""``tocsin tokens create``: a bearer token for one scope and role (SPEC §15)."""

from __future__ import annotations

from typing import Annotated

import typer

from tocsin.errors import TocsinError
from tocsin.service.auth import parse_scope

from .processes import open_tocsin

app = typer.Typer(help="API tokens (stored hashed; shown once).", no_args_is_help=True)


@app.command("create")
def create(
    scope: Annotated[str, typer.Option(help="<chatroom|workspace|user>:<uuid>")],
    role: Annotated[str, typer.Option(help="member (read) or moderator")] = "member",
) -> None:
    """Create a token; it is printed alone on the last line and never shown again."""
    tocsin = open_tocsin()
    try:
        kind, scope_id = parse_scope(scope)
        token = tocsin.create_token(scope=kind, scope_id=scope_id, role=role)
    except TocsinError as exc:
        typer.echo(f"error: {exc.detail}", err=True)
        raise typer.Exit(2) from None
    finally:
        tocsin.close()
    typer.echo(f"created a {role} token for {kind}:{scope_id} (stored hashed; copy it now):")
    typer.echo(token)
