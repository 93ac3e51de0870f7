"""``Tocsin.schedules``: list, read, pause, resume, create, delete workflow schedules (§12).

Pause and resume are persisted and idempotent. Resume recomputes ``next_fire_at`` from ``now``:
a week of pause fires nothing backlogged, the next fire is the next regular instant. Imperative
schedules (``sch_…``) are created and deleted here; declared ones (``wf_…``) live in code.
"""

from __future__ import annotations

import json
import uuid
import warnings
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from datetime import datetime
from typing import Any

from tocsin import messages
from tocsin.core.model import WorkflowActivity, WorkflowSchedule
from tocsin.core.schedules.skips import SCHEDULE
from tocsin.core.schedules.tree import Node, from_json
from tocsin.core.time.instants import require_aware
from tocsin.engine.backfill import (
    MAX_WITHOUT_FORCE,
    Progress,
    backfill_plan,
    run_backfill,
)
from tocsin.engine.schedule_whynot import schedule_next_fires
from tocsin.engine.schedules import resume_schedule
from tocsin.errors import Conflict, NotFound, ValidationError
from tocsin.service.history import schedule_history
from tocsin.service.schedule_views import public_schedule, table_ids, trigger_view
from tocsin.service.whynot import check_n, skip_view
from tocsin.store import records as store_records
from tocsin.store import schedules as store_schedules
from tocsin.store import skips as store_skips
from tocsin.store import workflow_runs as store_wf_runs
from tocsin.store.tx import Store, Tx
from tocsin.workflows.definition import (
    CatchUp,
    DeclaredSchedule,
    Overlap,
    Schedule,
    Workflow,
    declared_schedules,
    limited_schedules,
)
from tocsin.workflows.sync import check_trigger_ids, schedule_row
from tocsin.workflows.views import public_workflow

MAX_PAGE = 500
NO_ACTIVITY = WorkflowActivity(schedules=(), runs=0, last_run_at=None)
MAX_ID = 64


def check_page(skip: object, limit: object) -> None:
    ints = all(isinstance(v, int) and not isinstance(v, bool) for v in (skip, limit))
    if not ints or not 0 <= skip <= 2**62 or not 1 <= limit <= MAX_PAGE:  # type: ignore[operator]
        raise ValidationError(messages.page_invalid(skip, limit))


def _require(tx: Tx, schedule_id: object) -> WorkflowSchedule:
    row = None
    if isinstance(schedule_id, str) and 0 < len(schedule_id) <= MAX_ID:
        row = store_schedules.get_schedule(tx, schedule_id=schedule_id, for_update=not tx.readonly)
    if row is None:
        raise NotFound(messages.SCHEDULE_NOT_FOUND)
    return row


def _table_names(tx: Tx, rows: Iterable[WorkflowSchedule]) -> dict[str, str]:
    """The names of the tables the compound trees of ``rows`` listen to (their words name a
    table by its name, not its id)."""
    wanted = {i for r in rows if r.trigger_tree is not None for i in table_ids(r.trigger_tree)}
    return store_records.table_names(tx, table_ids=wanted)


def imperative_row(sid: str, decl: DeclaredSchedule, at: datetime) -> dict[str, Any]:
    """The row of a new imperative schedule ``sid``; its payload must be plain JSON."""
    payload = [decl.input_data, decl.initial_state, decl.request_context, decl.metadata]
    try:
        json.dumps(payload, allow_nan=False)
    except (TypeError, ValueError):
        raise ValidationError(messages.not_plain_json("schedule data")) from None
    return schedule_row(replace(decl, id=sid), at, source="imperative")


