"""Claim, execute and finish workflow runs: the one path of scheduled and manual runs (§12).

``execute_pending`` claims pending runs of the workflows this process knows (a process never
claims a run it could not execute), a batch at a time, and ``execute_batch`` runs a batch (with
a pool: what one slot takes of a queue the slots share) one run after the other and finishes it
in one transaction;
``execute_claimed`` does the same for one run (``start_workflow(wait=True)``). Each runs the
stages of a claimed run (:func:`tocsin.workflows.execute.run_stages`), storing the receipts
after each stage under the claim fence, then finishes the run ``success``, ``failed`` or
``suspended``. A run canceled
meanwhile loses its fence: nothing more is written for it. The runner never raises because of a
run: an unexpected error fails that run.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from datetime import datetime
from functools import partial
from typing import Any

from tocsin import messages
from tocsin.actions.base import ActionEnv
from tocsin.core.config.receipts import truncate_error
from tocsin.core.schedules.retry import policy_of
from tocsin.runs.alerts import FailedRun, alert_failed_run
from tocsin.runs.clock import PassClock, pass_clock
from tocsin.runs.pool import APP_SCOPE, RunPool
from tocsin.store import trigger_events as store_events
from tocsin.store import workflow_claims as store_claims
from tocsin.store import workflow_runs as store_runs
from tocsin.store.errors import map_db_errors
from tocsin.store.outage import DEFAULT_CAP_S, FIRST_PAUSE_S, Backoff, through_outage
from tocsin.store.tx import Store, Tx
from tocsin.workflows.definition import Workflow
from tocsin.workflows.execute import Outcome, run_stages
from tocsin.workflows.views import public_run

log = logging.getLogger("tocsin.workflows")

CHUNK = 64  # with a pool: runs claimed per free slot, into one queue the free slots share
# with a pool: how often the claimer looks at a claim's queue that is not all started, and how
# soon the slots on it must be able to start the rest at the pace it saw, or it adds a slot
SPREAD_S = 0.01
DRAIN_S = 0.05
BATCH = 500  # without a pool: runs claimed in one statement and finished in one transaction
SLOT_POLL_S = 0.5  # with a pool whose slots are all busy: how often the stop flag is looked at
# a claimed run not started this long after its claim goes back to pending: a quarter of the
# stale-run sweep's default threshold (``TOCSIN_STUCK_AFTER_S``, 300 s; the service passes a
# quarter of the configured one)
HOLD_S = 75.0
_KEEP: dict[str, Any] = {"output": None, "suspend_payload": None}
Registry = Mapping[str, Workflow]
AlertEnv = Callable[[], ActionEnv | None]
"""What a failed run's ``on_failure`` actions run with (the facade's action environment)."""
Failed = tuple[str, str, str | None]
"""A run that failed for good: its id, workflow id, schedule id."""


class Leases:
    """The workflow runs a worker's pool holds: claimed, not yet finished or sent back. While
    they are held, the claiming thread (between claims, and while it waits for a slot:
    ``RunPool.on_busy``) stamps their ``updated_at`` every ``hold_s`` (:meth:`renew`): a run
    in a step longer than ``TOCSIN_STUCK_AFTER_S``, or run and waiting for its slot's finish
    behind such a step, never looks stale to the sweep, which would hand it to another worker
    and run its steps again."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._held: dict[str, int] = {}  # run id → the attempts of its claim (the fence)
        self._renewed: datetime | None = None

    def add(self, rows: list[store_claims.ClaimedRow], at: datetime) -> None:
        with self._lock:
            if not self._held:
                self._renewed = at  # the claim stamped them: the next renewal is due from here
            self._held.update(map(store_claims.fence, rows))

    def drop(self, run_ids: list[str]) -> None:
        with self._lock:
            for run_id in run_ids:
                self._held.pop(run_id, None)

    def renew(self, store: Store, at: datetime, every_s: float) -> None:
        """Stamp the held runs ``at`` once ``every_s`` passed since the last stamp."""
        with self._lock:
            last = self._renewed
            if not self._held or (last is not None and (at - last).total_seconds() < every_s):
                return
            held = list(self._held.items())
        with store.begin() as tx:
            store_runs.renew_runs(tx, runs=held, now=at)
        with self._lock:  # (a failed renewal is tried again at the next chance)
            self._renewed = at


