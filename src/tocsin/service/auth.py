"""Bearer tokens and per-scope roles on the facade (SPEC §15).

A token is ``secrets.token_urlsafe(32)``; only its SHA-256 hex digest is stored. Verification
looks the digest up and compares it again with :func:`hmac.compare_digest`; an expired
(``expires_at`` reached) or revoked token is refused like an unknown one (401). Roles per scope:

- ``member``: read (get a table, list records, read a chatroom's messages)
- ``moderator``: everything a member may do, plus writes, triggers, runs, preview, retry and
  staged changes

API-wide permissions (SPEC §12, §15) guard ``/api/schedules…`` and ``/api/workflows…``:
``schedules:read`` and ``schedules:write`` (which includes read). A token may carry them beside
a scope, or alone (``tocsin tokens create --permission schedules:write``): such a token has no
tenant scope (stored as scope ``api``) and every tenant route refuses it.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from tocsin import messages
from tocsin.core.model import ApiToken
from tocsin.errors import NotFound, PermissionDenied, TocsinError, ValidationError
from tocsin.service.base import Service
from tocsin.store import tokens

SCOPES = ("chatroom", "workspace", "user")
ROLES = ("member", "moderator")
ROLE_RANK = {"member": 1, "moderator": 2}
PERMISSIONS = ("schedules:read", "schedules:write")
IMPLIED = {"schedules:read": ("schedules:read", "schedules:write")}
NO_SCOPE = ("api", "-")


class Unauthenticated(TocsinError):
    """No bearer token, or one that matches no stored digest (401)."""

    status = 401


@dataclass(frozen=True, slots=True)
class Principal:
    """Who a verified token speaks for."""

    scope: str
    scope_id: str
    role: str
    permissions: frozenset[str] = frozenset()
    token_id: str | None = None  # the stored token's id (what a saved action records)

    def may(self, role: str) -> bool:
        return ROLE_RANK[self.role] >= ROLE_RANK[role]

    def has(self, permission: str) -> bool:
        """``schedules:write`` includes ``schedules:read``."""
        return any(p in self.permissions for p in IMPLIED.get(permission, (permission,)))


def token_digest(token: str) -> str:
    """The SHA-256 hex digest under which a token is stored."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def parse_scope(text: str) -> tuple[str, str]:
    """``"chatroom:<uuid>"`` → ``("chatroom", "<uuid>")`` with the UUID normalized."""
    kind, _, raw_id = text.partition(":")
    if kind not in SCOPES:
        raise ValidationError(messages.token_scope_invalid(text))
    try:
        scope_id = str(uuid.UUID(raw_id))
    except ValueError:
        raise ValidationError(messages.token_scope_invalid(text)) from None
    return kind, scope_id


