"""``tocsin tokens create|list|revoke``: bearer tokens for one scope and role, and/or API-wide
permissions (``--permission schedules:read|schedules:write``, repeatable) (SPEC §12, §15).

A token is printed once, at creation; ``list`` shows ids, scopes, roles, permissions and
instants, never a secret. ``--expires-in 30d`` makes a token expire; ``revoke <id>`` refuses it
from now on.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any

import typer

from tocsin import messages
from tocsin.errors import TocsinError, ValidationError
from tocsin.service.auth import parse_scope

from .processes import CreateOpt, open_tocsin
from .render import print_rows

app = typer.Typer(help="API tokens (stored hashed; shown once).", no_args_is_help=True)

UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
DURATION = re.compile(r"^([0-9]{1,9})([smhdw])$")
LIST_COLUMNS = ("id", "scope", "role", "permissions", "created_at", "expires_at", "status")


def parse_duration(text: str) -> timedelta:
    """``"90m"``, ``"12h"``, ``"30d"``, ``"2w"`` (or ``"45s"``) → a positive timedelta."""
    match = DURATION.match(text.strip())
    if match is None or int(match.group(1)) == 0:
        raise ValidationError(messages.expires_in_invalid(text))
    return timedelta(seconds=int(match.group(1)) * UNITS[match.group(2)])


def status_of(token: dict[str, Any], now: datetime) -> str:
    """``revoked``, ``expired`` or ``active`` at ``now``."""
    if token["revoked_at"] is not None:
        return "revoked"
    if token["expires_at"] is not None and token["expires_at"] <= now:
        return "expired"
    return "active"


def _fail(exc: TocsinError) -> typer.Exit:
    typer.echo(f"error: {exc.detail}", err=True)
    return typer.Exit(2 if exc.status == 400 else 1)


@app.command("create")
def create(
    scope: Annotated[str | None, typer.Option(help="<chatroom|workspace|user>:<uuid>")] = None,
    role: Annotated[str, typer.Option(help="member (read) or moderator")] = "member",
    permission: Annotated[
        list[str] | None,
        typer.Option("--permission", help="schedules:read or schedules:write (repeatable)."),
    ] = None,
    expires_in: Annotated[
        str | None, typer.Option(help="Lifetime, e.g. 90m, 12h, 30d, 2w (default: no expiry).")
    ] = None,
    create: CreateOpt = False,
) -> None:
    """Create a token; it is printed alone on the last line and never shown again."""
    granted = list(permission or [])
    if scope is None and not granted:
        typer.echo(f"error: {messages.TOKEN_CREATE_NEEDS_GRANT}", err=True)
        raise typer.Exit(2)
    now = datetime.now(UTC)
    try:
        kind, scope_id = parse_scope(scope) if scope is not None else (None, None)
        expires_at = now + parse_duration(expires_in) if expires_in is not None else None
    except TocsinError as exc:
        raise _fail(exc) from None
    tocsin = open_tocsin(create=create)
    try:
        token = tocsin.create_token(
            scope=kind,
            scope_id=scope_id,
            role=role,
            permissions=granted,
            now=now,
            expires_at=expires_at,
        )
    except TocsinError as exc:
        raise _fail(exc) from None
    finally:
        tocsin.close()
    owner = f"{kind}:{scope_id}" if kind is not None else None
    until = expires_at.isoformat(timespec="seconds") if expires_at else None
    typer.echo(messages.token_created_line(role, owner, granted, until))
    typer.echo(token)


@app.command("list")
def list_tokens(create: CreateOpt = False) -> None:
    """Every token: id, scope, role, permissions, created, expires and status (no secrets)."""
    tocsin = open_tocsin(create=create)
    try:
        rows = tocsin.list_tokens()
    finally:
        tocsin.close()
    now = datetime.now(UTC)
    items = [
        {
            **row,
            "scope": f"{row['scope']}:{row['scope_id']}",
            "permissions": ", ".join(row["permissions"] or ()),
            "created_at": _instant(row["created_at"]),
            "expires_at": _instant(row["expires_at"]),
            "status": status_of(row, now),
        }
        for row in rows
    ]
    print_rows(f"{len(rows)} token(s)", LIST_COLUMNS, items, ids=("id", "scope"))


@app.command("revoke")
def revoke(
    token_id: Annotated[str, typer.Argument(help="The token's id (tocsin tokens list).")],
    create: CreateOpt = False,
) -> None:
    """Revoke a token: from now on it answers 401."""
    tocsin = open_tocsin(create=create)
    try:
        row = tocsin.revoke_token(token_id)
    except TocsinError as exc:
        raise _fail(exc) from None
    finally:
        tocsin.close()
    scope = f"{row['scope']}:{row['scope_id']}"
    typer.echo(messages.token_revoked_line(row["id"], scope, row["role"]))


def _instant(value: datetime | None) -> str:
    return "" if value is None else value.isoformat(timespec="seconds")
