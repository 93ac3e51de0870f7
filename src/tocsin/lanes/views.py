"""The public shapes of lanes and their attempts (facade, HTTP, CLI and Studio read these).

An attempt entry carries the stored contract (three layers and the decision) unchanged, and
beside it what is not part of the contract: the attempt's state, the handler's outcome and an
error text when the attempt failed before any decision.
"""

from __future__ import annotations

from typing import Any

from tocsin.core.model import LaneAttempt, LaneSummary, StoredLane
from tocsin.lanes.definition import Lane
from tocsin.runs.alerts import alerts_view

NO_ATTEMPTS = LaneSummary(
    attempts=0, decisions={}, last_at=None, last_decision=None, last_state=None
)


def public_attempt(row: LaneAttempt) -> dict[str, Any]:
    decision = None
    if row.decision_status is not None:
        decision = {"status": row.decision_status, "reason": row.decision_reason}
    return {
        "attempt_id": row.attempt_id,
        "run_id": row.run_id,
        "lane_id": row.lane_id,
        "attempt": row.attempt,
        "kind": row.kind,
        "state": row.state,
        "observed_at": row.observed_at,
        "scheduled_for": row.scheduled_for,
        "window": {"start_inclusive": row.window_start, "end_exclusive": row.window_end},
        "timezone": row.zone,
        "decision": decision,
        "contract": row.contract,
        "handler": {"status": row.handler_status, "error": row.handler_error},
        "error": row.error,
        "next_attempt_at": row.next_attempt_at,  # an automatic retry waits until then
        "alert": row.alert,  # the lane's on_failure outcome, on the attempt that failed
        "created_at": row.created_at,
        "updated_at": row.updated_at,
    }


def public_fire(row: LaneAttempt) -> dict[str, Any]:
    """A scheduled attempt as a fire of the lane's history: scheduled vs actual time, its run
    and attempt, and ``run_status`` (``pending``, ``running``, ``failed``, else the decision's
    status: ``ready``, ``noop``, ``stopped``, ``rejected``, ``ignored``)."""
    attempt = public_attempt(row)
    status = row.decision_status if row.state == "recorded" else row.state
    return {
        "id": row.attempt_id,
        "lane_id": row.lane_id,
        "scheduled_for": row.scheduled_for,
        "fired_at": row.observed_at,
        "run_id": row.run_id,
        "attempt_id": row.attempt_id,
        "attempt": row.attempt,
        "run_status": status or row.state,
        "window": attempt["window"],
        "decision": attempt["decision"],
        "handler": attempt["handler"],
        "error": row.error,
    }


def public_lane(
    lane_id: str,
    lane: Lane | None,
    row: StoredLane | None,
    summary: LaneSummary | None,
) -> dict[str, Any]:
    summary = summary or NO_ATTEMPTS
    paused_at = row.paused_at if row is not None else None
    return {
        "id": lane_id,
        "registered": lane is not None,
        "cron": lane.cron if lane is not None else (row.cron if row is not None else None),
        "timezone": lane.zone if lane is not None else (row.timezone if row is not None else None),
        "policy_version": (
            lane.policy_version
            if lane is not None
            else (row.policy_version if row is not None else None)
        ),
        "catch_up": lane.catch_up if lane is not None else None,
        "paused": paused_at is not None,
        "paused_at": paused_at,
        "next_fire_at": row.next_fire_at if row is not None else None,
        "attempts": summary.attempts,
        "decisions": dict(summary.decisions),
        "last_decision": summary.last_decision,
        "last_state": summary.last_state,
        "last_at": summary.last_at,
        "retry": None if lane is None else lane.retry,
        "on_failure": None if lane is None else alerts_view(lane.on_failure),
    }


__all__ = ["public_attempt", "public_fire", "public_lane"]
