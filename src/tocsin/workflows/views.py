"""What callers see of workflows and their runs (SPEC §12): plain dicts."""

from __future__ import annotations

from typing import Any

from tocsin.core.model import WorkflowRun
from tocsin.core.schedules.retry import as_written, policy_of
from tocsin.runs.alerts import alerts_view
from tocsin.workflows.definition import Workflow

RUN_FIELDS = (
    "id",
    "workflow_id",
    "schedule_id",
    "trigger",
    "status",
    "attempts",
    "input",
    "output",
    "error",
    "scheduled_for",
    "suspend_payload",
    "created_at",
    "started_at",
    "ended_at",
    "attempt",
    "next_attempt_at",
    "alert",
)
STEP_FIELDS = ("id", "status", "output", "error", "started_at", "ended_at")


def public_run(run: WorkflowRun, wf: Workflow | None = None) -> dict[str, Any]:
    """A run as callers see it; with its workflow ``wf``, ``retry`` is the policy in force
    (for the step that failed last, else the run's: every key, defaults filled in)."""
    out = {name: getattr(run, name) for name in RUN_FIELDS}
    out["attempt"] = out["attempt"] or 1
    out["steps"] = [{k: s.get(k) for k in STEP_FIELDS} for s in run.steps]
    out["retry"] = None
    if wf is not None:
        failed = [s.get("id") for s in run.steps if s.get("status") == "failed"]
        policy = policy_of(wf.retry_for(failed[-1] if failed else None, run.schedule_id))
        out["retry"] = None if policy is None else as_written(policy)
    started, ended = run.started_at, run.ended_at
    out["duration_ms"] = (
        round((ended - started).total_seconds() * 1000) if started and ended else None
    )
    return out


def public_workflow(wf: Workflow) -> dict[str, Any]:
    return {
        "id": wf.id,
        "description": wf.description,
        "steps": [
            {
                "id": s.id,
                "parallel": stage.parallel,
                "retry": s.retry,
                "timeout_s": s.timeout_s,
            }
            for stage in wf.stages
            for s in stage.steps
        ],
        "input_schema": wf.input.model_json_schema() if wf.input is not None else None,
        "output_schema": wf.output.model_json_schema() if wf.output is not None else None,
        "schedules": [s.id for s in wf.schedules],
        "retry": wf.retry,
        "timeout_s": wf.timeout_s,
        "on_failure": alerts_view(wf.on_failure),
        "schedule_policies": {
            s.id: {"retry": s.retry, "on_failure": alerts_view(s.on_failure)} for s in wf.schedules
        },
    }


__all__ = ["public_run", "public_workflow"]
