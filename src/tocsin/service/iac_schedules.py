"""Schedule documents in ``export`` / ``plan`` / ``apply`` (SPEC §11, §12, §13).

Each document is validated exactly as ``Tocsin.schedules.create`` / ``POST /api/schedules``
validate a new schedule (the same ``Schedule`` and ``declared_schedules``, the same check of the
ids a tree's events name), already at plan time: the normal form the differ compares is what
would be stored. A refused document fails with its number and the API's text; nothing is
written. ``apply`` re-plans and writes every workflow in one transaction: creates (an id the
document gives, else a new ``sch_…``), updates (timing changed: rescheduled from ``now`` with
its latches reset, as a redeploy does; payload or options only: patched in place) and deletes.
A pause (``paused_at``) is state, not configuration: documents neither show nor change it.

Deletion scope: only workflows the documents name are looked at (a line holding only
``"workflow"`` names one with no schedules); their imperative schedules no document names or
adopts plan as delete. Other workflows' schedules and declared schedules are never touched.
"""

from __future__ import annotations

import dataclasses
import re
import uuid
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from tocsin import messages
from tocsin.core.schedules.tree import from_json
from tocsin.errors import ConfigError, ValidationError
from tocsin.iac.schedules import ORDER, Authored, WorkflowPlan, body, canonical, plan_workflow
from tocsin.service.schedules import imperative_row
from tocsin.store import schedules as store_schedules
from tocsin.store.tx import Store, Tx
from tocsin.workflows.definition import DeclaredSchedule, Schedule, declared_schedules
from tocsin.workflows.sync import check_trigger_ids, schedule_changes

SCHEDULE_ID = re.compile(r"sch_[A-Za-z0-9_.-]{1,60}", re.ASCII)
_OPTIONS = ("cron", "timezone", "input_data", "initial_state", "request_context", "metadata")


@dataclass
class Parsed:
    """A schedule document, validated: the differ's view and what a save writes."""

    authored: Authored
    decl: DeclaredSchedule


def _invalid(number: int, text: str) -> ValidationError:
    return ValidationError(messages.iac_document_invalid(number, text))


def _parse(number: int, document: Mapping[str, Any], registry: Collection[str]) -> Parsed:
    extra = sorted(str(k) for k in document if k not in ORDER)
    if extra:
        raise _invalid(number, messages.iac_schedule_keys_unknown(extra, list(ORDER)))
    workflow = document["workflow"]
    if not isinstance(workflow, str) or workflow not in registry:
        raise _invalid(number, messages.workflow_unknown(workflow))
    sid = document.get("id")
    if sid == "":
        sid = None
    if sid is not None and (not isinstance(sid, str) or not SCHEDULE_ID.fullmatch(sid)):
        raise _invalid(number, messages.iac_schedule_id_invalid(sid))
    for key in ("cron", "timezone"):
        if document.get(key) is not None and not isinstance(document[key], str):
            raise _invalid(number, messages.iac_schedule_key_not_string(key, document[key]))
    options = {k: document[k] for k in _OPTIONS if document.get(k) is not None}
    options.update(
        {k: document[k] for k in ("overlap", "catch_up", "max_catch_up") if k in document}
    )
    notes: list[str] = []
    try:
        if document.get("trigger") is not None:
            options["trigger"] = from_json(document["trigger"])
        (decl,) = declared_schedules(workflow, Schedule(**options), notes)
    except ConfigError as exc:
        raise _invalid(number, exc.detail) from None
    normal = body(dataclasses.asdict(decl))
    return Parsed(Authored(number, sid, normal, notes), decl)


def split(documents: Sequence[object]) -> tuple[list[object], list[tuple[int, Mapping[str, Any]]]]:
    """Trigger documents (as given, for ``iac.group``) and numbered schedule documents."""
    tables: list[object] = []
    schedules: list[tuple[int, Mapping[str, Any]]] = []
    for number, document in enumerate(documents, start=1):
        if isinstance(document, Mapping) and "workflow" in document:
            if "table" in document:
                raise _invalid(number, messages.IAC_DOCUMENT_BOTH_KINDS)
            schedules.append((number, document))
        else:
            tables.append(document)
    return tables, schedules


@dataclass
class SchedulePlans:
    plans: list[WorkflowPlan]
    parsed: dict[int, Parsed]  # by document number

    @property
    def entries(self) -> list[dict[str, Any]]:
        return [entry for plan in self.plans for entry in plan.entries]


