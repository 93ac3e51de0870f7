"""Draining pending table runs for one ``work`` pass (SPEC §8, §9): claimed a few at a time,
executed here one after the other, or started on a :class:`~tocsin.runs.pool.RunPool` as its
slots free up (``tocsin worker``, ``serve``)."""

from __future__ import annotations

from datetime import datetime
from functools import partial

from tocsin.runs.batch import execute_batch
from tocsin.runs.pool import RunPool
from tocsin.runs.worker import Worker

CLAIM_BATCH = 10  # with a pool: runs claimed at most per claim, one slot each
GROUP_BATCH = 500
"""Without a pool: runs claimed in one statement and executed by ``runs.batch`` (those whose
actions write only to tocsin's database: in one transaction)."""
SLOT_POLL_S = 0.2
"""How often a claimer waiting for a free slot of a full pool looks at the stop flag."""


def drain(
    worker: Worker, *, now: datetime, limit: int | None = None, pool: RunPool | None = None
) -> int:
    """Claim and execute runs until none is pending, ``limit`` runs ran, or a stop is asked.

    Without ``pool``, runs are claimed ``GROUP_BATCH`` at a time and executed here, one after
    the other, those that write only to tocsin's database together (``runs.batch``); on a
    stop, claimed runs not started yet go back to pending. Returns how many runs were executed
    (whatever their outcome).

    Every claim takes the scopes in turn (``store.runs.claim_next_runs``). With ``pool``, runs
    are claimed only as free slots allow, none of a scope that has the pool's ``per_scope``
    runs running, and each starts at once on a pool thread; this returns without waiting for
    them, with how many runs it started.
    """
    if pool is not None:
        return _drain_into(worker, pool, now=now, limit=limit)
    count = 0
    while limit is None or count < limit:
        want = GROUP_BATCH if limit is None else min(GROUP_BATCH, limit - count)
        batch = [] if worker.should_stop() else worker.claim(now=worker.time(now), limit=want)
        if not batch:
            break
        count += execute_batch(worker, [(run, table) for run, table, _scope in batch], now=now)
        if worker.should_stop():
            break
    return count


def _drain_into(worker: Worker, pool: RunPool, *, now: datetime, limit: int | None) -> int:
    started = 0
    while (limit is None or started < limit) and not worker.should_stop():
        if started and pool.pass_over():
            break  # the pass used its time: the workflow runs get their turn
        if not pool.wait_for_slot(SLOT_POLL_S):
            continue  # every slot busy: look at the stop flag, then wait again
        want = min(pool.free(), CLAIM_BATCH, CLAIM_BATCH if limit is None else limit - started)
        batch = worker.claim(now=worker.time(now), limit=want, pool=pool)
        if not batch:
            break
        for run, table, scope in batch:  # each counts toward its scope's share of the pool
            job = partial(worker.execute, run, table, now=worker.time(now))
            pool.submit(job, scope=scope)
        started += len(batch)
    return started
