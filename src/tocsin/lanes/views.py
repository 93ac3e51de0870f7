"""The public shapes of lanes and their attempts (facade, HTTP, CLI and Studio read these).

An attempt entry carries the stored contract (three layers and the decision) unchanged, and
beside it what is not part of the contract: the attempt's state, the handler's outcome and an
error text when the attempt failed before any decision.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tocsin.lanes.definition import Lane
from tocsin.runs.alerts import alerts_view


def public_attempt(row: Mapping[str, Any]) -> dict[str, Any]:
    decision = None
    if row["decision_status"] is not None:
        decision = {"status": row["decision_status"], "reason": row["decision_reason"]}
    return {
        "attempt_id": row["attempt_id"],
        "run_id": row["run_id"],
        "lane_id": row["lane_id"],
        "attempt": row["attempt"],
        "kind": row["kind"],
        "state": row["state"],
        "observed_at": row["observed_at"],
        "scheduled_for": row["scheduled_for"],
        "window": {"start_inclusive": row["window_start"], "end_exclusive": row["window_end"]},
        "timezone": row["zone"],
        "decision": decision,
        "contract": row["contract"],
        "handler": {"status": row["handler_status"], "error": row["handler_error"]},
        "error": row["error"],
        "next_attempt_at": row.get("next_attempt_at"),  # an automatic retry waits until then
        "alert": row.get("alert"),  # the lane's on_failure outcome, on the attempt that failed
        "created_at": row["created_at"],
        "updated_at": row["updated_at"],
    }


def public_fire(row: Mapping[str, Any]) -> dict[str, Any]:
    """A scheduled attempt as a fire of the lane's history: scheduled vs actual time, its run
    and attempt, and ``run_status`` (``pending``, ``running``, ``failed``, else the decision's
    status: ``ready``, ``noop``, ``stopped``, ``rejected``, ``ignored``)."""
    attempt = public_attempt(row)
    status = row["decision_status"] if row["state"] == "recorded" else row["state"]
    return {
        "id": row["attempt_id"],
        "lane_id": row["lane_id"],
        "scheduled_for": row["scheduled_for"],
        "fired_at": row["observed_at"],
        "run_id": row["run_id"],
        "attempt_id": row["attempt_id"],
        "attempt": row["attempt"],
        "run_status": status or row["state"],
        "window": attempt["window"],
        "decision": attempt["decision"],
        "handler": attempt["handler"],
        "error": row["error"],
    }


def public_lane(
    lane_id: str,
    lane: Lane | None,
    row: Mapping[str, Any] | None,
    summary: Mapping[str, Any] | None,
) -> dict[str, Any]:
    summary = summary or {}
    return {
        "id": lane_id,
        "registered": lane is not None,
        "cron": lane.cron if lane is not None else (row or {}).get("cron"),
        "timezone": lane.zone if lane is not None else (row or {}).get("timezone"),
        "policy_version": (
            lane.policy_version if lane is not None else (row or {}).get("policy_version")
        ),
        "catch_up": lane.catch_up if lane is not None else None,
        "paused": (row or {}).get("paused_at") is not None,
        "paused_at": (row or {}).get("paused_at"),
        "next_fire_at": (row or {}).get("next_fire_at"),
        "attempts": summary.get("attempts", 0),
        "decisions": dict(summary.get("decisions") or {}),
        "last_decision": summary.get("last_decision"),
        "last_state": summary.get("last_state"),
        "last_at": summary.get("last_at"),
        "retry": None if lane is None else lane.retry,
        "on_failure": None if lane is None else alerts_view(lane.on_failure),
    }


__all__ = ["public_attempt", "public_fire", "public_lane"]
