"""Execution of an admitted attempt (SPEC §14 steps 3–4), outside any transaction:

1. ask the source once: ``SourceUnavailable(category)`` → ``stopped / source_unavailable``
   (any other exception, or an answer that is not a list of ``Candidate`` with a text ``ref``
   and an aware ``occurred_at``, is a failed source too: categories ``source_error`` and
   ``invalid_response``, the message kept beside the contract);
2. no candidates → ``noop / source_empty``;
3. place each candidate by its own ``occurred_at``, then the policy; none accepted →
   ``noop / no_eligible_input``, else ``ready / selected``;
4. the contract is committed; then, only when the decision is ``ready`` with accepted refs, the
   handler is called with the accepted candidates and the contract, and its success or failure
   is recorded beside the contract (``handler_status``), never inside it.

A policy that raises fails the attempt before any decision (state ``failed``, no contract; the
run may be retried). Returns the attempt's public view.

A handler that fails under the lane's ``retry`` policy, with attempts left (its run's failed
handlers counted) and not by ``tocsin.NonRetryable``, admits a new attempt of the run, kind
``retry``, ``pending`` until ``next_attempt_at`` (``core.retry_policy``): ``work`` executes it
then, the source asked again and a contract of its own recorded; the failed attempt's contract
stays as it was. Once the handler failed for good, the lane's ``on_failure`` runs
(``runs.alerts``), once per run, its outcome recorded on the attempt (``alert``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

from tocsin import messages
from tocsin.actions.base import ActionEnv
from tocsin.core.contract import lane as contract
from tocsin.core.schedules.retry import policy_of
from tocsin.engine.lane_admit import Admission, admit, contract_of
from tocsin.errors import NonRetryable
from tocsin.lanes.definition import Candidate, Lane, SourceContext, SourceUnavailable
from tocsin.lanes.views import public_attempt
from tocsin.runs.alerts import FailedRun, alert_failed_run
from tocsin.store import lanes as store_lanes
from tocsin.store.tx import Store

log = logging.getLogger("tocsin.lanes")
AlertEnv = Callable[[], ActionEnv | None]

MAX_ERROR = 1000


def _ask(lane: Lane, adm: Admission) -> tuple[list[Candidate] | None, str | None, str | None]:
    """(candidates, failure category, error text) from one call of the source."""
    ctx = SourceContext(
        lane_id=adm.lane_id,
        run_id=adm.run_id,
        attempt=adm.attempt,
        kind=adm.kind,
        scheduled_for=adm.scheduled_for,
        observed_at=adm.observed_at,
    )
    try:
        answer = lane.source(adm.window, ctx)
    except SourceUnavailable as exc:
        return None, exc.category, exc.detail
    except Exception as exc:  # the source could not answer: recorded, never raised
        return None, "source_error", f"{type(exc).__name__}: {exc}"[:MAX_ERROR]
    if not _well_formed(answer):
        return None, "invalid_response", "the source did not return a list of Candidate"
    return list(answer), None, None


def _well_formed(answer: object) -> bool:
    if not isinstance(answer, Sequence) or isinstance(answer, str | bytes):
        return False
    return all(
        isinstance(c, Candidate)
        and isinstance(c.ref, str)
        and isinstance(c.occurred_at, datetime)
        and c.occurred_at.tzinfo is not None
        for c in answer
    )


def execute(
    store: Store,
    lane: Lane,
    adm: Admission,
    *,
    now: datetime,
    stale_after_s: float = 300.0,
    alert_env: AlertEnv | None = None,
) -> None:
    """Ask, select, decide, record; then the handler when ready (see the module docstring)."""
    candidates, failure, error = _ask(lane, adm)
    selected: contract.Selection | None = None
    if candidates:
        try:
            selected = contract.select(adm.window, candidates, lane.select)
        except Exception as exc:  # a broken policy: no decision can be honest
            _fail(store, adm, messages.selection_policy_raised(exc), now)
            return
    source = contract.source_layer(None if candidates is None else len(candidates), failure)
    layer = selected.layer() if selected else {"accepted_refs": [], "rejected": []}
    decision = contract.derive(source, layer)
    doc = contract_of(adm, source, layer, decision)
    ready = decision == contract.READY and bool(layer["accepted_refs"])
    handler_status = "running" if ready else None
    with store.begin() as tx:
        values = {
            "state": "recorded",
            "decision_status": decision[0],
            "decision_reason": decision[1],
            "contract": doc,
            "handler_status": handler_status,
            "error": error,
        }
        store_lanes.finish_attempt(tx, attempt_id=adm.attempt_id, values=values, now=now)
        run_values = {
            "state": "recorded",
            "decision": decision[0],
            "handler_status": handler_status,
        }
        store_lanes.update_run(tx, run_id=adm.run_id, values=run_values, now=now)
    if ready and selected is not None:
        accepted = [c for c in selected.accepted if isinstance(c, Candidate)]
        handled = _handle(store, lane, adm, accepted, doc, now)
        if handled is not True:
            retryable = handled is False
            _after_failure(store, lane, adm, now, stale_after_s, alert_env, retryable)


def _handle(
    store: Store,
    lane: Lane,
    adm: Admission,
    accepted: list[Candidate],
    doc: dict[str, Any],
    now: datetime,
) -> bool | None:
    """Call the handler and record its outcome: True (succeeded), False (failed, may be
    retried), None (failed by ``NonRetryable``)."""
    status, error = "succeeded", None
    ok: bool | None = True
    try:
        lane.handler(accepted, doc)
    except NonRetryable as exc:
        status, error, ok = "failed", f"{type(exc).__name__}: {exc}"[:MAX_ERROR], None
    except Exception as exc:  # recorded beside the contract; the run may be retried
        status, error, ok = "failed", f"{type(exc).__name__}: {exc}"[:MAX_ERROR], False
    with store.begin() as tx:
        values = {"handler_status": status, "handler_error": error}
        store_lanes.finish_attempt(tx, attempt_id=adm.attempt_id, values=values, now=now)
        store_lanes.update_run(tx, run_id=adm.run_id, values={"handler_status": status}, now=now)
    return ok


def _after_failure(
    store: Store,
    lane: Lane,
    adm: Admission,
    now: datetime,
    stale_after_s: float,
    alert_env: AlertEnv | None,
    retryable: bool = True,
) -> None:
    """A failed handler: a retry attempt while the policy has attempts left, else the alert."""
    policy = policy_of(lane.retry) if retryable else None
    with store.begin() as tx:
        outcomes = store_lanes.run_attempt_outcomes(tx, run_id=adm.run_id)
        failures = sum(1 for status, _ in outcomes if status == "failed")
        at = None if policy is None else policy.next_attempt_at(failures, adm.run_id, now)
        if at is not None:
            retry = admit(
                tx,
                lane,
                kind="retry",
                scheduled_for=adm.scheduled_for,
                window=adm.window,
                zone=adm.zone,
                now=now,
                stale_after_s=stale_after_s,
                pending=True,
            )
            values = {"next_attempt_at": at}
            store_lanes.finish_attempt(tx, attempt_id=retry.attempt_id, values=values, now=now)
            log.info("lane %s run %s handler failed; retrying at %s", lane.id, adm.run_id, at)
            return
    if lane.on_failure is None or any(_sent(alert) for _, alert in outcomes):
        return
    _alert(store, lane, adm, now, alert_env)


def _sent(alert: object) -> bool:
    return isinstance(alert, dict) and alert.get("status") == "sent"


def _alert(
    store: Store, lane: Lane, adm: Admission, now: datetime, alert_env: AlertEnv | None
) -> None:
    try:
        with store.read() as tx:
            row = store_lanes.get_attempt(tx, attempt_id=adm.attempt_id)
        if row is None:
            return
        view = public_attempt(row)
        failed = FailedRun(
            kind="lane",
            view=view,
            run_id=adm.run_id,
            error=str(row.handler_error or row.error or ""),
            schedule_id=lane.id,
            scheduled_for=adm.scheduled_for,
        )
        alerts = lane.on_failure
        env = alert_env() if alert_env is not None and not callable(alerts) else None
        outcome = alert_failed_run(alerts, failed, env=env, now=now)
        if outcome is not None:
            with store.begin() as tx:
                values = {"alert": outcome}
                store_lanes.finish_attempt(tx, attempt_id=adm.attempt_id, values=values, now=now)
    except Exception:  # an alert never fails the lane's worker
        log.exception("on_failure of lane %s run %s could not run", lane.id, adm.run_id)


def _fail(store: Store, adm: Admission, error: str, now: datetime) -> None:
    with store.begin() as tx:
        values = {"state": "failed", "error": error[:MAX_ERROR]}
        store_lanes.finish_attempt(tx, attempt_id=adm.attempt_id, values=values, now=now)
        store_lanes.update_run(tx, run_id=adm.run_id, values={"state": "failed"}, now=now)


__all__ = ["execute"]