def execute_pending(
    store: Store,
    registry: Registry,
    *,
    now: datetime,
    limit: int | None = None,
    should_stop: Callable[[], bool] | None = None,
    clock: Callable[[], datetime] | None = None,
    pool: RunPool | None = None,
    hold_s: float = HOLD_S,
    leases: Leases | None = None,
    backoff_max_s: float = DEFAULT_CAP_S,
    claim_batch: int = BATCH,
    claim_chunk: int = CHUNK,
    slot_look_s: float = SPREAD_S,
    alert_env: AlertEnv | None = None,
) -> int:
    """Execute pending runs of registered workflows until none is left (or ``limit``).

    Without ``pool``: up to ``claim_batch`` runs are claimed in one statement, executed one after
    the other, and finished together in one transaction (:func:`execute_batch`), which also claims
    the next batch: one transaction per batch. With ``pool`` (``tocsin worker``, ``serve``), runs
    are claimed as its slots free up, up to :func:`slot_chunk` per free slot in one statement,
    into one queue (:class:`Claim`): one slot starts on it, and while runs wait in it the
    claimer adds a slot each time the slots on it lag (:func:`_lagging`), until the pool is
    full; each slot takes the next run of it until it is empty, through the same
    :func:`execute_batch`, and finishes what it ran (a backlog costs a claim per queue and a
    finish per slot, not per run; fast runs take one slot and one finish, a slow run holds no
    other run for longer than a look while another slot is free). The call returns how many
    it handed to the pool once each of them has started (or gone back to pending), without
    waiting for them to end.

    ``hold_s``: a claimed run not started within ``hold_s`` of its claim goes back to pending
    (behind slow runs of its batch, it would otherwise outlive the stale-run sweep's threshold
    and be claimed again while it waits). ``leases`` (with ``pool``; the process's, kept across
    calls): the runs its slots hold, renewed every ``hold_s`` by this call (:class:`Leases`).
    Without a pool nothing renews them while a step runs: a step must end within
    ``TOCSIN_STUCK_AFTER_S`` (minus the batch's earlier runs) or ``tocsin worker`` run it.
    ``backoff_max_s`` caps the pause between two tries of a finish the database does not take
    (down, or full: :func:`execute_batch`). ``claim_batch`` and ``claim_chunk``
    (``TOCSIN_WORKFLOW_CLAIM_BATCH``, ``TOCSIN_WORKFLOW_CLAIM_CHUNK``): see :func:`slot_chunk`;
    ``slot_look_s`` (``TOCSIN_WORKFLOW_SLOT_LOOK_S``): see :func:`_lagging`.
    """
    ids = sorted(registry)
    if pool is not None:
        held = leases if leases is not None else Leases()
        return _start_on_pool(
            store,
            registry,
            ids,
            now,
            limit,
            should_stop,
            clock,
            pool,
            hold_s=hold_s,
            leases=held,
            backoff_max_s=backoff_max_s,
            per_slot=slot_chunk(pool.size, chunk=claim_chunk, batch=claim_batch),
            look_s=slot_look_s,
            alert_env=alert_env,
        )
    if not ids or (limit is not None and limit <= 0):
        return 0
    count, limits = 0, run_limits(registry)

    def claim(tx: Tx, unstarted: int = 0) -> list[store_claims.ClaimedRow]:
        """The next batch, claimed in ``tx``; none once ``limit`` is reached or to stop
        (``unstarted``: runs of the last batch sent back to pending, not counted as run)."""
        nonlocal count
        count -= unstarted
        want = claim_batch if limit is None else min(claim_batch, limit - count)
        if want <= 0 or (should_stop is not None and should_stop()):
            return []
        at = clock() if clock is not None else now
        return store_claims.claim_next_rows(tx, now=at, limit=want, workflow_ids=ids, limits=limits)

    with store.begin() as tx:
        batch = claim(tx)
    while batch:
        count += len(batch)
        batch = execute_batch(
            store,
            registry,
            Claim(batch),
            now=now,
            clock=clock,
            claim=claim,
            hold_s=hold_s,
            backoff_max_s=backoff_max_s,
            alert_env=alert_env,
        )
    return count


