"""The worker: claim a pending run, run its actions in order, store each receipt (SPEC §8, §9).

The one worker of the one queue: every kind of run is claimed here, by the one claim
(``store.runs.claim_scoped_runs``: a table trigger's runs, and the app's own of the lanes and
workflows this process registered), and a run of the app's own kinds goes to its kind's
executor (``executors``: a lane attempt to its lane's, a workflow run to
``workflows.runner.WorkflowExecutor``, whose runs a slot executes as a group, ``runs.batch``).
What follows is a table trigger's run (kind ``actions``).

One run, step by step:

1. **Claim** atomically, ``pending → running`` (``store.runs.claim_scoped_runs``, under
   ``BEGIN IMMEDIATE`` on SQLite and ``SKIP LOCKED`` on PostgreSQL), a few runs at a time, each
   with its table read in the same transaction. A duplicate delivery that loses the claim gets
   nothing and does nothing.
2. **Resolve** the definition (``runs.definition``): gone → ``failed`` with exactly
   ``trigger config no longer exists``; a table that took channel SCP rules since → ``failed``
   with the SCP text (a trigger cannot satisfy the channel floor).
3. **Execute** every action that has no successful receipt yet (matched by ``action_id``; legacy
   receipts without ids by position), in order. Transient lock conflicts are retried in place
   (``runs.retry.TransientPolicy``). After each action its receipt ``{"action_id", "type", "ok",
   "detail", "started_at", "ended_at"}`` (detail ≤ 300 characters; when the action really started
   and ended, read from ``stamps``) is stored in its own short transaction, so a crash loses at
   most the action in flight. An action whose effect is a write
   to tocsin's own database (``TransactionalAction``, e.g. ``notify``) commits effect and receipt
   in one transaction: it is never repeated.
4. **Finish**: ``done`` with the last receipt, or ``failed`` at the first failing action with the
   error (≤ 1000 characters). Later actions wait for a retry, which resumes at the failed one.

   A trigger with a ``retry`` policy (``core.retry_policy``) turns a failing action into an
   automatic retry while attempts remain: the run goes back to ``pending`` with its error, its
   receipts and ``next_attempt_at`` (no worker claims it before then) and the next attempt
   resumes at the failed action. Only when the attempts are spent is it ``failed``.
5. **Alert**: when a run finally fails at an action, the trigger's ``on_failure`` actions run
   (each through ``runs.alerts.send_action``, the one runner of every kind's alerts) once, in
   order, rendered with ``$run.error``; each stores its receipt (in
   ``action_results``, by its own id) before the run is marked failed, so a crash never repeats
   an alert that was sent, and an alert with a successful receipt is not sent again by a later
   retry. An alert that fails is recorded (``ok: false``) and does not stop the others. Every
   failed run is logged at WARNING with its run, trigger and table ids.

A write of the run's progress (receipt, finish, a transactional action's commit) that fails
because the database is full or down is tried again, pausing up to ``TOCSIN_DB_BACKOFF_MAX_S``,
until it goes through or the worker stops: a run is not left ``running`` for want of a write.

Every write after the claim is fenced by ``attempts``: if the run was requeued as stale and
claimed again meanwhile, this worker stops writing and walks away.

Time: with a ``clock`` (``tocsin worker``; ``Tocsin.work`` without ``now``) every claim, action
and receipt reads it afresh, and before an action whose run was last written half a stale window
ago (it waited behind slow runs of its batch, or its previous action was slow) the claim is
renewed (``touch_run``): the tick's sweep requeues only runs whose worker really stopped, and a
run requeued meanwhile is dropped *before* its next action runs. With a fixed ``now`` (tests)
every write carries that instant.

The worker never raises because of a run: any exception fails that run and the loop goes on.

Concurrency: ``tocsin worker`` and ``tocsin serve`` execute runs on a bounded
:class:`~tocsin.runs.pool.RunPool` (``TOCSIN_WORKER_CONCURRENCY`` threads): runs of different
tenants go side by side, the actions of one run stay in order on one thread. Every outbound
action ends by its deadline (``actions.net``), so a slow receiver costs its own run at most that.

Graceful stop (``should_stop``): the action in flight finishes and its receipt is stored, or an
outbound action reaches its deadline and is abandoned without a receipt; the run then goes back
to ``pending`` (earlier receipts kept) instead of staying ``running`` or ``failed``, so the next
worker resumes it at once from the first unfinished action. Claimed runs not started yet go
back too.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from functools import partial
from typing import Any, Protocol, TypeVar, runtime_checkable

from tocsin import messages
from tocsin.actions.base import (
    ActionContext,
    ActionEnv,
    ActionError,
    ActionTimeout,
    TransactionalAction,
)
from tocsin.actions.registry import get_action
from tocsin.core.config.receipts import pending_actions, truncate_error, upsert_receipt
from tocsin.core.model import Run, Table
from tocsin.core.schedules.retry import retry_policy
from tocsin.runs.alerts import send_action
from tocsin.runs.clock import PassClock, TimedReceipt, timed_receipt
from tocsin.runs.definition import action_list, frozen_problem, resolve_definition, row_snapshot
from tocsin.runs.pool import RunPool
from tocsin.runs.retry import TransientPolicy, call_with_retries
from tocsin.store.jsontext import json_text
from tocsin.store.outage import (
    DEFAULT_CAP_S,
    FIRST_PAUSE_S,
    Backoff,
    OutageLog,
    through_outage,
)
from tocsin.store.records import get_table
from tocsin.store.runs import (
    FinishRow,
    RunLimits,
    claim_scoped_runs,
    finish_runs,
    next_turn,
    release_run,
    save_receipt,
    schedule_retry,
    touch_run,
)
from tocsin.store.tx import Tx

log = logging.getLogger(__name__)

Receipts = list[dict[str, Any]]
T = TypeVar("T")


class _LostClaim(Exception):
    """The run was requeued and claimed again meanwhile: this worker must write nothing more."""


def _never() -> bool:
    return False


class KindExecutor(Protocol):
    """Runs a claimed run of the app's own kind (``Run.kind``: a lane attempt, a workflow run) to
    its outcome (``done|failed|released|lost``, in the kind's words where it has its own); never
    raises."""

    def __call__(self, run: Run, *, now: datetime) -> str: ...


class RunGroup(Protocol):
    """Runs of one kind a slot executes one after the other, their finishes written together."""

    def __len__(self) -> int: ...

    def add(self, run: Run, *, now: datetime) -> None:
        """Execute a claimed run; its finish waits for :meth:`write`. Never raises."""

    def write(self) -> str | None:
        """Finish the runs added since the last write, in one transaction."""


@runtime_checkable
class GroupedExecutor(KindExecutor, Protocol):
    """A kind's executor whose runs a slot executes in a group (``runs.batch``): a workflow
    run's finish is written with those of the runs its slot executed before it."""

    def group(self, worker: Worker, stamps: PassClock) -> RunGroup: ...


@dataclass(slots=True, kw_only=True)
class Worker:
    """Executes runs with ``env`` under ``policy``; ``should_stop`` is polled between actions.

    One worker for every kind of the one queue: a table trigger's runs (kind ``actions``) are
    executed here; a run of another kind goes to its executor in ``executors`` (by kind), and
    the claim takes such runs only of ``own`` (their ``trigger_id``: the lanes this process
    has)."""

    env: ActionEnv
    policy: TransientPolicy = field(default_factory=TransientPolicy)
    should_stop: Callable[[], bool] = _never
    clock: Callable[[], datetime] | None = None
    backoff_max_s: float = DEFAULT_CAP_S
    stamps: PassClock | None = None  # receipts' instants (runs.clock.pass_clock); else clock
    after: str = ""  # the claim's turn among scopes without a pool (with one: the pool's)
    executors: Mapping[str, KindExecutor] = field(default_factory=dict)
    own: tuple[str, ...] = ()
    workflows: tuple[str, ...] = ()  # the registered workflows: their runs are claimed too
    limits: RunLimits | None = None  # their ``max_concurrent`` (``store.runs.RunLimits``)
    actions: bool = True  # False: claims runs of ``own`` only (``Tocsin.lanes.work``)
    # with a pool: runs a claim takes per free slot, no default of its own (``Tocsin.work``
    # gives ``TOCSIN_RUN_CLAIM_CHUNK``, else ``runs.drain.slot_share`` of its pool)
    per_slot: int
    look_s: float = 0.01  # with a pool: a queue no run was taken from this long gets a slot more

    def time(self, fallback: datetime) -> datetime:
        """A fresh reading of ``clock`` when the worker has one, else ``fallback`` (a fixed now)."""
        return fallback if self.clock is None else self.clock()

    def claim(
        self, *, now: datetime, limit: int = 1, pool: RunPool | None = None
    ) -> list[tuple[Run, Table | None]]:
        """Claim up to ``limit`` pending runs, each with its table (read in the same
        transaction), the scopes in turn (``store.runs.claim_scoped_runs``; ``Run.scope``); with
        ``pool``, from the pool's turn, of as many
        scopes as it has free slots, ``per_slot`` runs for each slot a tenant may still take
        (``pool.per_scope`` minus its slots busy here), none of a tenant whose queue here still
        holds runs (``RunPool.queued``).

        A lock conflict rolls the claim back whole and is retried in place (SPEC §9.5).
        """
        return call_with_retries(partial(self._claim, now=now, limit=limit, pool=pool), self.policy)

    def _claim(
        self, *, now: datetime, limit: int, pool: RunPool | None
    ) -> list[tuple[Run, Table | None]]:
        tables: dict[str, Table | None] = {}
        after = self.after if pool is None else pool.after
        held, cap = (None, None) if pool is None else (pool.held(), pool.per_scope)
        own = self.own if self.executors else ()
        pooled: dict[str, Any] = {}
        if pool is not None:
            pooled = {"busy": pool.queued(), "share": self.per_slot, "scopes": pool.free()}
        # one claim for every kind: the workflows' scopes (``app/wf:…``) take their turns with
        # the tenants' and the lanes', so a backlog of one kind never starves another
        with self.env.store.begin() as tx:
            claimed = claim_scoped_runs(
                tx,
                now=now,
                limit=limit,
                after=after,
                held=held,
                cap=cap,
                own=own,
                actions=self.actions,
                workflows=self.workflows if self.actions else (),  # lanes.work: lanes only
                limits=self.limits,
                **pooled,
            )
            for table_id in {run.table_id for run in claimed if run.kind == "actions"}:
                tables[table_id] = get_table(tx, table_id=table_id, include_trashed=True)
        after = next_turn(after, {run.scope for run in claimed})
        if pool is None:
            self.after = after
        else:
            pool.after = after
        return [(run, tables.get(run.table_id)) for run in claimed]

    def execute(self, run: Run, table: Table | None, *, now: datetime) -> str:
        """Run a claimed run to its outcome: ``done|failed|retrying|released|lost``. Never
        raises. A run of another kind goes to its kind's executor."""
        if run.kind != "actions":
            try:
                return self.executors[run.kind](run, now=now)
            except Exception:  # an executor never raises; the run is the stale sweep's then
                log.exception("%s run %s failed unexpectedly", run.kind, run.id)
                return "failed"
        try:
            return self._execute(run, table, now=now)
        except Exception as exc:  # the worker itself never dies on a run
            log.exception("run %s failed unexpectedly", run.id)
            return self._finish(run, "failed", _error_text(exc), None, now=now)

    def _execute(self, run: Run, table: Table | None, *, now: datetime) -> str:
        definition = resolve_definition(run, table)
        if table is None or definition is None:
            return self._finish(run, "failed", messages.TRIGGER_CONFIG_GONE, None, now=now)
        if table.scp_rules:  # re-validated at every attempt (SPEC §2, §9.3)
            return self._finish(run, "failed", messages.SCP_WITH_TRIGGERS, None, now=now)
        if (problem := frozen_problem(run, table)) is not None:  # the schema, too (SPEC §9.3)
            return self._finish(run, "failed", problem, None, now=now)
        receipts: Receipts = list(run.action_results)
        todo = pending_actions(action_list(definition), receipts)
        if not todo:
            return self._finish(run, "done", None, receipts, now=now)
        outcome, last_write = "next", run.updated_at
        for index, (position, action) in enumerate(todo):
            at = self.time(now)
            if self.should_stop():
                return self.release(run, now=at)
            if not self._still_mine(run, last_write, at):
                return "lost"  # requeued as stale meanwhile: another worker owns it now
            ctx = self.context(run, table, definition, action, position, now=at)
            last = index == len(todo) - 1
            receipts, outcome = self.step(run, ctx, action, receipts, last=last)
            if outcome != "next":
                break
            last_write = at
        return outcome

    def _still_mine(self, run: Run, last_write: datetime, at: datetime) -> bool:
        """Heartbeat before an action: a run whose last write is half a stale window old (it
        waited in a claimed batch, or its previous action was slow) is touched first, so the
        sweep does not requeue a run that progresses. False when it was requeued meanwhile."""
        if at - last_write < timedelta(seconds=self.env.stale_after_s / 2):
            return True
        write = partial(touch_run, run_id=run.id, attempts=run.attempts, now=at)
        return self._committed(run, write)

    def context(
        self,
        run: Run,
        table: Table,
        definition: Mapping[str, Any],
        action: Mapping[str, Any],
        position: int,
        *,
        now: datetime,
        table_view: Mapping[str, Any] | None = None,
    ) -> ActionContext:
        """One action's context; ``table_view``: ``table.as_dict()`` when the caller has it
        (a batch's runs share their table's)."""
        return ActionContext(
            env=self.env,
            run=run.as_dict(),  # actions read the run and table as mappings ($run tokens)
            table=table.as_dict() if table_view is None else table_view,
            trigger=definition,
            action_id=str(action.get("id") or f"position-{position}"),
            row=row_snapshot(run),
            now=now,
        )

    def step(
        self,
        run: Run,
        ctx: ActionContext,
        action: Mapping[str, Any],
        receipts: Receipts,
        *,
        last: bool,
    ) -> tuple[Receipts, str]:
        """Execute one action and store its receipt: the receipts and ``next|done|failed|lost``.

        A transactional action's effect commits with its receipt (and the run's finish when it is
        the last); any other action's receipt is stored right after its effect.
        """
        kind, action_id = action.get("type"), action.get("id")
        receipt = timed_receipt(self.stamps or self.clock, ctx.now)  # the action starts
        try:
            handler = get_action(kind)
            if isinstance(handler, TransactionalAction):
                commit = partial(self._in_tx, handler, run, ctx, action, receipts, receipt, last)
                return self.written(run.id, partial(call_with_retries, commit, self.policy))
            detail = call_with_retries(partial(handler.execute, ctx, action), self.policy)
        except _LostClaim:
            return receipts, "lost"
        except Exception as exc:
            if isinstance(exc, ActionTimeout) and self.should_stop():
                # abandoned at its deadline by a graceful stop: no receipt (the receiver may
                # have it; the retry sends the same Idempotency-Key), the run goes back
                return receipts, self.release(run, now=self.time(ctx.now))
            text = _error_text(exc)
            receipts = upsert_receipt(receipts, receipt(action_id, str(kind), False, text))
            return receipts, self._fail(run, ctx, text, receipts)
        receipts = upsert_receipt(receipts, receipt(action_id, str(kind), True, detail))
        if not self._committed(  # stamped when the action ended (it may have taken a while)
            run,
            partial(self._record, run=run, receipts=receipts, last=last, now=self.time(ctx.now)),
        ):
            return receipts, "lost"
        return receipts, "done" if last else "next"

    def _in_tx(
        self,
        handler: TransactionalAction,
        run: Run,
        ctx: ActionContext,
        action: Mapping[str, Any],
        receipts: Receipts,
        timed: TimedReceipt,
        last: bool,
    ) -> tuple[Receipts, str]:
        with self.env.store.begin() as tx:
            detail = handler.execute_in(tx, ctx, action)
            receipt = timed(action.get("id"), handler.type, True, detail)  # ended: in its tx
            receipts = upsert_receipt(receipts, receipt)
            if not self._record(tx, run=run, receipts=receipts, last=last, now=ctx.now):
                raise _LostClaim  # rolls the effect back with the receipt
        return receipts, "done" if last else "next"

    def _fail(self, run: Run, ctx: ActionContext, error: str, receipts: Receipts) -> str:
        """An action failed: an automatic retry while the trigger's policy has attempts left
        (``retrying``), else the ``on_failure`` alerts and ``failed`` (or ``lost``)."""
        now, text = self.time(ctx.now), truncate_error(error)
        policy = retry_policy(ctx.trigger)
        at = None if policy is None else policy.next_attempt_at(run.attempts, run.id, now)
        if at is not None:
            fields = {"run_id": run.id, "attempts": run.attempts, "now": now}
            write = partial(schedule_retry, error=text, receipts=receipts, next_attempt_at=at)
            if not self._committed(run, partial(write, **fields)):
                return "lost"
            log.info(
                "run %s attempt %s failed; retrying at %s",
                run.id,
                run.attempts,
                at.isoformat(),
                extra={"run_id": run.id, "trigger_id": run.trigger_id},
            )
            return "retrying"
        try:
            receipts = self._alert(run, replace(ctx, error=text), receipts)
        except _LostClaim:
            return "lost"
        return self._finish(run, "failed", text, receipts, now=self.time(ctx.now))

    def _alert(self, run: Run, ctx: ActionContext, receipts: Receipts) -> Receipts:
        """Run the ``on_failure`` actions that have no successful receipt yet; each receipt is
        stored as it comes. Raises ``_LostClaim`` when the run was requeued meanwhile."""
        alerts = ctx.trigger.get("on_failure")
        if not isinstance(alerts, list):
            return receipts
        for position, action in pending_actions(alerts, receipts):
            action_id = str(action.get("id") or f"on-failure-{position}")
            at = replace(ctx, action_id=action_id, now=self.time(ctx.now))
            receipts = self._alert_one(run, at, action, receipts)
        return receipts

    def _alert_one(
        self, run: Run, ctx: ActionContext, action: Mapping[str, Any], receipts: Receipts
    ) -> Receipts:
        kind, timed = str(action.get("type")), timed_receipt(self.stamps or self.clock, ctx.now)

        def commit(handler: TransactionalAction) -> Receipts:  # effect and receipt in one tx
            write = partial(self._in_tx, handler, run, ctx, action, receipts, timed, False)
            return self.written(run.id, partial(call_with_retries, write, self.policy))[0]

        try:
            how, value = send_action(ctx, action, self.policy, commit)
            if how == "committed":
                return value  # type: ignore[no-any-return]
            receipt = timed(ctx.action_id, kind, True, value)
        except _LostClaim:
            raise
        except Exception as exc:  # a failed alert is recorded; the others still go
            log.warning("on_failure action %s of run %s failed: %s", ctx.action_id, run.id, exc)
            receipt = timed(ctx.action_id, kind, False, _error_text(exc))
        receipts = upsert_receipt(receipts, receipt)
        write = partial(save_receipt, run_id=run.id, attempts=run.attempts, receipts=receipts)
        if not self._committed(run, partial(write, now=self.time(ctx.now))):
            raise _LostClaim
        return receipts

    def _committed(self, run: Run, write: Callable[[Tx], bool]) -> bool:
        """``write(tx)`` in its own transaction, retried on lock conflicts and outages (§9.5)."""

        def attempt() -> bool:
            with self.env.store.begin() as tx:
                return write(tx)

        return self.written(run.id, partial(call_with_retries, attempt, self.policy))

    def written(self, who: object, write: Callable[[], T]) -> T:
        """``write()``, again through an outage (``through_outage``, reported as ``who``) until
        it goes or a stop."""
        return through_outage(
            write,
            who=who,
            outage=self.env.store.outage,
            pause=Backoff(FIRST_PAUSE_S, self.backoff_max_s),
            sleep=self.policy.sleep,
            give_up=self.should_stop,
        )

    @staticmethod
    def _record(tx: Tx, *, run: Run, receipts: Receipts, last: bool, now: datetime) -> bool:
        """Store the receipts; after the last action also finish the run ``done``."""
        if last:
            return _finish_one(tx, run=run, status="done", error=None, receipts=receipts, now=now)
        return save_receipt(tx, run_id=run.id, attempts=run.attempts, receipts=receipts, now=now)

    def _finish(
        self,
        run: Run,
        status: str,
        error: str | None,
        receipts: list[dict[str, Any]] | None,
        *,
        now: datetime,
    ) -> str:
        text = None if error is None else truncate_error(error)
        write = partial(_finish_one, run=run, status=status, error=text, receipts=receipts, now=now)
        if not self._committed(run, write):
            return "lost"
        if status == "failed":
            log.warning(
                "run %s failed (trigger %s, table %s): %s",
                run.id,
                run.trigger_id,
                run.table_id,
                text,
                extra={
                    "run_id": run.id,
                    "trigger_id": run.trigger_id,
                    "table_id": run.table_id,
                },
            )
        return status

    def release(self, run: Run, *, now: datetime) -> str:
        write = partial(release_run, run_id=run.id, attempts=run.attempts, now=now)
        return "released" if self._committed(run, write) else "lost"


def _finish_one(
    tx: Tx, *, run: Run, status: str, error: str | None, receipts: Receipts | None, now: datetime
) -> bool:
    """``running → done | failed`` of one run (``store.runs.finish_runs``), with its final
    receipts (None: those stored are kept); False if fenced out."""
    steps = None if receipts is None else json_text(receipts)
    return run.id in finish_runs(
        tx, rows=[FinishRow(run.id, run.attempts, status, now, steps, error)]
    )


def _error_text(exc: BaseException) -> str:
    if isinstance(exc, ActionError):
        return exc.detail
    return str(exc) or type(exc).__name__


class WorkSource(Protocol):
    """What the loop drives: ``Tocsin.work``."""

    def work(
        self,
        now: datetime | None = None,
        limit: int | None = None,
        *,
        should_stop: Callable[[], bool] | None = None,
        clock: Callable[[], datetime] | None = None,
        pool: RunPool | None = None,
    ) -> int: ...


# a pass of ``tocsin worker`` (``serve_worker``): up to BATCH runs, and no claim after PASS_S
# (each claimer still claims once): few passes for a backlog of fast runs, each pass also
# claiming approved changes and table runs (passes of 500: 0.81-0.93 s on PostgreSQL in the
# two-process row of ``bench/workflow_bench.py``; of 2,000: 0.66-0.77 s), while a pass of slow
# runs ends by its time
BATCH, PASS_S = 2000, 0.25
STOP_GRACE_S = 15.0
"""Beyond the longest action deadline (``TOCSIN_ACTION_TIMEOUT_MAX_S``), how long a stop waits
for the runs in flight to end their action and go back to pending."""
STOP_TIMEOUT_S = 60.0 + STOP_GRACE_S


def _reached(deadline: float) -> bool:
    return time.monotonic() >= deadline


def serve_worker(
    tocsin: WorkSource,
    *,
    stop_event: threading.Event,
    poll_interval: float = 1.0,
    batch: int = BATCH,
    clock: Callable[[], datetime] | None = None,
    concurrency: int = 1,
    stop_timeout_s: float = STOP_TIMEOUT_S,
    idle: Callable[[float], object] | None = None,
    pass_s: float = PASS_S,
    outage: OutageLog | None = None,
    backoff_max_s: float = DEFAULT_CAP_S,
    per_scope: int | None = None,
) -> bool:
    """``tocsin worker``: work until ``stop_event`` is set; True when it stopped cleanly.

    Runs execute on a :class:`RunPool` of ``concurrency`` threads, so one slow run does not
    hold the others, nor one scope's runs another's (``per_scope`` of them at most in this
    process, ``TOCSIN_MAX_RUNNING_PER_SCOPE``). ``clock`` is read before each claim and each action
    (``Tocsin.work(clock=…)``), so a long pass stamps claims and receipts with the current time
    and its runs never look stale while they progress.

    A pass (one ``work`` call) claims nothing more once it claimed ``batch`` runs (each claim
    whole: the last may pass it) or ``pass_s`` has passed (``RunPool.start_pass``; each of its
    claimers still claims once, and what they claimed still starts): every pass looks for
    approved changes and table runs first, so a backlog of workflow runs holds them for about
    ``pass_s`` at most, plus the start of what was already claimed.

    Sleeps ``poll_interval`` only when a pass started nothing (``idle``: how, else on the stop).
    A pass that meets a database outage is reported to ``outage`` (the store's: two lines an
    outage) and tried again after a pause doubling from ``poll_interval`` up to
    ``backoff_max_s``; another failure is logged and retried after ``poll_interval``.

    On stop: no new claim; each run in flight finishes its current action, or abandons an
    outbound one at its deadline, and goes back to pending with its receipts (see the module
    docstring). Answers whether every run got there within ``stop_timeout_s``: False leaves a
    run ``running`` (the stale sweep requeues it later), and the process should say so.
    """
    read_clock = clock or (lambda: datetime.now(UTC))
    outage = outage or OutageLog(log)
    pool = RunPool(concurrency, per_scope=per_scope, outage=outage)
    pause = Backoff(poll_interval, max(poll_interval, backoff_max_s))
    while not stop_event.is_set():
        pool.start_pass(partial(_reached, time.monotonic() + pass_s))
        try:
            done = tocsin.work(
                limit=batch, should_stop=stop_event.is_set, clock=read_clock, pool=pool
            )
        except Exception as exc:
            if outage.failed("worker", exc):
                stop_event.wait(pause.next())
                continue
            log.exception("worker pass failed; retrying in %.1fs", poll_interval)
            done = 0
        else:
            outage.recovered("worker")
            pause.reset()
        if done == 0:
            (idle or stop_event.wait)(poll_interval)
    if pool.wait_idle(stop_timeout_s):
        return True
    log.error(
        "runs still executing after the stop timeout",
        extra={"runs_in_flight": pool.active, "stop_timeout_s": stop_timeout_s},
    )
    return False