class Schedules:
    """The schedules service of one facade."""

    def __init__(
        self,
        store: Store,
        registry: Callable[[], Mapping[str, Workflow]],
        clock: Callable[[datetime | None], datetime],
        *,
        max_instants: int,
    ) -> None:
        """``max_instants``: a forced backfill's bound (``Settings.backfill_max_instants``)."""
        self._store, self._registry, self._now = store, registry, clock
        self._max_instants = max_instants

    def _view(self, tx: Tx, row: WorkflowSchedule, now: datetime | None = None) -> dict[str, Any]:
        fire = store_schedules.fires_by_id(tx, fire_ids=[row.last_fire_id or ""])
        names = _table_names(tx, [row])
        out = public_schedule(row, fire.get(str(row.last_fire_id)), names)
        if row.trigger_tree is not None:
            try:
                out["trigger"] = trigger_view(row, self._now(now), names)
            except ValueError:  # unreadable: the description says why
                out["trigger"] = None
        return out

    def workflows(self) -> dict[str, dict[str, Any]]:
        """Every workflow this process registers or the database knows (from its schedules and
        runs), by id: ``id``, ``code_loaded``, ``schedules`` (stored and declared ids), ``runs``
        and ``last_run_at``; with the code loaded also ``description`` and ``steps`` (as
        ``Tocsin.list_workflows``), without them None."""
        with self._store.read() as tx:
            known = store_schedules.known_workflows(tx)
        registry = self._registry()
        out: dict[str, dict[str, Any]] = {}
        for workflow_id in sorted(set(known) | set(registry)):
            stored = known.get(workflow_id, NO_ACTIVITY)
            wf = registry.get(workflow_id)
            declared = [s.id for s in wf.schedules] if wf is not None else []
            out[workflow_id] = {
                **(public_workflow(wf) if wf is not None else {"description": None, "steps": None}),
                "schedules": sorted({*stored.schedules, *declared}),
                "runs": stored.runs,
                "last_run_at": stored.last_run_at,
                "id": workflow_id,
                "code_loaded": wf is not None,
            }
        return out

    def list(
        self, workflow_id: str | None = None, skip: int = 0, limit: int = 50
    ) -> dict[str, Any]:
        """``{"items", "total", "skip", "limit"}``, ordered by id."""
        check_page(skip, limit)
        with self._store.read() as tx:
            rows, total = store_schedules.list_schedules(
                tx, workflow_id=workflow_id, skip=skip, limit=limit
            )
            fires = store_schedules.fires_by_id(tx, fire_ids=[r.last_fire_id or "" for r in rows])
            names = _table_names(tx, rows)
        items = [public_schedule(r, fires.get(str(r.last_fire_id)), names) for r in rows]
        return {"items": items, "total": total, "skip": skip, "limit": limit}

    def get(self, schedule_id: str, now: datetime | None = None) -> dict[str, Any]:
        """One schedule; a compound one with its tree, each latch and its next instant."""
        with self._store.read() as tx:
            return self._view(tx, _require(tx, schedule_id), now)

    def pause(self, schedule_id: str, now: datetime | None = None) -> dict[str, Any]:
        """Stop firing (persisted; idempotent; survives restarts and redeploys)."""
        at = self._now(now)
        with self._store.begin() as tx:
            row = _require(tx, schedule_id)
            if not row.paused:
                store_schedules.update_schedule(
                    tx, schedule_id=row.id, values={"paused_at": at}, now=at
                )
            return self._view(tx, _require(tx, schedule_id))

    def resume(self, schedule_id: str, now: datetime | None = None) -> dict[str, Any]:
        """Fire again from the next regular instant after ``now`` (no backlog; idempotent): the
        instants the pause owed are recorded ``paused`` (the decision of a paused schedule)."""
        at = self._now(now)
        with self._store.begin() as tx:
            row = _require(tx, schedule_id)
            if row.paused:
                resume_schedule(tx, row, at)
            return self._view(tx, _require(tx, schedule_id))

    def create(
        self,
        *,
        workflow_id: str,
        cron: str | None = None,
        trigger: Node | Mapping[str, Any] | None = None,
        timezone: str | None = None,
        input_data: Mapping[str, Any] | None = None,
        initial_state: Mapping[str, Any] | None = None,
        request_context: Mapping[str, Any] | None = None,
        metadata: Mapping[str, Any] | None = None,
        overlap: Overlap = "skip",
        now: datetime | None = None,
        catch_up: CatchUp = "latest",
        max_catch_up: int = 100,
    ) -> dict[str, Any]:
        """An imperative schedule (id ``sch_…``) of a registered workflow, validated first:
        ``cron`` or a compound ``trigger`` (nodes or their JSON tree, SPEC §13)."""
        at = self._now(now)
        if workflow_id not in self._registry():
            raise NotFound(messages.workflow_unknown(workflow_id))
        sid = f"sch_{uuid.uuid4().hex[:16]}"
        if isinstance(trigger, Mapping):
            trigger = from_json(trigger)
        entry = Schedule(
            cron=cron,
            trigger=trigger,
            timezone=timezone,
            input_data=input_data,
            initial_state=initial_state,
            request_context=request_context,
            metadata=metadata,
            overlap=overlap,
            catch_up=catch_up,
            max_catch_up=max_catch_up,
        )
        notes: list[str] = []
        (decl,) = declared_schedules(workflow_id, entry, notes)
        with self._store.read() as tx:
            check_trigger_ids(tx, [replace(decl, id=sid)], set(self._registry()))
        values = imperative_row(sid, decl, at)
        with self._store.begin() as tx:
            store_schedules.insert_schedule(tx, values=values)
            out = self._view(tx, _require(tx, sid), at)
        for note in notes:  # the caller sees them too (an AND of time triggers, a host zone)
            warnings.warn(note, UserWarning, stacklevel=2)
        return {**out, "warnings": notes}

    def delete(self, schedule_id: str) -> None:
        """Delete an imperative schedule (its fire history stays); declared ones → 409."""
        with self._store.begin() as tx:
            row = _require(tx, schedule_id)
            if row.source == "declared":
                raise Conflict(messages.schedule_declared(row.id))
            store_schedules.delete_schedule(tx, schedule_id=row.id)

    def fires(self, schedule_id: str, skip: int = 0, limit: int = 50) -> dict[str, Any]:
        """The fire history, newest first: ``{"items", "total", "skip", "limit"}``."""
        check_page(skip, limit)
        with self._store.read() as tx:
            row = _require(tx, schedule_id)
            fires, total = store_schedules.list_fires(
                tx, schedule_id=row.id, skip=skip, limit=limit
            )
        items = [f.as_dict() for f in fires]
        return {"items": items, "total": total, "skip": skip, "limit": limit}

    # --- why didn't it fire? ----------------------------------------------------------------

    def history(self, schedule_id: str, skip: int = 0, limit: int = 50) -> dict[str, Any]:
        """The fires interleaved with the skip ranges, newest first, paged as :meth:`fires`
        (see :mod:`tocsin.service.history`): items carry ``kind`` (``fire`` or ``skip``)."""
        check_page(skip, limit)
        with self._store.read() as tx:
            row = _require(tx, schedule_id)
            return schedule_history(tx, row.id, skip, limit)

    def skips(self, schedule_id: str, skip: int = 0, limit: int = 50) -> dict[str, Any]:
        """The schedule's skipped instants as ranges, newest first."""
        check_page(skip, limit)
        with self._store.read() as tx:
            row = _require(tx, schedule_id)
            rows, total = store_skips.list_skips(
                tx, target_kind=SCHEDULE, target_id=row.id, skip=skip, limit=limit
            )
        items = [skip_view(r) for r in rows]
        return {"items": items, "total": total, "skip": skip, "limit": limit}

    def next_fires(
        self, schedule_id: str, n: int = 10, now: datetime | None = None
    ) -> dict[str, Any]:
        """The next ``n`` instants (UTC and the schedule's zone); none while paused. With
        ``overlap="skip"`` and a run pending or running (``active_run``), a due instant is
        skipped, not listed; the later ones fire if the run has ended by then."""
        at, n = self._now(now), check_n(n)
        with self._store.read() as tx:
            row = _require(tx, schedule_id)
            busy = row.overlap == "skip" and bool(
                store_wf_runs.active_schedule_ids(tx, schedule_ids=[row.id])
            )
        items = schedule_next_fires(row, busy=busy, now=at, n=n)
        out = {"schedule_id": row.id, "paused": row.paused, "active_run": busy}
        return {**out, "items": items}

    def backfill(
        self,
        schedule_id: str,
        start: datetime,
        end: datetime,
        *,
        now: datetime | None = None,
        force: bool = False,
        progress: Progress | None = None,
    ) -> dict[str, int]:
        """One run per instant of ``[start, end)``, oldest first; idempotent (an instant
        backfilled before is not run again); more than 10,000 instants need ``force``."""
        at = self._now(now)
        try:
            first, last = require_aware(start, "start"), require_aware(end, "end")
        except ValueError as exc:
            raise ValidationError(str(exc)) from None
        if first >= last:
            raise ValidationError(messages.backfill_range_invalid())
        with self._store.read() as tx:
            row = _require(tx, schedule_id)
        if row.trigger_tree is not None:
            raise ValidationError(messages.backfill_compound(schedule_id))
        cap = self._max_instants if force else MAX_WITHOUT_FORCE
        plan = backfill_plan(row, first, last, cap)
        if len(plan.fires) > cap:
            raise ValidationError(messages.backfill_too_many(cap, forced=force))
        limited = limited_schedules(self._registry().values())  # their runs' own claim scope
        return run_backfill(self._store, row, plan, now=at, progress=progress, limited=limited)


__all__ = ["Schedules", "check_page", "imperative_row"]
