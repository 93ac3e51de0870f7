"""Draining pending runs of the one queue for one ``work`` pass (SPEC §8, §9), with one
strategy: claimed many at a time and executed by ``runs.batch`` (those whose actions write only
to tocsin's database: in groups, one transaction each), here one after the other, or on a
:class:`~tocsin.runs.pool.RunPool`'s slots (``tocsin worker``, ``serve``).

With a pool, a claim takes up to ``Worker.per_slot`` runs per free slot (``per_slot`` per slot
a tenant may still take: ``TOCSIN_MAX_RUNNING_PER_SCOPE``), and each tenant's runs of the claim
wait, oldest first, in one :class:`~tocsin.runs.pool.SlotQueue` that one slot starts on. A slot
runs what it takes through ``runs.batch``: a backlog of runs of database-only actions is
executed in groups by one slot (one transaction a group, no thread per run), and a slot's
workflow runs are finished together; before a run that may take a while (an outbound action, a
command, a lane attempt, a workflow run: the app's code), the slot hands the rest of its queue
to another slot of that scope when one is free, so slow runs still go side by side, one slot
each, up to the scope's share. While a tenant's queue holds runs, the claim gives that tenant
nothing more; a claim that took runs of fewer scopes than it could visit saw every scope with a
ready run, so the claimer waits for a slot to end or a queue to empty before it claims again (a
claim right away could only find runs written since: one claim in two found nothing, a
transaction each). With a pool or without, a claimed run not started within a quarter of the
stale window (``TOCSIN_STUCK_AFTER_S``) goes back to pending, with the rest of its queue; with
a pool, what its slots hold is leased and renewed meanwhile (``runs.leases``).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta
from functools import partial
from itertools import groupby

from tocsin import messages
from tocsin.runs.batch import Claimed, execute_batch
from tocsin.runs.pool import RunPool, SlotQueue
from tocsin.runs.worker import Worker
from tocsin.store.runs import tenant_of

GROUP_BATCH = 1000
"""Without a pool: runs claimed in one statement and executed by ``runs.batch`` (those whose
actions write only to tocsin's database: in one transaction), as many as a tick's page of
fires. Each claim costs a transaction and a fair visit of the scopes, whatever its size: with
claims of 500, 10,000 workflow runs took 0.56-0.58 s on PostgreSQL and 0.38-0.39 s on SQLite,
with 1,000 0.51 s and 0.37 s (``bench/workflow_bench.py``'s work phase, medians of six, two
alternated runs each, 2026-12-05)."""


def slot_share(size: int) -> int:
    """Runs a claim of a pool of ``size`` slots takes per free slot when
    ``TOCSIN_RUN_CLAIM_CHUNK`` is not set: ``GROUP_BATCH`` shared by the slots, so a claim with
    every slot free takes about as many runs as one without a pool (125 a slot in a pool of 8).
    A claim's transaction and fair visit cost the same whatever its size: with 64 a slot (384
    runs a claim in a pool of 8 whose eighth slot finishes the last claim's runs: 28 claims
    per 10,000 runs), ``tocsin worker`` ran 10,000 workflow runs beside ``tocsin scheduler``
    in 0.73-0.74 s on PostgreSQL, with 125 (750 a claim, 14 claims) in 0.67-0.69 s; in one
    process, the worker pool's work phase took 0.53 s, then 0.50 s (``bench/workflow_bench.py``'s
    processes and pool legs, medians of three and four, two alternated runs each, 2026-12-05).
    Slow runs are no worse off: a queue whose slots took none of its runs for a look gets
    another slot of its scope, and a run not started within a quarter of the stale window goes
    back to pending (:data:`HOLD_SHARE`)."""
    return max(1, GROUP_BATCH // size)


SLOT_POLL_S = 0.2
"""How often a claimer waiting for a free slot of a full pool looks at the stop flag."""

HOLD_SHARE = 4
"""A run claimed into a queue and not started within the stale window / ``HOLD_SHARE`` goes
back to pending (so that the sweep never finds it stale while it waits)."""

Queue = SlotQueue[Claimed]


def drain(
    worker: Worker, *, now: datetime, limit: int | None = None, pool: RunPool | None = None
) -> int:
    """Claim and execute runs until none is pending, ``limit`` runs ran, or a stop is asked.

    Without ``pool``, runs are claimed ``GROUP_BATCH`` at a time and executed here, one after
    the other, those that write only to tocsin's database together (``runs.batch``); on a
    stop, claimed runs not started yet go back to pending. Returns how many runs were executed
    (whatever their outcome).

    Every claim takes the scopes in turn (``store.runs.claim_scoped_runs``). With ``pool``, runs
    are claimed as slots free up into queues that slots execute (module docstring), until
    ``limit`` runs were claimed (each claim whole: the one that reaches ``limit`` may pass it,
    rather than a claim of the few runs left below it, one statement and transaction more a
    pass); this returns without waiting for them, with how many runs it claimed. In a pass
    (``RunPool.start_pass``), a claim that finds nothing while the pool's slots hold some
    scope's share waits for a slot to end or a queue to empty and claims again, until the pass
    is over.
    """
    if pool is not None:
        return _drain_into(worker, pool, now=now, limit=limit)
    count = 0
    while limit is None or count < limit:
        want = GROUP_BATCH if limit is None else min(GROUP_BATCH, limit - count)
        claimed = [] if worker.should_stop() else worker.claim(now=worker.time(now), limit=want)
        if not claimed:
            break
        batch = deque(claimed)  # taken as they start: a run is let go as it ends
        del claimed
        count += execute_batch(worker, _taken(worker, partial(_popleft, batch), now), now=now)
        if worker.should_stop():
            break
    return count


def _drain_into(worker: Worker, pool: RunPool, *, now: datetime, limit: int | None) -> int:
    every_s = worker.env.stale_after_s / HOLD_SHARE

    def renew() -> None:  # the runs the pool's slots hold (``runs.leases``)
        pool.leases.renew(worker.env.store, worker.time(now), every_s)

    pool.on_busy(pool.leases, renew)
    started = 0
    while (limit is None or started < limit) and not worker.should_stop():
        renew()
        for stalled in pool.stalled(worker.look_s):  # its slots are in runs that take a while
            _start(worker, pool, stalled, now=now, first=False)
        if started and pool.pass_over():
            break  # the pass used its time
        if not pool.wait_for_slot(SLOT_POLL_S):
            continue  # every slot busy: look at the stop flag, then wait again
        seen, free = pool.changes(), pool.free()
        want = free * max(1, worker.per_slot)  # whole, past ``limit`` too: no claim of a rest
        at = worker.time(now)
        batch = worker.claim(now=at, limit=want, pool=pool)
        took = len(batch)
        if took:
            seen = pool.changes()  # (a slot that ended meanwhile freed what this claim saw)
            pool.leases.add((run for run, _table in batch), at)
            visited = len({run.scope for run, _table in batch})
            for tenant, claimed in groupby(sorted(batch, key=_tenant), key=_tenant):
                queue: Queue = SlotQueue(pool, tenant, claimed)
                _start(worker, pool, queue, now=now, first=True)
            del batch, claimed  # the queues hold the runs: each is let go as it ends
            started += took
            if visited >= min(free, want) or pool.pass_over():
                continue  # the claim may have left scopes unvisited: claim again (or end)
        # nothing claimed, or every scope with a ready run was visited (each gave what it had
        # or what its room allowed; their tenants' queues now hold runs): another claim now
        # could only find runs written since, so the claimer first waits for a change
        if pool.spreadable():  # runs wait in queues that may take a slot more: until a
            _watch(worker, pool, seen, now=now, renew=renew)  # slot ends or a queue
            continue  # empties, a slot more for those whose slots took none for a look
        if pool.in_pass() and not pool.pass_over() and pool.active:
            pool.wait_for_change(seen, SLOT_POLL_S)  # a slot or a queue may free a scope
            continue
        if not took:
            break
    return started


def _popleft(batch: deque[Claimed]) -> Claimed | None:
    return batch.popleft() if batch else None


def _tenant(claimed: Claimed) -> str:
    """The tenant scope of a claimed run (its queue's)."""
    return tenant_of(claimed[0].scope)


def _watch(
    worker: Worker, pool: RunPool, seen: int, *, now: datetime, renew: Callable[[], None]
) -> None:
    """While queues hold runs and may take a slot more (their scope has a free one; else
    the slots on them go on with them, and the pass goes on) and no slot ended nor queue
    emptied since ``seen``: every
    ``worker.look_s`` (``TOCSIN_SLOT_LOOK_S``), a slot more on each queue whose slots took no
    run for that long. A claimed run so waits no longer than that behind runs that take a while
    (any kind's: a workflow step, a command) while its scope has a free slot, and fast runs
    stay on one slot (one finish, no contention for the interpreter)."""
    look = worker.look_s
    while pool.spreadable() and not worker.should_stop() and not pool.wait_for_change(seen, look):
        renew()
        for stalled in pool.stalled(look):
            _start(worker, pool, stalled, now=now, first=False)


def _start(worker: Worker, pool: RunPool, queue: Queue, *, now: datetime, first: bool) -> None:
    """A slot more on ``queue`` (``first``: the claimer's; else a slot's, before a run that goes
    alone, when its scope may take one). A first slot the pool no longer has room for (slots
    that spread took it meanwhile) sends its queue back to pending."""
    if not first and (not len(queue) or pool.free(queue.scope) < 1):
        return
    queue.looked()
    try:
        pool.submit(partial(_slot, worker, pool, queue, now), scope=queue.scope)
    except RuntimeError as exc:  # full meanwhile (slots that spread took it), or no thread
        if not first:
            return
        for run, _table in iter(queue.take, None):  # no slot for the queue: back to pending
            pool.leases.drop([run.id])
            worker.release(run, now=worker.time(now))
        if str(exc) != messages.RUN_POOL_FULL:
            raise  # (no thread: the worker's loop says so)


def _slot(worker: Worker, pool: RunPool, queue: Queue, now: datetime) -> None:
    spread = partial(_start, worker, pool, queue, now=now, first=False)
    taken: list[str] = []
    try:
        taking = _taken(worker, queue.take, now, taken)
        execute_batch(worker, taking, now=now, before_alone=spread)
    finally:  # finished, sent back, or left for the stale sweep: no longer held
        pool.leases.drop(taken)


def _taken(
    worker: Worker,
    take: Callable[[], Claimed | None],
    now: datetime,
    taken: list[str] | None = None,
) -> Iterator[Claimed]:
    """The claimed runs ``take`` gives (a slot's queue, or a claim without a pool), their ids
    into ``taken``; one claimed too long ago goes back to pending with the rest (behind slow
    runs they would look stale before they start, and be claimed again while they wait)."""
    hold = timedelta(seconds=worker.env.stale_after_s / HOLD_SHARE)
    while (item := take()) is not None:
        if taken is not None:
            taken.append(item[0].id)
        at = worker.time(now)
        if at - item[0].updated_at > hold:
            while item is not None:
                worker.release(item[0], now=at)
                item = take()
                if item is not None and taken is not None:
                    taken.append(item[0].id)
            return
        yield item
