"""Infrastructure as code: export, plan and apply trigger documents (SPEC §11).

``export`` reads a scope's stored configs; ``plan`` diffs documents against them (``tocsin.iac``,
pure); ``apply`` carries a plan out through ``set_triggers``, the API's one write path (same
validation, same adoption, the state retire/revive rules of SPEC §5, the same check of a tenant
token's actions that reach app code). Every changed table is checked first, so a document the
API would refuse fails before anything is written; then the tables are saved one at a time, each
in its own transaction. ``plan`` runs that same check and answers each trigger it refuses as
``invalid`` (with the refusal's text) instead of failing.

Schedule documents (``"workflow"`` instead of ``"table"``: imperative workflow schedules,
:mod:`tocsin.service.iac_schedules`) may share a bundle with trigger documents; they are not
scoped, so ``scope`` / ``scope_id`` may be None when a bundle holds no trigger document. They
are validated (all of them) before any table is written, and written in one transaction.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import datetime
from functools import partial
from typing import Any

from tocsin import iac, messages
from tocsin.core.config.exposure import Saver
from tocsin.core.model import Table
from tocsin.engine import configs
from tocsin.errors import ValidationError
from tocsin.service import exposure, iac_schedules
from tocsin.service.auth import Principal
from tocsin.service.base import Core, Service
from tocsin.service.data import SCOPES
from tocsin.service.triggers import TriggerService
from tocsin.store import records as store_records
from tocsin.store.tx import Tx
from tocsin.workflows.definition import Workflow


def _scope(scope: object, scope_id: object) -> tuple[str, str]:
    if scope not in SCOPES:
        raise ValidationError(messages.scope_invalid(scope))
    try:
        return str(scope), str(uuid.UUID(str(scope_id)))
    except ValueError:
        raise ValidationError(messages.scope_id_invalid(scope_id)) from None


class IacService(Service):
    """``export`` / ``plan`` / ``apply`` over one scope's tables and the imperative workflow
    schedules. See SPEC §11. Tables are saved through ``triggers.set_triggers``; schedule
    documents are checked against the core's workflow registry."""

    def __init__(self, core: Core, *, triggers: TriggerService) -> None:
        super().__init__(core)
        self._triggers = triggers

    @property
    def workflows(self) -> dict[str, Workflow]:
        return self.core.workflows

    def _scope_tables(self, scope: str, scope_id: str) -> list[Table]:
        with self.store.read() as tx:
            return store_records.list_tables(tx, scope=scope, scope_id=scope_id)

    def export(
        self, scope: str, scope_id: str, tables: Sequence[str] | None = None
    ) -> list[dict[str, Any]]:
        """The scope's triggers as documents (normalized, canonical key order); only the named
        tables when ``tables`` is given. ``iac.dumps`` turns them into JSON Lines."""
        scope, scope_id = _scope(scope, scope_id)
        names = [tables] if isinstance(tables, str) else tables
        if names is not None and not all(isinstance(n, str) for n in names):
            raise ValidationError(messages.IAC_TABLES_NOT_NAMES)
        names = list(names) if names is not None else None
        found = self._scope_tables(scope, scope_id)
        return iac.export_documents(found, names, scope=scope, scope_id=scope_id)

    def export_schedules(self, workflows: Sequence[str] | None = None) -> list[dict[str, Any]]:
        """The imperative workflow schedules as documents (normalized, canonical key order):
        of the named workflows only when ``workflows`` is given. Declared schedules belong to
        code and are left out. ``iac.dumps`` turns them into JSON Lines."""
        names = [workflows] if isinstance(workflows, str) else workflows
        if names is not None and not all(isinstance(n, str) for n in names):
            raise ValidationError(messages.IAC_WORKFLOWS_NOT_NAMES)
        with self.store.read() as tx:
            return iac_schedules.export_schedules(tx, list(names) if names is not None else None)

    def _split(self, documents: object, schedules: bool) -> tuple[list[object], list[Any]]:
        if not isinstance(documents, list):
            raise ValidationError(messages.IAC_DOCUMENTS_NOT_LIST)
        tables, found = iac_schedules.split(documents)
        if found and not schedules:
            raise ValidationError(messages.IAC_SCHEDULES_NOT_HERE)
        return tables, found

    def _plans(
        self, scope: str | None, scope_id: str | None, tables: list[object]
    ) -> list[iac.TableDocumentPlan]:
        if not tables:
            return []
        if scope is None or scope_id is None:
            raise ValidationError(messages.IAC_TABLES_NEED_SCOPE)
        scope, scope_id = _scope(scope, scope_id)
        grouped = iac.group(tables)
        found = self._scope_tables(scope, scope_id)
        by_name = iac.resolve(found, [g.name for g in grouped], scope=scope, scope_id=scope_id)
        return [iac.plan_table(g, iac.stored_config(by_name[g.name])) for g in grouped]

    def plan(
        self,
        scope: str | None,
        scope_id: str | None,
        documents: object,
        *,
        schedules: bool = True,
        principal: Principal | None = None,
    ) -> list[dict[str, Any]]:
        """Per trigger of every table the documents name: ``{"table", "trigger_id", "name",
        "action": create|update|delete|noop|invalid, "changes"}`` (adopted triggers carry
        ``"adopted": true``; an ``invalid`` one, a trigger apply would refuse, carries
        ``"detail"``: the text ``PUT …/triggers`` answers, its table and trigger named); then
        per imperative schedule of every workflow the schedule documents name: ``{"workflow",
        "schedule_id", "action", "changes"}`` (``"adopted"``, ``"warnings"`` when any; an
        invalid schedule document is a 400, as at apply). ``schedules=False`` refuses schedule
        documents (the HTTP routes of one scope). ``principal``: a tenant route's token, checked as
        apply checks it. Reads only."""
        tables, found = self._split(documents, schedules)
        plans = self._plans(scope, scope_id, tables)
        self._check_plans(scope, scope_id, plans, mark=True, principal=principal)
        entries = [e for p in plans for e in p.entries]
        if found:
            with self.store.read() as tx:
                planned = iac_schedules.plan_schedules(tx, found, set(self.workflows))
            entries += planned.entries
        return entries

    def apply(
        self,
        scope: str | None,
        scope_id: str | None,
        documents: object,
        now: datetime | None = None,
        *,
        schedules: bool = True,
        principal: Principal | None = None,
    ) -> list[dict[str, Any]]:
        """Carry out the plan of ``documents`` and return it (created triggers and schedules
        with the ids they were saved under). Tables whose plan is all noop are not written.
        Every document is checked before anything is written. ``principal``: as for
        ``set_triggers`` (the token of a tenant route; None: trusted)."""
        at = self._now(now)
        tables, found = self._split(documents, schedules)
        plans = self._plans(scope, scope_id, tables)
        changed = [p for p in plans if p.changed]
        ids = self._check_plans(scope, scope_id, changed, mark=False, principal=principal)
        if found:  # every schedule document checked before a table is written
            with self.store.read() as tx:
                iac_schedules.plan_schedules(tx, found, set(self.workflows))
        for plan in changed:
            saved = self._triggers.set_triggers(
                ids[plan.name], plan.config, now=at, principal=principal
            )
            for entry_index, config_index in plan.created.items():
                plan.entries[entry_index]["trigger_id"] = saved[config_index]["id"]
        entries = [entry for p in plans for entry in p.entries]
        if found:
            registry = set(self.workflows)
            entries += iac_schedules.apply_schedules(self.store, found, registry, now=at)
        return entries

    def _check_plans(
        self,
        scope: str | None,
        scope_id: str | None,
        plans: Sequence[iac.TableDocumentPlan],
        *,
        mark: bool,
        principal: Principal | None = None,
    ) -> dict[str, str]:
        """Every changed table's config through the check every triggers save runs
        (``configs.check_triggers_config``), before any is saved; returns ``{table name: table
        id}``. Apply (``mark=False``) raises the first refusal: nothing is written. Plan
        (``mark=True``) marks each refused trigger's entry ``invalid`` instead
        (``iac.mark_refused``), so a plan shows what apply would refuse."""
        changed = [p for p in plans if p.changed]
        if not changed:
            return {}
        scope, scope_id = _scope(scope, scope_id)
        saver = exposure.saver(self.core, principal)
        with self.store.read() as tx:
            found = store_records.list_tables(tx, scope=scope, scope_id=scope_id)
            names = [p.name for p in changed]
            tables = iac.resolve(found, names, scope=scope, scope_id=scope_id)
            for plan in changed:
                check = partial(self._check_config, tx, tables[plan.name], saver=saver)
                if mark:
                    iac.mark_refused(plan, check)
                else:
                    check(plan.config)
        return {name: table.id for name, table in tables.items()}

    def _check_config(
        self,
        tx: Tx,
        table: Table,
        config: list[dict[str, Any]],
        *,
        saver: Saver | None,
    ) -> None:
        configs.check_triggers_config(
            tx, table=table, raw=config, limits=self.settings, new_id=self._new_id, saver=saver
        )


__all__ = ["IacService"]
