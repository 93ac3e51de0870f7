"""Which app code a tenant may reach from a trigger, at save and at run time (SPEC §10, §15).

A ``start_workflow`` or ``invoke_command`` action saved from a tenant route reaches code the app
registered. :func:`saver` turns the route's verified token into the ``core.config.exposure.Saver``
the config save checks and stamps with; :class:`RunGate` is the ``ActionEnv.gate`` port the two
actions ask before they start or invoke anything. The rule is ``core.config.exposure``'s: the target
is exposed to tenants (``workflow(..., tenants=True)``, ``register_command(..., tenants=True)``), or
the saving token holds ``schedules:write`` (at run time: still holds it, so revoking or expiring it
stops the action)."""

from __future__ import annotations

from datetime import datetime

from tocsin import messages
from tocsin.core.config.exposure import Saver
from tocsin.service.auth import AuthService, Principal
from tocsin.service.base import Core

WRITE = "schedules:write"


def exposed(core: Core, kind: str, target: str) -> bool:
    """Whether tenants may reach ``target`` through a ``kind`` action without ``WRITE``."""
    if kind == "start_workflow":
        found = core.workflows.get(target)
        return found is not None and found.tenants
    if kind == "invoke_command":
        return target in core.tenant_commands
    return False


def saver(core: Core, principal: Principal | None) -> Saver | None:
    """What a config save by ``principal`` is checked with (None: the trusted facade)."""
    if principal is None:
        return None
    if principal.token_id is None:  # a principal built in process, not by a token lookup
        raise ValueError(messages.TENANT_SAVE_NEEDS_TOKEN)
    return Saver(
        token_id=principal.token_id,
        may_write=principal.has(WRITE),
        exposed=lambda kind, target: exposed(core, kind, target),
    )


class RunGate:
    """``ActionEnv.gate``: why a tenant-saved action may no longer reach its target (a
    sentence), or None when it may."""

    def __init__(self, core: Core) -> None:
        self._core = core
        self._auth = AuthService(core)

    def __call__(self, kind: str, target: str, token_id: str, *, now: datetime) -> str | None:
        if exposed(self._core, kind, target):
            return None
        principal = self._auth.principal_by_id(token_id, now=now)
        if principal is not None and principal.has(WRITE):
            return None
        return messages.target_refused(kind, target, token_id)


__all__ = ["RunGate", "exposed", "saver"]
