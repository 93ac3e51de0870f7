"""API tokens: stored as SHA-256 hex digests, looked up by digest (SPEC §15).

The plaintext token never reaches the database; ``api_tokens.token_hash`` is unique, so a
lookup is one indexed read.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import insert, select

from tocsin.store.tables import api_tokens
from tocsin.store.tx import Tx


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
) -> None:
    """Store one token digest with its scope, role and API-wide permissions."""
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
