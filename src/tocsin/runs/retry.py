"""Retry, as policy and as an operation (SPEC §9.4, §9.5).

- :class:`TransientPolicy` / :func:`call_with_retries`: a lock conflict inside an action
  (``TransientStoreError``, an unmapped transient driver error, or ``ActionError(permanent=False)``)
  is retried in place, at most ``attempts`` times in all, sleeping a jittered, doubling backoff in
  between. ``sleep`` and ``jitter`` are injected so tests never wait. Anything else fails at once.
- :func:`requeue_run`: the one requeue of one run of the queue, whatever its kind, under a
  :class:`Requeue` (which runs the caller owns, whether a failed one may go back, the texts):
  pending and stale running runs (``updated_at`` older than the stale window) go back to pending
  (a failed one too, when the kind allows it), the error cleared, the receipts kept so the worker
  resumes after the last successful action. A clock run (interval/daily/cron) is refused while
  another run of its trigger is pending or running.
- :func:`retry_run`: the moderator's single retry of a table run (SPEC §9.4): failed, pending and
  stale running runs of that table. A lane attempt's is ``Lanes.requeue``.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, TypeVar

from tocsin import messages
from tocsin.actions.base import ActionError
from tocsin.core.model import QueueEntry, Run, RunStatus
from tocsin.errors import Conflict, NotFound, TransientStoreError
from tocsin.store.errors import is_transient
from tocsin.store.run_queries import has_other_active_run
from tocsin.store.runs import queue_entry, reset_for_retry
from tocsin.store.tx import Store

T = TypeVar("T")

TRANSIENT_ATTEMPTS = 3
BASE_DELAY_S = 0.05


@dataclass(frozen=True, slots=True, kw_only=True)
class TransientPolicy:
    """At most ``attempts`` tries; before try *n+1* sleep ``jitter(0, base × 2^(n-1))`` seconds."""

    attempts: int = TRANSIENT_ATTEMPTS
    base_delay_s: float = BASE_DELAY_S
    sleep: Callable[[float], None] = field(default=time.sleep)
    jitter: Callable[[float, float], float] = field(default=random.uniform)

    def delay(self, attempt: int) -> float:
        return self.jitter(0.0, self.base_delay_s * 2 ** (attempt - 1))


def is_retryable(exc: BaseException) -> bool:
    """Lock conflicts and actions that asked for it; never anything else (SPEC §9.5)."""
    if isinstance(exc, ActionError):
        return not exc.permanent
    return isinstance(exc, TransientStoreError) or is_transient(exc)


def call_with_retries(fn: Callable[[], T], policy: TransientPolicy) -> T:
    """``fn()``, retried in place on transient errors under ``policy``."""
    attempt = 1
    while True:
        try:
            return fn()
        except Exception as exc:
            if attempt >= policy.attempts or not is_retryable(exc):
                raise
            policy.sleep(policy.delay(attempt))
            attempt += 1


@dataclass(frozen=True, slots=True, kw_only=True)
class Requeue:
    """What a surface may requeue: runs ``owns`` accepts (else 404 ``not_found``: unknown, or
    another table's or lane's), failed ones too when ``from_failed``; ``refused(status)`` is
    the 409 of a run that may not go back (done, recorded, live running…)."""

    owns: Callable[[QueueEntry], bool]
    not_found: str
    refused: Callable[[str], str]
    from_failed: bool = True


def _refusal(
    entry: QueueEntry, rule: Requeue, *, now: datetime, stuck_after_s: float
) -> str | None:
    """Why ``entry`` may not be requeued now under ``rule`` (its 409 text), or None."""
    status = entry.status
    if status == RunStatus.PENDING or (status == RunStatus.FAILED and rule.from_failed):
        return None
    if status == RunStatus.RUNNING and entry.updated_at < now - timedelta(seconds=stuck_after_s):
        return None
    return rule.refused(status)


def requeue_run(
    store: Store, *, run_id: str, rule: Requeue, now: datetime, stuck_after_s: float
) -> Run:
    """Reset a pending, stale running (or, under ``rule``, failed) run of any kind to pending;
    returns the run as reset. NotFound / Conflict with ``rule``'s texts."""
    with store.begin() as tx:
        entry = queue_entry(tx, run_id=run_id)
        if entry is None or not rule.owns(entry):
            raise NotFound(rule.not_found)
        refusal = _refusal(entry, rule, now=now, stuck_after_s=stuck_after_s)
        if refusal is not None:
            raise Conflict(refusal)
        if entry.clock and has_other_active_run(
            tx, table_id=entry.table_id, trigger_id=entry.trigger_id, run_id=run_id
        ):
            raise Conflict(messages.RETRY_ANOTHER_ACTIVE)
        reset = reset_for_retry(
            tx,
            run_id=run_id,
            expected_status=entry.status,
            expected_updated_at=entry.updated_at,
            now=now,
        )
    if reset is None:  # moved under us: a worker claimed it, or the fence refused
        raise Conflict(_lost_race(store, run_id, rule, now=now, stuck_after_s=stuck_after_s))
    return reset


def retry_run(
    store: Store, *, table_id: str, run_id: str, now: datetime, stuck_after_s: float
) -> dict[str, Any]:
    """Reset a failed / pending / stale running run of ``table_id`` to pending; returns the
    run's dict (SPEC §9.4)."""
    rule = Requeue(
        owns=lambda entry: entry.kind == "actions" and entry.table_id == table_id,
        not_found=messages.RUN_NOT_FOUND,
        refused=messages.retry_refused,
    )
    run = requeue_run(store, run_id=run_id, rule=rule, now=now, stuck_after_s=stuck_after_s)
    return run.as_dict()


def _lost_race(
    store: Store, run_id: str, rule: Requeue, *, now: datetime, stuck_after_s: float
) -> str:
    """The 409 text when the reset lost a race, read afresh (a PostgreSQL unique violation
    aborted the requeue's own transaction)."""
    with store.read() as tx:
        current = queue_entry(tx, run_id=run_id)
    if current is not None:
        refusal = _refusal(current, rule, now=now, stuck_after_s=stuck_after_s)
        if refusal is not None:
            return refusal
    return messages.RETRY_ANOTHER_ACTIVE
