"""API tokens: stored as SHA-256 hex digests, looked up by digest (SPEC §15).

The plaintext token never reaches the database; ``api_tokens.token_hash`` is unique, so a
lookup is one indexed read. A token may carry API-wide ``permissions``, ``expires_at`` and be
revoked (``revoked_at``); the service refuses an expired or revoked token from that instant on.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import RowMapping, insert, select, update

from tocsin.core.model import TOKEN_LISTED, ApiToken
from tocsin.store.schema import api_tokens
from tocsin.store.tx import Tx

#: What a listing shows: never the digest.
LISTED = TOKEN_LISTED


def token_value(row: RowMapping) -> ApiToken:
    """A token row (its digest when read) as an :class:`ApiToken`: the one place a token value
    is built."""
    values = {name: row[name] for name in LISTED}
    return ApiToken(**values, token_hash=row.get("token_hash"))


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


def find_token_by_hash(tx: Tx, *, token_hash: str) -> ApiToken | None:
    """The token row whose digest is ``token_hash``, or None."""
    row = (
        tx.conn.execute(select(api_tokens).where(api_tokens.c.token_hash == token_hash))
        .mappings()
        .first()
    )
    return token_value(row) if row is not None else None


def find_token_by_id(tx: Tx, *, token_id: str) -> ApiToken | None:
    """The token row whose id is ``token_id``, or None."""
    row = tx.conn.execute(select(api_tokens).where(api_tokens.c.id == token_id)).mappings().first()
    return token_value(row) if row is not None else None


def list_tokens(tx: Tx) -> list[ApiToken]:
    """Every token without its digest, oldest first."""
    columns = [api_tokens.c[name] for name in LISTED]
    query = select(*columns).order_by(api_tokens.c.created_at, api_tokens.c.id)
    return [token_value(row) for row in tx.conn.execute(query).mappings()]


def revoke_token(tx: Tx, *, token_id: str, now: datetime) -> ApiToken | None:
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
    return token_value(row) if row is not None else None
