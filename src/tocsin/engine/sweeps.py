"""Recovery sweeps the tick runs on every pass (SPEC §6, §9.6, §9.7).

Each takes a transaction and ``now``; :func:`recover` runs them all at the start of every tick,
each in its own transaction (one that raises is logged and reports 0).

- :func:`requeue_lost_runs` → ``trigger_runs_requeued``: pending runs not picked up within the
  stale window are re-stamped (their delivery was lost), and running runs whose ``updated_at`` is
  older than the stale window (their worker crashed) go back to pending; a worker then resumes
  each from its first unfinished action (receipts are kept).
- :func:`requeue_staged_changes` → ``staged_changes_requeued``: approved changes whose
  application was lost (``applying`` for longer than the stale window) go back to ``approved``.
- :func:`requeue_stale_workflow_runs` → ``workflow_runs_requeued`` (SPEC §12): running workflow
  runs whose ``updated_at`` heartbeat is older than the stale window (their worker died) go back
  to pending; a worker resumes each after its succeeded steps (the receipts rule, per step).
- :func:`requeue_lost_lane_attempts` → ``lane_attempts_requeued`` (SPEC §14): the same sweep of
  the one queue for lane attempts left ``running`` by a worker (or a caller) that died: back to
  pending, and a worker executes them again (the source is asked again; nothing was recorded).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime

from tocsin.store.approvals import requeue_changes
from tocsin.store.outage import is_outage
from tocsin.store.runs import requeue_runs
from tocsin.store.tx import Store, Tx
from tocsin.store.workflow_runs import requeue_stale_runs

DEFAULT_STALE_AFTER_S = 300
log = logging.getLogger(__name__)


def recover(store: Store, *, now: datetime, stuck_after_s: float) -> dict[str, int]:
    """Every sweep, each in its own transaction (one that raises is logged and reports 0; a
    database outage is raised):
    ``trigger_runs_requeued``, ``staged_changes_requeued``, ``workflow_runs_requeued``,
    ``lane_attempts_requeued``."""
    return {
        "trigger_runs_requeued": _guarded(
            store, lambda tx: requeue_lost_runs(tx, now=now, stuck_after_s=stuck_after_s)
        ),
        "staged_changes_requeued": _guarded(store, lambda tx: requeue_staged_changes(tx, now=now)),
        "workflow_runs_requeued": _guarded(
            store, lambda tx: requeue_stale_workflow_runs(tx, now=now, stuck_after_s=stuck_after_s)
        ),
        "lane_attempts_requeued": _guarded(
            store, lambda tx: requeue_lost_lane_attempts(tx, now=now, stuck_after_s=stuck_after_s)
        ),
    }


def _guarded(store: Store, sweep: Callable[[Tx], int]) -> int:
    try:
        with store.begin() as tx:
            return int(sweep(tx))
    except Exception as exc:
        raise_outage(exc)
        log.exception("tick: a recovery sweep failed; reporting 0")
        return 0


def raise_outage(exc: Exception) -> None:
    """Raise ``exc`` again when the database takes no writes (down, or full): not one sweep's
    or table's failure, the whole tick fails and the ``Ticker`` reports the outage once."""
    if is_outage(exc):
        raise exc


def requeue_lost_runs(tx: Tx, *, now: datetime, stuck_after_s: float) -> int:
    """Requeue pending runs never picked up and running runs whose worker died; the count."""
    pending = requeue_runs(tx, now=now, status="pending", older_than_s=stuck_after_s)
    running = requeue_runs(tx, now=now, status="running", older_than_s=stuck_after_s)
    return pending + running


def requeue_lost_lane_attempts(tx: Tx, *, now: datetime, stuck_after_s: float) -> int:
    """Hand running lane attempts whose worker died back to pending; the count."""
    return requeue_runs(tx, now=now, status="running", older_than_s=stuck_after_s, kind="lane")


def requeue_staged_changes(
    tx: Tx, *, now: datetime, stale_after_s: float = DEFAULT_STALE_AFTER_S
) -> int:
    """Hand approved changes whose application was lost back to ``approved``; the count."""
    return requeue_changes(tx, now=now, stale_after_s=stale_after_s)


def requeue_stale_workflow_runs(tx: Tx, *, now: datetime, stuck_after_s: float) -> int:
    """Hand running workflow runs whose worker died back to pending; the count."""
    return requeue_stale_runs(tx, now=now, older_than_s=stuck_after_s)