class AuthService(Service):
    """Token create / verify / authorize."""

    def create_token(
        self,
        *,
        scope: str | None = None,
        scope_id: str | None = None,
        role: str = "member",
        permissions: Sequence[str] = (),
        now: datetime | None = None,
        expires_at: datetime | None = None,
    ) -> str:
        """Create a token for ``role`` in one scope and/or API-wide ``permissions``, valid until
        ``expires_at`` (None: until revoked); returns the plaintext (shown once)."""
        for permission in permissions:
            if permission not in PERMISSIONS:
                raise ValidationError(messages.token_permission_invalid(permission))
        if scope is None and scope_id is None and permissions:
            kind, normalized_id = NO_SCOPE
        else:
            kind, normalized_id = parse_scope(f"{scope}:{scope_id}")
        if role not in ROLES:
            raise ValidationError(messages.token_role_invalid(role))
        created = self._now(now)
        if expires_at is not None:
            if expires_at.tzinfo is None:
                raise ValidationError(messages.naive_datetime("expires_at"))
            if expires_at <= created:
                raise ValidationError(messages.TOKEN_EXPIRES_IN_PAST)
        token = secrets.token_urlsafe(32)
        with self.store.begin() as tx:
            tokens.insert_token(
                tx,
                token_id=str(uuid.uuid4()),
                token_hash=token_digest(token),
                scope=kind,
                scope_id=normalized_id,
                role=role,
                now=created,
                permissions=sorted(set(permissions)),
                expires_at=expires_at,
            )
        return token

    def verify_token(self, token: str, *, now: datetime | None = None) -> Principal | None:
        """The principal of ``token``, or None when no stored digest matches or the token is
        revoked or expired at ``now`` (default: the wall clock)."""
        digest = token_digest(token)
        with self.store.read() as tx:
            row = tokens.find_token_by_hash(tx, token_hash=digest)
        if row is None or not hmac.compare_digest(str(row.token_hash), digest):
            return None
        return self._live(row, now)

    def principal_by_id(self, token_id: str, *, now: datetime | None = None) -> Principal | None:
        """The principal of the stored token ``token_id``, or None when there is none or it is
        revoked or expired at ``now`` (what a saved action's token id is checked with)."""
        with self.store.read() as tx:
            row = tokens.find_token_by_id(tx, token_id=token_id)
        return self._live(row, now) if row is not None else None

    def _live(self, row: ApiToken, now: datetime | None) -> Principal | None:
        if row.revoked_at is not None:
            return None
        if row.expires_at is not None and row.expires_at <= self._now(now):
            return None
        return Principal(
            scope=row.scope,
            scope_id=row.scope_id,
            role=row.role,
            permissions=frozenset(row.permissions or ()),
            token_id=row.id,
        )

    def list_tokens(self) -> list[dict[str, Any]]:
        """Every token's id, scope, role and instants (never a secret or its digest)."""
        with self.store.read() as tx:
            return [token.as_dict() for token in tokens.list_tokens(tx)]

    def revoke_token(self, token_id: str, *, now: datetime | None = None) -> dict[str, Any]:
        """Revoke a token by id from ``now`` on (idempotent); 404 for an unknown id."""
        with self.store.begin() as tx:
            row = tokens.revoke_token(tx, token_id=token_id, now=self._now(now))
        if row is None:
            raise NotFound(messages.TOKEN_NOT_FOUND)
        return row.as_dict()

    def authenticate(self, token: str | None, *, scope: str, scope_id: str) -> Principal:
        """The principal of ``token`` if it speaks for ``scope``/``scope_id`` (any role).

        Raises :class:`Unauthenticated` (401) for a missing, unknown, expired or revoked token
        and :class:`PermissionDenied` (403) for another tenant's scope.
        """
        principal = self.verify_token(token) if token else None
        if principal is None:
            raise Unauthenticated(messages.TOKEN_INVALID)
        if (principal.scope, principal.scope_id) != (scope, _normalize_uuid(scope_id)):
            raise PermissionDenied(messages.SCOPE_FORBIDDEN)
        return principal

    def authorize(self, token: str | None, *, scope: str, scope_id: str, role: str) -> Principal:
        """The principal of ``token`` if it may act as ``role`` in ``scope``/``scope_id``.

        Raises :class:`Unauthenticated` (401) for a missing, unknown, expired or revoked token
        and :class:`PermissionDenied` (403) for another tenant's scope or a lower role.
        """
        principal = self.authenticate(token, scope=scope, scope_id=scope_id)
        if not principal.may(role):
            raise PermissionDenied(messages.role_required(role))
        return principal

    def authorize_permission(self, token: str | None, *, permission: str) -> Principal:
        """The principal of ``token`` if it carries ``permission``: 401 for a missing, unknown,
        expired or revoked token, 403 for one without the permission."""
        principal = self.verify_token(token) if token else None
        if principal is None:
            raise Unauthenticated(messages.TOKEN_INVALID)
        if not principal.has(permission):
            raise PermissionDenied(messages.permission_required(permission))
        return principal


def _normalize_uuid(text: str) -> str:
    try:
        return str(uuid.UUID(text))
    except ValueError:
        return text


__all__ = ["AuthService", "Principal", "Unauthenticated", "parse_scope", "token_digest"]
