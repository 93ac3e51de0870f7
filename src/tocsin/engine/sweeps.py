"""Recovery sweeps the tick runs on every pass (SPEC §6, §9.6, §9.7, §12, §14).

Each takes a transaction and ``now``; :func:`recover` runs them all at the start of every tick
in one transaction (three statements), and when that raises, each again in a transaction of its
own (one that raises then is logged and reports 0).

- :func:`requeue_lost_runs` → ``trigger_runs_requeued``, ``lane_attempts_requeued`` and
  ``workflow_runs_requeued``, two statements over the one queue: a table trigger's pending runs
  not picked up within the stale window are re-stamped (their delivery was lost), and running
  runs of every kind whose ``updated_at`` (the claim, the lease's renewals and every stored
  stage stamp it) is older than the stale window (their worker, or a caller, died) go back to
  pending, in one statement; a worker then resumes a table trigger's run from its first
  unfinished action and a workflow run after its succeeded steps (receipts are kept), and
  executes a lane attempt again (the source is asked again; nothing was recorded). The next
  claim bumps ``attempts``: a late write of the lost worker is fenced out.
- :func:`requeue_staged_changes` → ``staged_changes_requeued``: approved changes whose
  application was lost (``applying`` for longer than the stale window) go back to ``approved``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime

from tocsin.store.approvals import requeue_changes
from tocsin.store.outage import is_outage
from tocsin.store.runs import requeue_runs
from tocsin.store.schema import RUN_KINDS, WORKFLOW_KIND
from tocsin.store.tx import Store, Tx

DEFAULT_STALE_AFTER_S = 300
log = logging.getLogger(__name__)


Sweep = Callable[[Tx], dict[str, int]]
# the tick's report, in this order (SPEC §6, then the sweeps added since)
REPORT_KEYS = (
    "trigger_runs_requeued",
    "staged_changes_requeued",
    "workflow_runs_requeued",
    "lane_attempts_requeued",
)


def recover(store: Store, *, now: datetime, stuck_after_s: float) -> dict[str, int]:
    """Every sweep in one transaction; when it raises, each sweep again in its own (one that
    raises then is logged and reports 0; a database outage is raised): the counts of
    :data:`REPORT_KEYS`."""
    sweeps: list[tuple[tuple[str, ...], Sweep]] = [
        (
            ("trigger_runs_requeued", "lane_attempts_requeued", "workflow_runs_requeued"),
            lambda tx: requeue_lost_runs(tx, now=now, stuck_after_s=stuck_after_s),
        ),
        (
            ("staged_changes_requeued",),
            lambda tx: {"staged_changes_requeued": requeue_staged_changes(tx, now=now)},
        ),
    ]
    report: dict[str, int] = {}
    try:
        with store.begin() as tx:
            for _, sweep in sweeps:
                report |= sweep(tx)
    except Exception as exc:
        raise_outage(exc)
        log.exception("tick: the recovery sweeps failed; each again in its own transaction")
        report = {}  # what the rolled back transaction counted did not happen
        for keys, sweep in sweeps:
            report |= _guarded(store, keys, sweep)
    return {key: report[key] for key in REPORT_KEYS}


def _guarded(store: Store, keys: tuple[str, ...], sweep: Sweep) -> dict[str, int]:
    try:
        with store.begin() as tx:
            return sweep(tx)
    except Exception as exc:
        raise_outage(exc)
        log.exception("tick: a recovery sweep failed; reporting 0")
        return dict.fromkeys(keys, 0)


def raise_outage(exc: Exception) -> None:
    """Raise ``exc`` again when the database takes no writes (down, or full): not one sweep's
    or table's failure, the whole tick fails and the ``Ticker`` reports the outage once."""
    if is_outage(exc):
        raise exc


def requeue_lost_runs(tx: Tx, *, now: datetime, stuck_after_s: float) -> dict[str, int]:
    """Re-stamp the pending table-trigger runs never picked up, and hand running runs of every
    kind whose worker died back to pending (one statement); the counts
    ``trigger_runs_requeued`` (both moves of table-trigger runs), ``lane_attempts_requeued``
    and ``workflow_runs_requeued``."""
    pending = requeue_runs(tx, now=now, status="pending", older_than_s=stuck_after_s)
    running = requeue_runs(
        tx, now=now, status="running", older_than_s=stuck_after_s, kinds=RUN_KINDS
    )
    return {
        "trigger_runs_requeued": pending["actions"] + running["actions"],
        "lane_attempts_requeued": running["lane"],
        "workflow_runs_requeued": running[WORKFLOW_KIND],
    }


def requeue_staged_changes(
    tx: Tx, *, now: datetime, stale_after_s: float = DEFAULT_STALE_AFTER_S
) -> int:
    """Hand approved changes whose application was lost back to ``approved``; the count."""
    return requeue_changes(tx, now=now, stale_after_s=stale_after_s)