def plan_schedules(
    tx: Tx,
    documents: Sequence[tuple[int, Mapping[str, Any]]],
    registry: Collection[str],
    *,
    for_update: bool = False,
) -> SchedulePlans:
    """Validate the documents and diff them, per workflow, against its imperative rows."""
    grouped: dict[str, list[Authored]] = {}
    parsed: dict[int, Parsed] = {}
    seen: set[str] = set()
    for number, document in documents:
        if set(document) == {"workflow"}:  # the workflow is managed, with no schedules
            workflow = document["workflow"]
            if not isinstance(workflow, str) or workflow not in registry:
                raise _invalid(number, messages.workflow_unknown(workflow))
            grouped.setdefault(workflow, [])
            continue
        one = parsed[number] = _parse(number, document, registry)
        sid = one.authored.schedule_id
        if sid is not None:
            if sid in seen:
                raise _invalid(number, messages.iac_schedule_id_twice(sid))
            seen.add(sid)
            row = store_schedules.get_schedule(tx, schedule_id=sid)
            if row is not None and row.source != "imperative":
                raise _invalid(number, messages.iac_schedule_declared(sid))
            if row is not None and row.workflow_id != one.decl.workflow_id:
                text = messages.iac_schedule_other_workflow(
                    sid, row.workflow_id, one.decl.workflow_id
                )
                raise _invalid(number, text)
        grouped.setdefault(one.decl.workflow_id, []).append(one.authored)
    rows = store_schedules.imperative_schedules(
        tx, workflow_ids=list(grouped), for_update=for_update
    )
    plans = [
        plan_workflow(wf, docs, [r.as_dict() for r in rows if r.workflow_id == wf])
        for wf, docs in grouped.items()
    ]
    _check_ids(tx, plans, parsed, registry, {})
    return SchedulePlans(plans, parsed)


def _check_ids(
    tx: Tx,
    plans: Sequence[WorkflowPlan],
    parsed: Mapping[int, Parsed],
    registry: Collection[str],
    new_ids: Mapping[int, str],
) -> None:
    """The ids the written schedules' trees name must exist (``check_trigger_ids``: the API's
    check and text); a schedule this apply creates or keeps counts as existing."""
    written: list[tuple[int, str | None]] = [(d.number, None) for p in plans for _, d in p.creates]
    written += [(d.number, sid) for p in plans for sid, d in p.updates]
    decls = {}
    for number, sid in written:
        name = sid or parsed[number].authored.schedule_id or new_ids.get(number) or "(new)"
        decls[number] = dataclasses.replace(parsed[number].decl, id=name)
    for number, decl in sorted(decls.items()):  # the others' ids count as known, their trees not
        others = [dataclasses.replace(d, trigger=None) for n, d in decls.items() if n != number]
        try:
            check_trigger_ids(tx, [decl, *others], registry)
        except ConfigError as exc:
            raise _invalid(number, exc.detail) from None


def apply_schedules(
    store: Store,
    documents: Sequence[tuple[int, Mapping[str, Any]]],
    registry: Collection[str],
    *,
    now: datetime,
) -> list[dict[str, Any]]:
    """Plan and carry out ``documents`` in one transaction; the plan with created ids."""
    with store.begin() as tx:
        planned = plan_schedules(tx, documents, registry, for_update=True)
        new_ids: dict[int, str] = {}
        for plan in planned.plans:
            for _, doc in plan.creates:
                new_ids[doc.number] = doc.schedule_id or f"sch_{uuid.uuid4().hex[:16]}"
        _check_ids(tx, planned.plans, planned.parsed, registry, new_ids)
        for plan in planned.plans:
            for sid in plan.deletes:
                store_schedules.delete_schedule(tx, schedule_id=sid)
            for index, doc in plan.creates:
                sid = new_ids[doc.number]
                decl = dataclasses.replace(planned.parsed[doc.number].decl, id=sid)
                store_schedules.insert_schedule(tx, values=imperative_row(sid, decl, now))
                plan.entries[index]["schedule_id"] = sid
            for sid, doc in plan.updates:
                row = store_schedules.get_schedule(tx, schedule_id=sid)
                assert row is not None  # locked by the plan above
                decl = planned.parsed[doc.number].decl
                _, values = schedule_changes(decl, row, now)
                if values:
                    store_schedules.update_schedule(tx, schedule_id=sid, values=values, now=now)
        return planned.entries


def export_schedules(tx: Tx, workflows: Sequence[str] | None) -> list[dict[str, Any]]:
    """The imperative schedules as documents: of ``workflows`` (in that order) when given,
    else of every workflow that has one (by workflow id); schedules in id order."""
    rows = store_schedules.imperative_schedules(tx, workflow_ids=workflows)
    order = {w: i for i, w in enumerate(workflows)} if workflows is not None else {}
    rows.sort(key=lambda r: (order.get(r.workflow_id, 0), r.workflow_id, r.id))
    return [canonical(r.workflow_id, r.id, body(r.as_dict())) for r in rows]


__all__ = ["SchedulePlans", "apply_schedules", "export_schedules", "plan_schedules", "split"]
