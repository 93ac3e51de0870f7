"""Workflows on the facade (SPEC §12): registry, schedule sync, start, runs, cancel, resume.

``Tocsin.open(url, workflows=[...])`` registers workflows and writes nothing yet; their declared
schedules are synced once, at the first ``tick`` (``fire_schedules``) or ``start_workflow``
(registering is enough, SPEC §12), unless ``sync_schedules`` was called first (explicitly, with
its report). A facade nothing was registered with never syncs: its empty registry would delete
every declared schedule it does not know. Scheduled fires (``tick``) and ``start_workflow``
insert the same pending run row and execute it through the same executor
(``tocsin.workflows.runner.WorkflowExecutor``): ``start_workflow(wait=True)`` executes it at
once and returns the finished run, ``wait=False`` leaves it to ``work``, whose one worker
executes every kind of run (``RunsService.work``; this service names the workflows it claims:
:meth:`WorkflowService.claimed`).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime
from typing import Any

from pydantic import ValidationError as ModelError

from tocsin import messages
from tocsin.core.model import WorkflowRun
from tocsin.engine.ids import uuid7
from tocsin.engine.passes import Pass, fire_passes
from tocsin.engine.schedules import COUNTS, new_run, schedule_pass
from tocsin.engine.trees import tree_passes
from tocsin.errors import Conflict, NotFound, TocsinError, ValidationError
from tocsin.service.base import Core, Service
from tocsin.service.schedules import Schedules, check_page
from tocsin.store import workflow_runs as store_runs
from tocsin.store.runs import RunLimits
from tocsin.store.tx import Tx
from tocsin.workflows import runner
from tocsin.workflows.definition import Workflow, limited_schedules
from tocsin.workflows.sync import sync_schedules
from tocsin.workflows.views import public_run, public_workflow

CANCELABLE = ("pending", "running", "suspended")
RETRYABLE = ("failed", "canceled")
log = logging.getLogger("tocsin.app")


def log_sync(report: Mapping[str, list[str]]) -> None:
    """One log line per sync: how many schedules each outcome has."""
    log.info("schedules synced", extra={f"schedules_{k}": len(v) for k, v in report.items()})


class WorkflowService(Service):
    """Workflows (the core's registry), their schedules (``schedules``) and workflow runs."""

    def __init__(self, core: Core) -> None:
        super().__init__(core)
        self.schedules = Schedules(
            self.store,
            lambda: self.workflows,
            self._now,
            max_instants=self.settings.backfill_max_instants,
        )
        # the workflow runs' executor in the one worker (``Tocsin.work``: ``RunsService.work``)
        self.executor = runner.WorkflowExecutor(
            lambda: self.store, lambda: self.workflows, lambda: self.alert_env
        )
        self._sync_owed = False  # what was registered has not been synced yet
        self._sync_lock = threading.Lock()  # one sync at a time: the owed one happens once
        # what failed runs' on_failure actions run with (the facade wires the runs service's)
        self.alert_env: runner.AlertEnv | None = None

    @property
    def workflows(self) -> dict[str, Workflow]:
        return self.core.workflows

    def register_workflows(self, workflows: Iterable[Workflow]) -> None:
        """Add committed workflows to this facade's registry (a duplicate id raises)."""
        added: dict[str, Workflow] = {}
        for wf in workflows:
            if not isinstance(wf, Workflow):
                raise ValidationError(messages.not_a_workflow(wf))
            if wf.id in self.workflows or wf.id in added:
                raise ValidationError(messages.workflow_duplicate(wf.id))
            added[wf.id] = wf
        self.workflows.update(added)
        if added:
            self.owe_sync()

    def owe_sync(self) -> None:
        """Sync the declared schedules at the next ``fire_schedules`` or ``start_workflow``:
        workflows or lanes were registered (``Tocsin.open``, ``register_workflows``,
        ``t.lanes.register``)."""
        self._sync_owed = True

    def _sync_if_owed(self, at: datetime) -> None:
        if not self._sync_owed:
            return
        with self._sync_lock:
            if self._sync_owed:
                log_sync(self._sync(at))

    def list_workflows(self) -> list[dict[str, Any]]:
        return [public_workflow(self.workflows[k]) for k in sorted(self.workflows)]

    def get_workflow(self, workflow_id: str) -> dict[str, Any]:
        return public_workflow(self._workflow(workflow_id))

    def _workflow(self, workflow_id: object) -> Workflow:
        wf = self.workflows.get(workflow_id) if isinstance(workflow_id, str) else None
        if wf is None:
            raise NotFound(messages.workflow_unknown(workflow_id))
        return wf

    def sync_schedules(self, now: datetime | None = None) -> dict[str, list[str]]:
        """Declared schedules → rows: ``{"created", "rescheduled", "patched", "deleted",
        "unchanged"}`` (SPEC §12). What was registered is synced: nothing is owed any more."""
        with self._sync_lock:
            return self._sync(self._now(now))

    def _sync(self, at: datetime) -> dict[str, list[str]]:
        declared = [s for wf in self.workflows.values() for s in wf.schedules]
        registry = list(self.workflows.values())
        report = sync_schedules(self.store, declared, now=at, workflows=registry)
        self._sync_owed = False
        return report

    def fire_schedules(
        self, now: datetime | None = None, limit: int = 1000, *, drain: bool = False
    ) -> int:
        """Only the schedule half of ``tick``: fire due workflow schedules (up to ``limit``; with
        ``drain``, every due one, ``limit`` rows per transaction); returns the fires. The
        declared schedules are synced first when that is owed."""
        at = self._now(now)
        return fire_passes(self.store, self.tick_passes(limit, drain=drain), now=at)[COUNTS]

    def tick_passes(self, limit: int = 1000, *, drain: bool = True) -> list[Pass]:
        """The workflow schedules' passes of the tick's one paging loop: the cron schedules
        (the declared ones synced first when that is owed), then the trigger trees' events and
        due trees."""
        limited = limited_schedules(self.workflows.values())  # their runs' own claim scope
        return [
            schedule_pass(limit, drain=drain, prepare=self._prepared, limited=limited),
            *tree_passes(limit, limited=limited),
        ]

    def _prepared(self, at: datetime) -> bool:
        self._sync_if_owed(at)
        return True

    # --- runs ----------------------------------------------------------------------------------

    def start_workflow(
        self,
        workflow_id: str,
        input: Any = None,
        *,
        now: datetime | None = None,
        wait: bool = True,
        initial_state: Mapping[str, Any] | None = None,
        request_context: Mapping[str, Any] | None = None,
        check_input: bool = False,
    ) -> dict[str, Any]:
        """Start a registered workflow; ``wait=True`` runs it now and returns the finished run
        (``suspended`` when a step suspended it), ``wait=False`` returns it ``pending``.
        ``check_input``: an input the workflow's input model refuses is a ``ValidationError``
        and nothing is written (else the run is written and fails on it, as a scheduled one)."""
        at = self._now(now)
        if check_input:
            self._check_input(workflow_id, input)
        row = self._pending_run(workflow_id, input, at, initial_state, request_context)
        self._sync_if_owed(at)
        with self.store.begin() as tx:
            store_runs.insert_runs(tx, rows=[row])
        if wait:
            self.executor.claim_and_execute(row["id"], now=at)
        return self.get_workflow_run(row["id"])

    def _check_input(self, workflow_id: str, input: Any) -> None:
        """``ValidationError`` naming each refusal when ``workflow_id``'s input model refuses
        ``input``; an unknown workflow is ``NotFound``."""
        model = self._workflow(workflow_id).input
        if model is None:
            return
        try:
            model.model_validate(_plain(input))
        except ModelError as exc:
            problems = [
                f"{'.'.join(str(p) for p in e['loc']) or 'input'}: {e['msg']}" for e in exc.errors()
            ]
            raise ValidationError(
                messages.workflow_start_input_invalid(workflow_id, problems)
            ) from None

    def _pending_run(
        self,
        workflow_id: str,
        input: Any,
        at: datetime,
        initial_state: Mapping[str, Any] | None = None,
        request_context: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        """The row of a manual start of ``workflow_id`` (``NotFound`` for an unknown one); its
        input is checked by the workflow's model when the run executes, as every run's is."""
        wf = self._workflow(workflow_id)
        return new_run(
            run_id=uuid7(at),
            workflow_id=wf.id,
            input=_plain(input),
            now=at,
            trigger="manual",
            initial_state=_plain(initial_state),
            request_context=_plain(request_context),
        )

    def workflow_runs(
        self,
        workflow_id: str | None = None,
        status: str | None = None,
        skip: int = 0,
        limit: int = 50,
    ) -> dict[str, Any]:
        """Runs newest first: ``{"items", "total", "skip", "limit"}``."""
        check_page(skip, limit)
        if status is not None and status not in store_runs.RUN_STATUSES:
            raise ValidationError(messages.workflow_run_status_invalid(status))
        with self.store.read() as tx:
            items, total = store_runs.list_runs(
                tx, workflow_id=workflow_id, status=status, skip=skip, limit=limit
            )
        return {
            "items": [self._view(r) for r in items],
            "total": total,
            "skip": skip,
            "limit": limit,
        }

    def get_workflow_run(self, run_id: str) -> dict[str, Any]:
        with self.store.read() as tx:
            return self._view(_require_run(tx, run_id))

    def get_workflow_runs(self, run_ids: Iterable[str]) -> dict[str, dict[str, Any]]:
        """The runs of ``run_ids`` that exist, by id (unknown ids are left out)."""
        wanted = [i for i in run_ids if isinstance(i, str) and 0 < len(i) <= 64]
        with self.store.read() as tx:
            found = store_runs.runs_by_id(tx, run_ids=wanted)
        return {k: self._view(v) for k, v in found.items()}

    def _view(self, run: WorkflowRun) -> dict[str, Any]:
        return public_run(run, self.workflows.get(run.workflow_id))

    def cancel_workflow_run(self, run_id: str, now: datetime | None = None) -> dict[str, Any]:
        """pending / running / suspended → canceled (a running step finishes; nothing after)."""
        at = self._now(now)
        values = {"status": "canceled", "ended_at": at}
        self._transition(run_id, CANCELABLE, values, at, messages.workflow_run_not_cancelable)
        return self.get_workflow_run(run_id)

    def resume_workflow_run(
        self, run_id: str, data: Any = None, now: datetime | None = None, *, wait: bool = True
    ) -> dict[str, Any]:
        """suspended → pending with ``data`` as the suspended step's ``ctx.resume_data``."""
        at = self._now(now)
        values = {"status": "pending", "resume_data": _plain(data), "suspend_payload": None}
        self._transition(run_id, ("suspended",), values, at, messages.workflow_run_not_suspended)
        if wait:
            self.executor.claim_and_execute(run_id, now=at)
        return self.get_workflow_run(run_id)

    def retry_workflow_run(
        self, run_id: str, now: datetime | None = None, *, wait: bool = True
    ) -> dict[str, Any]:
        """failed / canceled → pending; steps that succeeded are not executed again. Its automatic
        attempts start again from 1 (the policy in force applies anew)."""
        at = self._now(now)
        values = {
            "status": "pending",
            "error": None,
            "output": None,
            "ended_at": None,
            "next_attempt_at": None,
            "attempt": 1,
        }
        self._transition(run_id, RETRYABLE, values, at, messages.workflow_run_not_retryable)
        if wait:
            self.executor.claim_and_execute(run_id, now=at)
        return self.get_workflow_run(run_id)

    def _transition(
        self,
        run_id: str,
        allowed: tuple[str, ...],
        values: Mapping[str, Any],
        at: datetime,
        refusal: Callable[[str], str],
    ) -> None:
        with self.store.begin() as tx:
            run = _require_run(tx, run_id)
            ok = store_runs.transition(
                tx, run_id=run.id, from_statuses=allowed, values=values, now=at
            )
            if not ok:
                raise Conflict(refusal(run.status))

    # --- execution -----------------------------------------------------------------------------

    def claimed(self) -> tuple[tuple[str, ...], RunLimits]:
        """The workflows whose runs this process's worker claims (the registered ones: a
        process never claims a run it could not execute) and their ``max_concurrent``."""
        return tuple(sorted(self.workflows)), runner.run_limits(self.workflows)

    def start_from_action(self, tx: Tx, workflow_id: str, input: Any, *, now: datetime) -> str:
        """The ``start_workflow`` port of actions (SPEC §10, ``ActionEnv.workflows``): the run
        a manual start makes (``start_workflow(wait=False)``), inserted in ``tx``, the parent
        run's transaction that also stores the action's receipt, so a parent retried after a
        crash never starts a second child. An unknown workflow raises ``LookupError``. The
        declared schedules are not synced here (a sync is a write of its own, and the worker
        holds ``tx``): the next ``tick`` or manual start does it."""
        try:
            row = self._pending_run(workflow_id, input, now)
        except TocsinError as exc:
            raise LookupError(exc.detail) from None
        store_runs.insert_runs(tx, rows=[row])  # leaves a run pending: wakes workers at commit
        return str(row["id"])


def _require_run(tx: Tx, run_id: object) -> WorkflowRun:
    run = None
    if isinstance(run_id, str) and 0 < len(run_id) <= 64:
        run = store_runs.get_run(tx, run_id=run_id)
    if run is None:
        raise NotFound(messages.WORKFLOW_RUN_NOT_FOUND)
    return run


def _plain(value: Any) -> Any:
    dump = getattr(value, "model_dump", None)
    return dump(mode="json") if callable(dump) else value


__all__ = ["WorkflowService", "log_sync"]
