"""The triggers config: whole (``set_triggers``, ``get_triggers``), one trigger at a time, and a
scope's tables.

``set_triggers``, ``patch_trigger`` and ``delete_trigger`` all save through :meth:`_save` (limits,
``validate_triggers``, state sync), so every SPEC §5 rule holds: a merge keeps the trigger's id,
hence its state and ledger; a schedule type change under that id is refused with the SPEC text; a
removed trigger is retired, not forgotten. A tenant route passes its token's ``principal``: an
action that reaches app code is checked against it (``service.exposure``); None is the trusted
in-process caller.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any

from tocsin import messages
from tocsin.core.config.patch import merge_patch
from tocsin.core.model import Table
from tocsin.engine import configs
from tocsin.errors import NotFound, ValidationError
from tocsin.service import exposure
from tocsin.service.auth import Principal
from tocsin.service.base import Service
from tocsin.service.data import SCOPES, _check_page, _locked_table, _table, public_table
from tocsin.store import records as store_records
from tocsin.store.tx import Tx

if TYPE_CHECKING:
    from tocsin.service.iac import IacService


def _stored(table: Table) -> list[dict[str, Any]]:
    """The stored config as authors see it (the token ids of ``core.config.exposure`` are kept from
    the stored config when it is saved again)."""
    return [dict(t) for t in configs.authored_config(table.triggers)]


def _index_of(triggers: list[dict[str, Any]], trigger_id: object) -> int:
    for index, trigger in enumerate(triggers):
        if trigger.get("id") == trigger_id:
            return index
    raise NotFound(messages.TRIGGER_NOT_FOUND)


class TriggerService(Service):
    """``set_triggers``, ``get_triggers``, ``list_tables``, ``get_trigger``, ``patch_trigger``,
    ``delete_trigger``."""

    def set_triggers(
        self,
        table_id: str,
        triggers: object,
        now: datetime | None = None,
        *,
        principal: Principal | None = None,
    ) -> list[dict[str, Any]]:
        """Full replace of the triggers config; returns it normalized, with every id (§3–§5.2).
        ``principal``: the token of a tenant route, which may save an action reaching app code
        only within its reach (403 otherwise; ``service.exposure``); None: trusted."""
        at = self._now(now)
        with self.store.begin() as tx:
            table = _locked_table(tx, table_id)
            return self._save(tx, table, triggers, at, principal)

    def get_triggers(self, table_id: str) -> list[dict[str, Any]]:
        """The stored triggers config (``[]`` when none)."""
        with self.store.read() as tx:
            return configs.authored_config(_table(tx, table_id).triggers)

    def list_tables(
        self,
        scope: str | None = None,
        scope_id: str | None = None,
        skip: int = 0,
        limit: int = 50,
    ) -> dict[str, Any]:
        """Live tables, oldest first, of one scope when given (every scope's otherwise):
        ``{"items", "total", "skip", "limit"}``."""
        _check_page(skip, limit)
        if scope is not None and scope not in SCOPES:
            raise ValidationError(messages.scope_invalid(scope))
        canonical = None
        if scope_id is not None:
            try:
                canonical = str(uuid.UUID(str(scope_id)))
            except ValueError:
                raise ValidationError(messages.scope_id_invalid(scope_id)) from None
        with self.store.read() as tx:
            items, total = store_records.page_tables(
                tx, scope=scope, scope_id=canonical, skip=skip, limit=limit
            )
        return {
            "items": [public_table(t) for t in items],
            "total": total,
            "skip": skip,
            "limit": limit,
        }

    def get_trigger(self, table_id: str, trigger_id: str) -> dict[str, Any]:
        """One trigger of the stored config, with its id and its actions' ids."""
        with self.store.read() as tx:
            triggers = _stored(_table(tx, table_id))
        return triggers[_index_of(triggers, trigger_id)]

    def patch_trigger(
        self,
        table_id: str,
        trigger_id: str,
        patch: object,
        now: datetime | None = None,
        *,
        principal: Principal | None = None,
    ) -> dict[str, Any]:
        """Merge ``patch`` (RFC 7396) into one trigger and save the config; returns the trigger,
        normalized. The id stays; ``patch`` may repeat it but never change it. ``principal``:
        as for ``set_triggers``."""
        at = self._now(now)
        if not isinstance(patch, Mapping):
            raise ValidationError(messages.TRIGGER_PATCH_NOT_OBJECT)
        if "id" in patch and patch["id"] != trigger_id:
            raise ValidationError(messages.trigger_patch_id_mismatch(trigger_id, patch["id"]))
        with self.store.begin() as tx:
            table = _locked_table(tx, table_id)
            triggers = _stored(table)
            index = _index_of(triggers, trigger_id)
            triggers[index] = {**merge_patch(triggers[index], patch), "id": trigger_id}
            saved = self._save(tx, table, triggers, at, principal)
        return saved[_index_of(saved, trigger_id)]

    def delete_trigger(self, table_id: str, trigger_id: str, now: datetime | None = None) -> None:
        """Remove one trigger from the config: it is retired (state and ledger kept, SPEC §5.2),
        and saving its id again revives it."""
        at = self._now(now)
        with self.store.begin() as tx:
            table = _locked_table(tx, table_id)
            triggers = _stored(table)
            del triggers[_index_of(triggers, trigger_id)]
            self._save(tx, table, triggers, at)

    def _save(
        self,
        tx: Tx,
        table: Table,
        triggers: object,
        at: datetime,
        principal: Principal | None = None,
    ) -> list[dict[str, Any]]:
        saver = exposure.saver(self.core, principal)
        return configs.set_triggers_config(
            tx,
            table=table,
            raw=triggers,
            now=at,
            limits=self.settings,
            new_id=self._new_id,
            saver=saver,
        )


class TenantSaves:
    """The triggers config saves of a tenant route (``Tocsin.as_tenant(principal)``): those of
    the facade, checked against the route's verified token (``service.exposure``, SPEC §15).
    ``plan`` and ``apply`` take trigger documents of the token's own scope only."""

    def __init__(self, triggers: TriggerService, iac: IacService, principal: Principal) -> None:
        self._triggers, self._iac, self.principal = triggers, iac, principal

    def set_triggers(
        self, table_id: str, triggers: object, now: datetime | None = None
    ) -> list[dict[str, Any]]:
        return self._triggers.set_triggers(table_id, triggers, now, principal=self.principal)

    def patch_trigger(
        self, table_id: str, trigger_id: str, patch: object, now: datetime | None = None
    ) -> dict[str, Any]:
        who = self.principal
        return self._triggers.patch_trigger(table_id, trigger_id, patch, now, principal=who)

    def plan(self, documents: object) -> list[dict[str, Any]]:
        who = self.principal
        return self._iac.plan(who.scope, who.scope_id, documents, schedules=False, principal=who)

    def apply(self, documents: object, now: datetime | None = None) -> list[dict[str, Any]]:
        who = self.principal
        return self._iac.apply(
            who.scope, who.scope_id, documents, now, schedules=False, principal=who
        )
