"""``tocsin secrets rotate --scope chatroom:<uuid>``: the scope's webhook signing secret.

Every webhook of the scope's tables is signed with it (``X-Tocsin-Signature``); rotating makes a
new one, in force at once, and prints it alone on the last line (copy it to your receivers).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated

import typer

from tocsin import messages
from tocsin.errors import TocsinError
from tocsin.service.auth import parse_scope

from .processes import CreateOpt, open_tocsin

app = typer.Typer(help="Webhook signing secrets, one per scope.", no_args_is_help=True)


@app.command("rotate")
def rotate(
    scope: Annotated[str, typer.Option(help="<chatroom|workspace|user>:<uuid>")],
    create: CreateOpt = False,
) -> None:
    """Make a new signing secret for the scope; it is printed alone on the last line."""
    try:
        kind, scope_id = parse_scope(scope)
    except TocsinError as exc:
        typer.echo(f"error: {exc.detail}", err=True)
        raise typer.Exit(2) from None
    tocsin = open_tocsin(create=create)
    try:
        secret = tocsin.rotate_secret(kind, scope_id, now=datetime.now(UTC))
    finally:
        tocsin.close()
    typer.echo(messages.secret_rotated_line(f"{kind}:{scope_id}"))
    typer.echo(secret)