def run_limits(registry: Registry) -> store_claims.RunLimits:
    """The ``max_concurrent`` of the registered workflows and their declared schedules."""
    workflows = {w.id: w.max_concurrent for w in registry.values() if w.max_concurrent}
    limited = [(w.id, s) for w in registry.values() for s in w.schedules if s.max_concurrent]
    return store_claims.RunLimits(
        workflows=workflows,
        schedules={s.id: s.max_concurrent for _, s in limited if s.max_concurrent},
        schedule_of={s.id: wid for wid, s in limited},
    )


def _start_on_pool(
    store: Store,
    registry: Registry,
    ids: list[str],
    now: datetime,
    limit: int | None,
    should_stop: Callable[[], bool] | None,
    clock: Callable[[], datetime] | None,
    pool: RunPool,
    *,
    hold_s: float,
    leases: Leases,
    backoff_max_s: float,
    per_slot: int,
    look_s: float,
    alert_env: AlertEnv | None = None,
) -> int:
    """:func:`execute_pending` with a pool: each claim takes up to ``per_slot`` runs per
    free slot into a queue (oldest first) that one slot starts on and more share as they lag;
    returns how many it handed over. A stop asked meanwhile sends the queue's runs not started
    yet back to pending."""

    def renew() -> None:
        leases.renew(store, clock() if clock is not None else now, hold_s)

    def add_slot(queue: Claim, first: bool) -> None:
        job = partial(
            execute_batch,
            store,
            registry,
            queue,
            now=now,
            clock=clock,
            should_stop=should_stop,
            hold_s=hold_s,
            leases=leases,
            backoff_max_s=backoff_max_s,
            alert_env=alert_env,
        )
        try:
            pool.submit(job, scope=APP_SCOPE)  # the app's runs take at most their share of slots
        except BaseException:  # no thread: the slots started take the queue; with none, it is
            if first:  # left (unleased) to the stale sweep
                leases.drop([str(r["id"]) for r in iter(partial(_next, queue), None)])
            raise

    pool.on_busy(leases, renew)  # also while the table runs' claimer waits for a slot
    count, queue, limits = 0, Claim(), run_limits(registry)
    while queue or (ids and (limit is None or count < limit) and not (count and pool.pass_over())):
        renew()
        if should_stop is not None and should_stop():
            break  # (the slots on the queue send what they did not start back to pending)
        if queue:  # the last claim is not all started: one slot more when its slots lag (a full
            # pool: once a slot frees, or at the next look at the stop flag)
            if (
                _lagging(queue, look_s)
                and pool.wait_for_slot(SLOT_POLL_S, scope=APP_SCOPE)
                and queue
            ):
                add_slot(queue, first=False)
            elif queue and pool.free() and not pool.free(APP_SCOPE):
                break  # the app's runs hold their share: its slots go on with the queue
            continue
        if not pool.wait_for_slot(SLOT_POLL_S, scope=APP_SCOPE):
            if pool.free():  # the app's runs hold their share: the free slots are for others
                break
            continue  # every slot busy: look at the stop flag, then wait again
        want = pool.free(APP_SCOPE) * per_slot
        want = want if limit is None else min(want, limit - count)
        at = clock() if clock is not None else now
        with store.begin() as tx:
            batch = store_claims.claim_next_rows(
                tx, now=at, limit=want, workflow_ids=ids, limits=limits
            )
        if not batch:
            break
        leases.add(batch, at)
        count += len(batch)
        queue = Claim(batch)  # shared by the slots: a slot takes the next run
        add_slot(queue, first=True)
    return count


class Claim(deque[store_claims.ClaimedRow]):
    """A claim's runs, oldest first, in the queue the slots that run them share (``popleft``
    is atomic); ``emptied`` is set once the last one is taken (:func:`_next`). They wait as
    the driver's rows and each is decoded as a slot takes it: a queue of 500 runs held as
    dicts was walked by the collector's passes, and promoted into its oldest generation (one
    full pass of 30-40 ms per 10,000 one-step runs in ``tocsin worker``)."""

    def __init__(self, rows: list[store_claims.ClaimedRow] | None = None) -> None:
        super().__init__(rows or [])
        self.emptied = threading.Event()
        self.decode = store_claims.run_reader()


