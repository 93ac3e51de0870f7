"""Per-scope webhook signing secrets: one live secret per ``(scope, scope_id)``.

The secret is kept in clear: it is an HMAC key tocsin itself must use to sign every webhook of
the scope (``actions.signing``). ``rotate_secret`` replaces it at once; ``ensure_secret`` creates
one on first use (``INSERT … ON CONFLICT DO NOTHING``, so two workers racing keep the same one).
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import select

from tocsin.store.dialects import upsert_insert
from tocsin.store.errors import map_db_errors
from tocsin.store.schema import signing_secrets
from tocsin.store.tx import Tx


def get_secret(tx: Tx, *, scope: str, scope_id: str) -> str | None:
    """The scope's signing secret, or None when it has none yet."""
    stmt = select(signing_secrets.c.secret).where(
        signing_secrets.c.scope == scope, signing_secrets.c.scope_id == scope_id
    )
    with map_db_errors():
        value = tx.conn.execute(stmt).scalar_one_or_none()
    return None if value is None else str(value)


def ensure_secret(tx: Tx, *, scope: str, scope_id: str, candidate: str, now: datetime) -> str:
    """The scope's secret; ``candidate`` becomes it when the scope had none."""
    tx.require_writable()
    stmt = (
        upsert_insert(tx, signing_secrets)
        .values(scope=scope, scope_id=scope_id, secret=candidate, created_at=now)
        .on_conflict_do_nothing(index_elements=["scope", "scope_id"])
    )
    with map_db_errors():
        tx.conn.execute(stmt)
    secret = get_secret(tx, scope=scope, scope_id=scope_id)
    return candidate if secret is None else secret


def rotate_secret(tx: Tx, *, scope: str, scope_id: str, secret: str, now: datetime) -> str:
    """Make ``secret`` the scope's signing secret (replacing any); returns it."""
    tx.require_writable()
    insert = upsert_insert(tx, signing_secrets).values(
        scope=scope, scope_id=scope_id, secret=secret, created_at=now
    )
    stmt = insert.on_conflict_do_update(
        index_elements=["scope", "scope_id"],
        set_={"secret": insert.excluded.secret, "created_at": insert.excluded.created_at},
    )
    with map_db_errors():
        tx.conn.execute(stmt)
    return secret


__all__ = ["ensure_secret", "get_secret", "rotate_secret"]
