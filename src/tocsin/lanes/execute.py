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
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from tocsin import messages
from tocsin.core.contract import lane as contract
from tocsin.lanes.admit import Admission, contract_of
from tocsin.lanes.definition import Candidate, Lane, SourceContext, SourceUnavailable
from tocsin.store import lanes as store_lanes
from tocsin.store.tx import Store

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


def execute(store: Store, lane: Lane, adm: Admission, *, now: datetime) -> None:
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
        _handle(
            store, lane, adm, [c for c in selected.accepted if isinstance(c, Candidate)], doc, now
        )


def _handle(
    store: Store,
    lane: Lane,
    adm: Admission,
    accepted: list[Candidate],
    doc: dict[str, Any],
    now: datetime,
) -> None:
    status, error = "succeeded", None
    try:
        lane.handler(accepted, doc)
    except Exception as exc:  # recorded beside the contract; the run may be retried
        status, error = "failed", f"{type(exc).__name__}: {exc}"[:MAX_ERROR]
    with store.begin() as tx:
        values = {"handler_status": status, "handler_error": error}
        store_lanes.finish_attempt(tx, attempt_id=adm.attempt_id, values=values, now=now)
        store_lanes.update_run(tx, run_id=adm.run_id, values={"handler_status": status}, now=now)


def _fail(store: Store, adm: Admission, error: str, now: datetime) -> None:
    with store.begin() as tx:
        values = {"state": "failed", "error": error[:MAX_ERROR]}
        store_lanes.finish_attempt(tx, attempt_id=adm.attempt_id, values=values, now=now)
        store_lanes.update_run(tx, run_id=adm.run_id, values={"state": "failed"}, now=now)


__all__ = ["execute"]
