"""Retry, as policy and as an operation (SPEC §9.4, §9.5).

- :class:`TransientPolicy` / :func:`call_with_retries`: a lock conflict inside an action
  (``TransientStoreError``, an unmapped transient driver error, or ``ActionError(permanent=False)``)
  is retried in place, at most ``attempts`` times in all, sleeping a jittered, doubling backoff in
  between. ``sleep`` and ``jitter`` are injected so tests never wait. Anything else fails at once.
- :func:`retry_run`: the moderator's single retry. Allowed for failed, pending and stale running
  runs (``updated_at`` older than the stale window); resets the run to pending and clears its
  error, keeping its receipts so the worker resumes after the last successful action. A clock run
  (interval/daily/cron) is refused while another run of its trigger is pending or running.
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
from tocsin.core.model import Run, RunStatus
from tocsin.errors import Conflict, NotFound, TransientStoreError
from tocsin.store.errors import is_transient
from tocsin.store.run_queries import has_other_active_run
from tocsin.store.runs import get_run, reset_for_retry
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


def _refusal(run: Run, *, now: datetime, stuck_after_s: float) -> str | None:
    """Why ``run`` may not be retried now (the SPEC §9.4 text), or None."""
    status = run.status
    if not status.may_become(RunStatus.PENDING):  # done
        return messages.retry_refused(status)
    if status == RunStatus.RUNNING and run.updated_at >= now - timedelta(seconds=stuck_after_s):
        return messages.retry_refused(status)
    return None


def retry_run(
    store: Store, *, table_id: str, run_id: str, now: datetime, stuck_after_s: float
) -> dict[str, Any]:
    """Reset a failed / pending / stale running run to pending; returns the run's dict (SPEC
    §9.4)."""
    with store.begin() as tx:
        run = get_run(tx, run_id=run_id)
        if run is None or run.table_id != table_id:
            raise NotFound(messages.RUN_NOT_FOUND)
        refusal = _refusal(run, now=now, stuck_after_s=stuck_after_s)
        if refusal is not None:
            raise Conflict(refusal)
        if run.clock and has_other_active_run(
            tx, table_id=table_id, trigger_id=run.trigger_id, run_id=run_id
        ):
            raise Conflict(messages.RETRY_ANOTHER_ACTIVE)
        reset = reset_for_retry(
            tx,
            run_id=run_id,
            expected_status=run.status,
            expected_updated_at=run.updated_at,
            now=now,
        )
    if reset is None:  # moved under us: a worker claimed it, or the fence refused
        raise Conflict(_lost_race(store, run_id=run_id, now=now, stuck_after_s=stuck_after_s))
    return reset.as_dict()


def _lost_race(store: Store, *, run_id: str, now: datetime, stuck_after_s: float) -> str:
    """The 409 text when the reset lost a race, read afresh (a PostgreSQL unique violation
    aborted the retry's own transaction)."""
    with store.read() as tx:
        current = get_run(tx, run_id=run_id)
    if current is not None:
        refusal = _refusal(current, now=now, stuck_after_s=stuck_after_s)
        if refusal is not None:
            return refusal
    return messages.RETRY_ANOTHER_ACTIVE
