"""The workflow runs' executor in the one worker (SPEC §12): a workflow run is a run of the one
queue (kind ``workflow``), claimed by the one claim and executed by ``runs.worker`` through
:class:`WorkflowExecutor`, as a lane attempt is through its lane's.

A claimed run's stages run here (:func:`tocsin.workflows.execute.run_stages`), its receipts
stored after each stage under the claim fence; its finish (``success``, ``failed``,
``suspended``, or back to ``pending`` for an automatic retry) is written with the finishes of the
runs executed before it on the same slot, in one transaction (:class:`WorkflowGroup`, the
one worker's group of a kind: ``runs.batch``). A run canceled meanwhile loses its fence: nothing
more is written for it. The executor never raises because of a run: an unexpected error fails it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

from tocsin import messages
from tocsin.actions.base import ActionEnv
from tocsin.core.config.receipts import truncate_error
from tocsin.core.model import Run
from tocsin.core.schedules.retry import policy_of
from tocsin.runs.alerts import FailedRun, alert_failed_run
from tocsin.runs.clock import PassClock, pass_clock
from tocsin.runs.worker import Worker
from tocsin.store import runs as queue
from tocsin.store import trigger_events as store_events
from tocsin.store import workflow_runs as store_runs
from tocsin.store.runs import RunLimits
from tocsin.store.tx import Store
from tocsin.workflows.definition import Workflow
from tocsin.workflows.execute import Outcome, run_stages
from tocsin.workflows.views import public_run

log = logging.getLogger("tocsin.workflows")

_KEEP: dict[str, Any] = {"output": None, "suspend_payload": None}
Registry = Mapping[str, Workflow]
AlertEnv = Callable[[], ActionEnv | None]
"""What a failed run's ``on_failure`` actions run with (the facade's action environment)."""


class WorkflowExecutor:
    """The executor of workflow runs in the one worker (``runs.worker.GroupedExecutor``): the
    registered workflows of ``registry`` on ``store`` (both read at each use: the facade may
    replace its store, and registers workflows after it made this)."""

    def __init__(
        self,
        store: Callable[[], Store],
        registry: Callable[[], Registry],
        alert_env: Callable[[], AlertEnv | None],
    ) -> None:
        self._store, self._registry, self._alert_env = store, registry, alert_env

    def __call__(self, run: Run, *, now: datetime) -> str:
        """Execute one claimed run and finish it in its own transaction: its outcome."""
        group = WorkflowGroup(self, pass_clock(now), write=_plain_write)
        group.add(run, now=now)
        return group.write() or "lost"

    def group(self, worker: Worker, stamps: PassClock) -> WorkflowGroup:
        """A group for one slot of ``worker`` (its writes go through the worker's outage rule)."""
        return WorkflowGroup(self, stamps, write=worker.written)

    def claim_and_execute(self, run_id: str, *, now: datetime) -> bool:
        """Execute one pending run now (``wait=True``); False when another worker took it (or it
        waits for its next attempt)."""
        with self._store().begin() as tx:
            run = queue.claim_run(tx, run_id=run_id, now=now)
        if run is None or run.kind != "workflow":
            return False
        self(run, now=now)
        return True


def run_limits(registry: Registry) -> RunLimits:
    """The ``max_concurrent`` of the registered workflows and their declared schedules."""
    workflows = {w.id: w.max_concurrent for w in registry.values() if w.max_concurrent}
    limited = [(w.id, s) for w in registry.values() for s in w.schedules if s.max_concurrent]
    return RunLimits(
        workflows=workflows,
        schedules={s.id: s.max_concurrent for _, s in limited if s.max_concurrent},
        schedule_of={s.id: wid for wid, s in limited},
    )


def _plain_write(_who: object, write: Callable[[], Any]) -> Any:
    return write()


class WorkflowGroup:
    """Workflow runs one slot executes one after the other (:meth:`add`), finished together in
    one transaction (:meth:`write`), each under its own claim fence; the ``on_failure`` alerts
    of runs that failed for good run after it committed. A run's row is let go as it ends:
    what its finish keeps is plain values (``store_runs.finish_row``)."""

    def __init__(
        self,
        executor: WorkflowExecutor,
        stamps: PassClock,
        *,
        write: Callable[[object, Callable[[], Any]], Any],
    ) -> None:
        self._executor, self._stamps, self._write = executor, stamps, write
        self._added = 0  # runs added since the last write (lost ones too)
        self._finishes: list[queue.FinishRow] = []
        self._succeeded: list[tuple[str, str, str | None, datetime]] = []
        self._failed: list[str] = []  # failed for good, with an on_failure to run once finished

    def __len__(self) -> int:
        return self._added

    def add(self, run: Run, *, now: datetime) -> None:
        """Run the stages of a claimed run; its finish waits for :meth:`write`."""
        self._added += 1
        registry = self._executor._registry()
        values = run_to_end(self._executor._store(), registry, run, now=now, clock=self._stamps)
        if values is None:
            return
        ended = self._stamps()  # the run's end: as long after its start as it really took
        self._finishes.append(store_runs.finish_row(run.id, run.attempts, values, ended))
        if values["status"] == "failed" and _alerts_of(registry, run.trigger_id, run.schedule_id):
            self._failed.append(run.id)
        if values["status"] == "success":
            # its events keep the run's instant: what fires on them is decided on that clock
            self._succeeded.append((run.id, run.trigger_id, run.schedule_id, now))

    def write(self) -> str | None:
        """Finish what was added in one transaction (again through an outage, as every write of
        the worker); the last run's status (None when its fence was lost, or none was added)."""
        self._added = 0
        if not self._finishes:
            return None
        finishes, succeeded, failed = self._finishes, self._succeeded, self._failed
        self._finishes, self._succeeded, self._failed = [], [], []
        store = self._executor._store()

        def finish() -> set[str]:
            with store.begin() as tx:
                won = queue.finish_runs(tx, rows=finishes)
                # the events of the runs the fence let finish ``success`` (not one canceled
                # meanwhile), in one statement; made only when some schedule listens (lazy)
                events = (
                    (kind, subject, at)
                    for run_id, workflow_id, schedule_id, at in succeeded
                    if run_id in won
                    for kind, subject in _success_events(workflow_id, schedule_id)
                )
                store_events.insert_events_at(tx, events=events)
            return won

        won: set[str] = self._write(("workflow finish", id(finishes)), finish)
        registry, env = self._executor._registry(), self._executor._alert_env()
        for run_id in failed:
            if run_id in won:  # (not one canceled meanwhile)
                alert_failed(store, registry, run_id, now=self._stamps(), env=env)
        last = finishes[-1]
        return last.status if last.run_id in won else None


def _alerts_of(registry: Registry, workflow_id: str, schedule_id: str | None) -> Any:
    wf = registry.get(workflow_id)
    return None if wf is None else wf.alerts_for(schedule_id)


def alert_failed(
    store: Store, registry: Registry, run_id: str, *, now: datetime, env: AlertEnv | None
) -> None:
    """Run the ``on_failure`` of a run that failed for good (the workflow's, else its
    schedule's) through ``runs.alerts``, once: not again when an earlier one was sent (a run
    retried by hand that fails again), and record its outcome on the run. Never raises."""
    try:
        with store.read() as tx:
            run = store_runs.get_run(tx, run_id=run_id)
        if run is None or run.status != "failed":
            return
        if run.alert is not None and run.alert.get("status") == "sent":
            return
        alerts = _alerts_of(registry, run.workflow_id, run.schedule_id)
        failed = FailedRun(
            kind="workflow",
            view=public_run(run),
            run_id=run_id,
            error=run.error or "",
            workflow_id=run.workflow_id,
            schedule_id=run.schedule_id,
            scheduled_for=run.scheduled_for,
        )
        outcome = alert_failed_run(
            alerts, failed, env=env() if env is not None and not callable(alerts) else None, now=now
        )
        if outcome is not None:
            with store.begin() as tx:
                store_runs.record_alert(tx, run_id=run_id, alert=outcome)
    except Exception:  # an alert never fails the worker, nor the run again
        log.exception("on_failure of workflow run %s could not run", run_id)


def _success_events(workflow_id: str, schedule_id: str | None) -> list[tuple[str, str]]:
    """The events of a run's success (SPEC §13): ``workflow_succeeded`` and, for a run a
    schedule fired, ``schedule_succeeded``; written with the run's final status."""
    events = [("workflow_succeeded", workflow_id)]
    if schedule_id:
        events.append(("schedule_succeeded", str(schedule_id)))
    return events


def run_to_end(
    store: Store,
    registry: Registry,
    run: Run,
    *,
    now: datetime,
    clock: PassClock | None = None,
) -> dict[str, Any] | None:
    """Run the stages of a claimed run: its finish values (``FINISH_KEYS``), or None when the
    claim was lost meanwhile (canceled…: nothing more is written). Never raises because of the
    run: an unexpected error fails it."""
    attempt = run.attempt or 1

    def save(steps: list[dict[str, Any]]) -> bool:
        with store.begin() as tx:
            return store_runs.save_steps(
                tx, run_id=run.id, attempts=run.attempts, steps=steps, now=now
            )

    wf = registry.get(run.trigger_id)
    if wf is None:
        error = messages.workflow_not_registered_here(run.trigger_id)
        return _failed(run, error, attempt)
    try:
        outcome = run_stages(wf, run, now=now, save=save, clock=clock)
    except Exception as exc:  # a store error mid-run: fail the run, keep going
        log.exception("workflow run failed", extra={"run_id": run.id})
        return _failed(run, truncate_error(str(exc) or type(exc).__name__), attempt)
    if outcome.status == "lost":
        return None
    values = {
        "status": outcome.status,
        "steps": outcome.steps,
        "output": outcome.output,
        "error": outcome.error,
        "suspend_payload": outcome.suspend_payload,
        "attempt": attempt,
    }
    if outcome.status == "failed":
        values.update(_retried(wf, run, outcome, attempt, now))
    return values


def _failed(run: Run, error: str, attempt: int) -> dict[str, Any]:
    """The finish of a run failed before its stages decided: its receipts kept."""
    steps = list(run.action_results)
    return {**_KEEP, "steps": steps, "status": "failed", "error": error, "attempt": attempt}


def _retried(
    wf: Workflow, run: Run, outcome: Outcome, attempt: int, now: datetime
) -> dict[str, Any]:
    """A failed attempt's finish under the retry policy in force (the failed step's, else the
    workflow's, else its schedule's): back to ``pending`` until ``next_attempt_at`` while
    attempts remain (``core.retry_policy``), else nothing changes (``failed``)."""
    if not outcome.retryable:
        return {}
    policy = policy_of(wf.retry_for(outcome.failed_step, run.schedule_id))
    at = None if policy is None else policy.next_attempt_at(attempt, str(run.id), now)
    if at is None:
        return {}
    log.info("workflow run %s attempt %s failed; retrying at %s", run.id, attempt, at)
    return {"status": "pending", "next_attempt_at": at, "attempt": attempt + 1}


__all__ = [
    "WorkflowExecutor",
    "WorkflowGroup",
    "alert_failed",
    "run_limits",
    "run_to_end",
]