def _lagging(queue: Claim, look_s: float = SPREAD_S) -> bool:
    """One look, of at most ``look_s`` (``SPREAD_S``), at a claim's queue not all started:
    whether the slots on it would still leave runs waiting ``DRAIN_S`` from now at the pace
    they took runs during the look (none taken: each is in a run longer than the look). Fast
    runs are all started by one slot, which finishes them in one transaction (each slot more
    costs a finish, and on CPU-bound runs only contends for the interpreter); slow ones get a
    slot each look until the pool is full, so a slow run holds none of its claim's other runs
    for long."""
    before = len(queue)
    if queue.emptied.wait(look_s):
        return False
    after = len(queue)
    return after > 0 and after * look_s > DRAIN_S * (before - after)


def slot_chunk(size: int, *, chunk: int = CHUNK, batch: int = BATCH) -> int:
    """Runs a claim takes per free slot of a pool of ``size``: ``chunk`` (64), or more in a pool
    so small that its free slots would claim less than ``batch`` (500) in all (a pool of one
    claimed 64 at a time, each claim waiting for the last share's finish: 10,000 one-step runs
    took 0.8 s on SQLite and 2.3-3.1 s on PostgreSQL, against 0.5-0.6 s and 0.9-1.1 s now)."""
    return max(chunk, batch // size)


def execute_batch(
    store: Store,
    registry: Registry,
    runs: Claim,
    *,
    now: datetime,
    clock: Callable[[], datetime] | None = None,
    claim: Callable[[Tx, int], list[store_claims.ClaimedRow]] | None = None,
    should_stop: Callable[[], bool] | None = None,
    hold_s: float = HOLD_S,
    leases: Leases | None = None,
    backoff_max_s: float = DEFAULT_CAP_S,
    alert_env: AlertEnv | None = None,
) -> list[store_claims.ClaimedRow]:
    """Run the stages of claimed runs one after the other, then finish them all in one
    transaction (each under its own claim fence), in which ``claim`` (when given) claims the
    next batch: returned (none without ``claim``). Intermediate stages' receipts are still
    stored as each completes; a process killed before the finish leaves the batch ``running``
    for the stale-run sweep, which hands it back to pending (resumed after its stored
    receipts). Never raises because of a run.

    Before each run starts: once ``should_stop`` answers true, or the run was claimed more than
    ``hold_s`` ago, it and the rest go back to pending in the finish's transaction
    (``store_runs.release_runs``), never started.

    A finish the database does not take (down, or full) is tried again after pauses doubling
    up to ``backoff_max_s`` until it goes through (or a stop is asked: the batch is then left
    ``running`` for the stale sweep), so no run stays ``running`` once the database is back.

    ``runs`` is consumed, oldest first: a run's row is let go as it ends, and what its finish
    keeps is plain values (``store_runs.finish_row``): a batch's runs and receipts are not all
    kept alive until the finish (every one of them walked by the collector's passes)."""
    finishes: list[store_runs.FinishRow] = []
    succeeded: list[tuple[str, str, str | None, datetime]] = []
    failed: list[Failed] = []  # failed for good, with an on_failure to run once finished
    won: set[str] = set()
    unstarted: list[tuple[str, int]] = []
    taken: list[str] = []  # the runs this slot started (their leases end with its finish)
    # when each step and run really ended: the batch's first instant plus the time elapsed
    stamps = pass_clock(clock() if clock is not None else now)
    while run := _next(runs):
        at = clock() if clock is not None else now
        if (should_stop is not None and should_stop()) or _held(run, at) > hold_s:
            while run:  # this one and the rest the queue still holds (no other slot gets them)
                unstarted.append((str(run["id"]), int(run["attempts"])))
                run = _next(runs)
            break
        taken.append(str(run["id"]))
        values = run_to_end(store, registry, run, now=at, clock=stamps)
        if values is None:
            continue
        run_id, ended = str(run["id"]), stamps()
        finishes.append(store_runs.finish_row(run_id, int(run["attempts"]), values, ended))
        if values["status"] == "failed" and _alerts_of(registry, run) is not None:
            failed.append((run_id, str(run["workflow_id"]), run.get("schedule_id")))
        if values["status"] == "success":
            # its events keep the pass's instant: what fires on them is decided on that clock
            succeeded.append((run_id, str(run["workflow_id"]), run.get("schedule_id"), at))

    def finish() -> tuple[list[store_claims.ClaimedRow], Exception | None]:
        with store.begin() as tx:
            store_runs.release_runs(tx, runs=unstarted, now=clock() if clock is not None else now)
            won.clear()
            won.update(store_runs.finish_rows(tx, rows=finishes))
            # the events of the runs the fence let finish ``success`` (not one canceled meanwhile),
            # in one statement for the batch; made only when some schedule listens (lazy)
            events = (
                (kind, subject, at)
                for run_id, workflow_id, schedule_id, at in succeeded
                if run_id in won
                for kind, subject in _success_events(workflow_id, schedule_id)
            )
            store_events.insert_events_at(tx, events=events)
            if claim is None:
                return [], None
            released = len(unstarted)
            return _claim_beside(tx, lambda t: claim(t, released))

    try:
        following, broken = through_outage(
            finish,
            who=("workflow finish", id(finishes)),
            outage=store.outage,
            pause=Backoff(FIRST_PAUSE_S, backoff_max_s),
            sleep=time.sleep,
            give_up=should_stop or _never,
        )
        for run_id, _, _ in failed:
            if run_id in won:  # (not one canceled meanwhile)
                alert_failed(store, registry, run_id, now=_at(clock, now), env=alert_env)
        if broken is not None:  # the finish above committed: the claim's error is raised after it
            with map_db_errors():
                raise broken
        return following
    finally:  # finished, sent back, or left for the stale sweep: no longer held
        if leases is not None:
            leases.drop([str(r[0]) for r in unstarted] + taken)


def _never() -> bool:
    return False


def _next(runs: Claim) -> dict[str, Any] | None:
    """The oldest run left in ``runs`` (several slots may take from one queue: ``popleft`` is
    atomic), decoded, or None; the last one taken sets ``runs.emptied``."""
    try:
        row = runs.popleft()
    except IndexError:
        runs.emptied.set()
        return None
    if not runs:
        runs.emptied.set()
    return runs.decode(row)


def _held(run: Mapping[str, Any], at: datetime) -> float:
    """Seconds since ``run`` was claimed (its ``updated_at``, the claim's stamp) at ``at``."""
    claimed = run.get("updated_at")
    return (at - claimed).total_seconds() if isinstance(claimed, datetime) else 0.0


def _claim_beside(
    tx: Tx, claim: Callable[[Tx], list[store_claims.ClaimedRow]]
) -> tuple[list[store_claims.ClaimedRow], Exception | None]:
    """``claim`` in a savepoint of the finish's transaction: when it fails, only the savepoint
    rolls back, and the batch's finish still commits (its runs are not run again)."""
    try:
        with tx.conn.begin_nested():
            return claim(tx), None
    except Exception as exc:
        return [], exc


def claim_and_execute(
    store: Store,
    registry: Registry,
    run_id: str,
    *,
    now: datetime,
    alert_env: AlertEnv | None = None,
) -> bool:
    """Execute one pending run now (``wait=True``); False when another worker took it (or it
    waits for its next attempt)."""
    with store.begin() as tx:
        run = store_runs.claim_run(tx, run_id=run_id, now=now)
    if run is None:
        return False
    execute_claimed(store, registry, run, now=now, alert_env=alert_env)
    return True


def execute_claimed(
    store: Store,
    registry: Registry,
    run: Mapping[str, Any],
    *,
    now: datetime,
    alert_env: AlertEnv | None = None,
) -> None:
    """Run the stages of a claimed run and finish it; never raises because of the run."""
    stamps = pass_clock(now)
    values = run_to_end(store, registry, run, now=now, clock=stamps)
    if values is None:
        return
    ended = stamps()  # the run's end: as long after its start as it really took
    with store.begin() as tx:
        done = store_runs.finish_run(
            tx, run_id=run["id"], attempts=int(run["attempts"]), values=values, now=ended
        )
        if done and values["status"] == "success":
            store_events.insert_events(tx, events=success_events(run), now=now)
    if done and values["status"] == "failed" and _alerts_of(registry, run) is not None:
        alert_failed(store, registry, str(run["id"]), now=now, env=alert_env)


def _at(clock: Callable[[], datetime] | None, now: datetime) -> datetime:
    return clock() if clock is not None else now


def _alerts_of(registry: Registry, run: Mapping[str, Any]) -> Any:
    wf = registry.get(str(run["workflow_id"]))
    return None if wf is None else wf.alerts_for(run.get("schedule_id"))


def alert_failed(
    store: Store, registry: Registry, run_id: str, *, now: datetime, env: AlertEnv | None
) -> None:
    """Run the ``on_failure`` of a run that failed for good (the workflow's, else its
    schedule's) through ``runs.alerts``, once: not again when an earlier one was sent (a run
    retried by hand that fails again), and record its outcome on the run. Never raises."""
    try:
        with store.read() as tx:
            run = store_runs.get_run(tx, run_id=run_id)
        if run is None or run["status"] != "failed":
            return
        if isinstance(run.get("alert"), Mapping) and run["alert"].get("status") == "sent":
            return
        alerts = _alerts_of(registry, run)
        failed = FailedRun(
            kind="workflow",
            view=public_run(run),
            run_id=run_id,
            error=str(run.get("error") or ""),
            workflow_id=str(run["workflow_id"]),
            schedule_id=run.get("schedule_id"),
            scheduled_for=run.get("scheduled_for"),
        )
        outcome = alert_failed_run(
            alerts, failed, env=env() if env is not None and not callable(alerts) else None, now=now
        )
        if outcome is not None:
            with store.begin() as tx:
                store_runs.record_alert(tx, run_id=run_id, alert=outcome)
    except Exception:  # an alert never fails the worker, nor the run again
        log.exception("on_failure of workflow run %s could not run", run_id)


def success_events(run: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The events of a run's success (SPEC §13): ``workflow_succeeded`` and, for a run a
    schedule fired, ``schedule_succeeded``; written with the run's final status."""
    return _success_events(str(run["workflow_id"]), run.get("schedule_id"))


def _success_events(workflow_id: str, schedule_id: str | None) -> list[tuple[str, str]]:
    events = [("workflow_succeeded", workflow_id)]
    if schedule_id:
        events.append(("schedule_succeeded", str(schedule_id)))
    return events


def run_to_end(
    store: Store,
    registry: Registry,
    run: Mapping[str, Any],
    *,
    now: datetime,
    clock: PassClock | None = None,
) -> dict[str, Any] | None:
    """Run the stages of a claimed run: its finish values (``FINISH_KEYS``), or None when the
    claim was lost meanwhile (canceled…: nothing more is written). Never raises because of the
    run: an unexpected error fails it."""
    attempts = int(run["attempts"])
    attempt = int(run.get("attempt") or 1)

    def save(steps: list[dict[str, Any]]) -> bool:
        with store.begin() as tx:
            return store_runs.save_steps(
                tx, run_id=run["id"], attempts=attempts, steps=steps, now=now
            )

    wf = registry.get(str(run["workflow_id"]))
    steps = run.get("steps") or []
    if wf is None:
        error = messages.workflow_not_registered_here(str(run["workflow_id"]))
        return {**_KEEP, "steps": steps, "status": "failed", "error": error, "attempt": attempt}
    try:
        outcome = run_stages(wf, run, now=now, save=save, clock=clock)
    except Exception as exc:  # a store error mid-run: fail the run, keep going
        log.exception("workflow run failed", extra={"run_id": run["id"]})
        error = truncate_error(str(exc) or type(exc).__name__)
        return {**_KEEP, "steps": steps, "status": "failed", "error": error, "attempt": attempt}
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


def _retried(
    wf: Workflow, run: Mapping[str, Any], outcome: Outcome, attempt: int, now: datetime
) -> dict[str, Any]:
    """A failed attempt's finish under the retry policy in force (the failed step's, else the
    workflow's, else its schedule's): back to ``pending`` until ``next_attempt_at`` while
    attempts remain (``core.retry_policy``), else nothing changes (``failed``)."""
    if not outcome.retryable:
        return {}
    policy = policy_of(wf.retry_for(outcome.failed_step, run.get("schedule_id")))
    at = None if policy is None else policy.next_attempt_at(attempt, str(run["id"]), now)
    if at is None:
        return {}
    log.info("workflow run %s attempt %s failed; retrying at %s", run["id"], attempt, at)
    return {"status": "pending", "next_attempt_at": at, "attempt": attempt + 1}


__all__ = [
    "alert_failed",
    "claim_and_execute",
    "execute_batch",
    "execute_claimed",
    "execute_pending",
    "run_to_end",
    "success_events",
]
