"""API tokens: stored as SHA-256 hex digests, looked up by digest (SPEC §15).

The plaintext token never reaches the database; ``api_tokens.token_hash`` is unique, so a
lookup is one indexed read. A token may carry API-wide ``permissions``, ``expires_at`` and be
revoked (``revoked_at``); the service refuses an expired or revoked token from that instant on.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import insert, select, update

from tocsin.store.schema import api_tokens
from tocsin.store.tx import Tx

#: What a listing shows: never the digest.
LISTED = (
    "id",
    "scope",
    "scope_id",
    "role",
    "permissions",
    "created_at",
    "expires_at",
    "revoked_at",
)


def insert_token(
    tx: Tx,
    *,
    token_id: str,
    token_hash: str,
    scope: str,
    scope_id: str,
    role: str,
    now: datetime,
    permissions: list[str] | None = None,
    expires_at: datetime | None = None,
) -> None:
    """Store one token digest with its scope, role, API-wide permissions and expiry."""
    tx.require_writable()
    tx.conn.execute(
        insert(api_tokens).values(
            id=token_id,
            token_hash=token_hash,
            scope=scope,
            scope_id=scope_id,
            role=role,
            created_at=now,
            permissions=permissions or None,
            expires_at=expires_at,
        )
    )


def find_token_by_hash(tx: Tx, *, token_hash: str) -> dict[str, Any] | None:
    """The token row whose digest is ``token_hash``, or None."""
    row = (
        tx.conn.execute(select(api_tokens).where(api_tokens.c.token_hash == token_hash))
        .mappings()
        .first()
    )
    return dict(row) if row is not None else None


def find_token_by_id(tx: Tx, *, token_id: str) -> dict[str, Any] | None:
    """The token row whose id is ``token_id``, or None."""
    row = tx.conn.execute(select(api_tokens).where(api_tokens.c.id == token_id)).mappings().first()
    return dict(row) if row is not None else None


def list_tokens(tx: Tx) -> list[dict[str, Any]]:
    """Every token without its digest, oldest first."""
    columns = [api_tokens.c[name] for name in LISTED]
    query = select(*columns).order_by(api_tokens.c.created_at, api_tokens.c.id)
    return [dict(row) for row in tx.conn.execute(query).mappings()]


def revoke_token(tx: Tx, *, token_id: str, now: datetime) -> dict[str, Any] | None:
    """Mark ``token_id`` revoked at ``now`` (an earlier revocation is kept); the token's listed
    fields, or None when no token has that id."""
    tx.require_writable()
    tx.conn.execute(
        update(api_tokens)
        .where(api_tokens.c.id == token_id, api_tokens.c.revoked_at.is_(None))
        .values(revoked_at=now)
    )
    columns = [api_tokens.c[name] for name in LISTED]
    row = tx.conn.execute(select(*columns).where(api_tokens.c.id == token_id)).mappings().first()
    return dict(row) if row is not None else None
