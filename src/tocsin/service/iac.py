"""Infrastructure as code: export, plan and apply trigger documents (SPEC §11, issue 15).

``export`` reads a scope's stored configs; ``plan`` diffs documents against them (``tocsin.iac``,
pure); ``apply`` carries a plan out through ``set_triggers``, the API's one write path (same
validation, same adoption, the state retire/revive rules of SPEC §5). Every changed table is
checked first, so a document the API would refuse fails before anything is written; then the
tables are saved one at a time, each in its own transaction.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from tocsin import iac, messages
from tocsin.core import limits
from tocsin.core.model import Table
from tocsin.engine import configs
from tocsin.errors import ValidationError
from tocsin.service.base import TocsinBase
from tocsin.service.data import SCOPES, DataMixin
from tocsin.store import records as store_records


def _scope(scope: object, scope_id: object) -> tuple[str, str]:
    if scope not in SCOPES:
        raise ValidationError(messages.scope_invalid(scope))
    try:
        return str(scope), str(uuid.UUID(str(scope_id)))
    except ValueError:
        raise ValidationError(messages.scope_id_invalid(scope_id)) from None


class IacMixin(DataMixin, TocsinBase):
    """``export`` / ``plan`` / ``apply`` over one scope's tables. See SPEC §11."""

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

    def _plans(self, scope: str, scope_id: str, documents: object) -> list[iac.TablePlan]:
        scope, scope_id = _scope(scope, scope_id)
        grouped = iac.group(documents)
        iac.check_ids_across_tables(grouped)
        found = self._scope_tables(scope, scope_id)
        by_name = iac.resolve(found, [g.name for g in grouped], scope=scope, scope_id=scope_id)
        return [iac.plan_table(g, iac.stored_config(by_name[g.name])) for g in grouped]

    def plan(self, scope: str, scope_id: str, documents: object) -> list[dict[str, Any]]:
        """Per trigger of every table the documents name: ``{"table", "trigger_id", "name",
        "action": create|update|delete|noop, "changes"}`` (adopted triggers carry
        ``"adopted": true``). Reads only."""
        return [entry for p in self._plans(scope, scope_id, documents) for entry in p.entries]

    def apply(
        self, scope: str, scope_id: str, documents: object, now: datetime | None = None
    ) -> list[dict[str, Any]]:
        """Carry out the plan of ``documents`` and return it (created triggers with the ids
        they were saved under). Tables whose plan is all noop are not written."""
        at = self._now(now)
        plans = self._plans(scope, scope_id, documents)
        changed = [p for p in plans if p.changed]
        ids = self._check_plans(scope, scope_id, changed)
        for plan in changed:
            saved = self.set_triggers(ids[plan.name], plan.config, now=at)
            for entry_index, config_index in plan.created.items():
                plan.entries[entry_index]["trigger_id"] = saved[config_index]["id"]
        return [entry for p in plans for entry in p.entries]

    def _check_plans(
        self, scope: str, scope_id: str, plans: Sequence[iac.TablePlan]
    ) -> dict[str, str]:
        """Every changed table's config through the checks ``set_triggers`` runs, before any
        is saved (a refused document fails the whole apply with nothing written); returns
        ``{table name: table id}``."""
        scope, scope_id = _scope(scope, scope_id)
        with self.store.read() as tx:
            found = store_records.list_tables(tx, scope=scope, scope_id=scope_id)
            names = [p.name for p in plans]
            tables = iac.resolve(found, names, scope=scope, scope_id=scope_id)
            for plan in plans:
                table = tables[plan.name]
                limits.check_triggers(plan.config, table.as_dict(), self.settings)
                configs.check_triggers_config(tx, table=table, raw=plan.config, new_id=self._new_id)
        return {name: table.id for name, table in tables.items()}


__all__ = ["IacMixin"]
