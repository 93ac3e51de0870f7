"""Bearer tokens and per-scope roles on the facade (SPEC §15).

A token is ``secrets.token_urlsafe(32)``; only its SHA-256 hex digest is stored. Verification
looks the digest up and compares it again with :func:`hmac.compare_digest`. Roles per scope:

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

from tocsin import messages
from tocsin.errors import PermissionDenied, TocsinError, ValidationError
from tocsin.service.base import TocsinBase
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


class AuthMixin(TocsinBase):
    """Token create / verify / authorize."""

    def create_token(
        self,
        *,
        scope: str | None = None,
        scope_id: str | None = None,
        role: str = "member",
        permissions: Sequence[str] = (),
        now: datetime | None = None,
    ) -> str:
        """Create a token for ``role`` in one scope and/or API-wide ``permissions``; returns the
        plaintext (shown once)."""
        for permission in permissions:
            if permission not in PERMISSIONS:
                raise ValidationError(messages.token_permission_invalid(permission))
        if scope is None and scope_id is None and permissions:
            kind, normalized_id = NO_SCOPE
        else:
            kind, normalized_id = parse_scope(f"{scope}:{scope_id}")
        if role not in ROLES:
            raise ValidationError(messages.token_role_invalid(role))
        token = secrets.token_urlsafe(32)
        with self.store.begin() as tx:
            tokens.insert_token(
                tx,
                token_id=str(uuid.uuid4()),
                token_hash=token_digest(token),
                scope=kind,
                scope_id=normalized_id,
                role=role,
                now=self._now(now),
                permissions=sorted(set(permissions)),
            )
        return token

    def verify_token(self, token: str) -> Principal | None:
        """The principal of ``token``, or None when no stored digest matches."""
        digest = token_digest(token)
        with self.store.read() as tx:
            row = tokens.find_token_by_hash(tx, token_hash=digest)
        if row is None or not hmac.compare_digest(str(row["token_hash"]), digest):
            return None
        granted = frozenset(row.get("permissions") or ())
        return Principal(
            scope=row["scope"], scope_id=row["scope_id"], role=row["role"], permissions=granted
        )

    def authorize(self, token: str | None, *, scope: str, scope_id: str, role: str) -> Principal:
        """The principal of ``token`` if it may act as ``role`` in ``scope``/``scope_id``.

        Raises :class:`Unauthenticated` (401) for a missing or unknown token and
        :class:`PermissionDenied` (403) for another tenant's scope or a lower role.
        """
        principal = self.verify_token(token) if token else None
        if principal is None:
            raise Unauthenticated(messages.TOKEN_INVALID)
        if (principal.scope, principal.scope_id) != (scope, _normalize_uuid(scope_id)):
            raise PermissionDenied(messages.SCOPE_FORBIDDEN)
        if not principal.may(role):
            raise PermissionDenied(messages.role_required(role))
        return principal

    def authorize_permission(self, token: str | None, *, permission: str) -> Principal:
        """The principal of ``token`` if it carries ``permission`` (401 / 403 otherwise)."""
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


__all__ = ["AuthMixin", "Principal", "Unauthenticated", "parse_scope", "token_digest"]
