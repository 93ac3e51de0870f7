"""Per-scope webhook signing secrets: rotate, and read for the CLI."""

from __future__ import annotations

import uuid
from datetime import datetime

from tocsin import messages
from tocsin.actions.signing import new_secret
from tocsin.errors import ValidationError
from tocsin.service.base import Service
from tocsin.store import secrets as store_secrets

SCOPES = ("chatroom", "workspace", "user")


def _scope(scope: str, scope_id: str) -> tuple[str, str]:
    if scope not in SCOPES:
        raise ValidationError(messages.scope_invalid(scope))
    try:
        return scope, str(uuid.UUID(str(scope_id)))
    except ValueError:
        raise ValidationError(messages.scope_id_invalid(scope_id)) from None


class SecretsService(Service):
    """The signing secret every webhook of a scope is signed with (``actions.signing``)."""

    def rotate_secret(self, scope: str, scope_id: str, now: datetime | None = None) -> str:
        """A new signing secret for the scope, in force at once (the old one stops signing);
        returns it. Also the way to learn a scope's first secret."""
        kind, canonical = _scope(scope, scope_id)
        with self.store.begin() as tx:
            return store_secrets.rotate_secret(
                tx, scope=kind, scope_id=canonical, secret=new_secret(), now=self._now(now)
            )

    def signing_secret(self, scope: str, scope_id: str) -> str | None:
        """The scope's current signing secret, or None when it has none yet."""
        kind, canonical = _scope(scope, scope_id)
        with self.store.read() as tx:
            return store_secrets.get_secret(tx, scope=kind, scope_id=canonical)
