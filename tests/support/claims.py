"""The workflow runs the one claim takes, in the names of a workflow run (``tests/store``,
``tests/workflows``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tocsin.store.runs import claim_scoped_runs
from tocsin.store.tx import Tx


def claimed_runs(tx: Tx, *, workflow_ids: Sequence[str], **kwargs: Any) -> list[dict[str, Any]]:
    """The workflow runs the one claim takes (``store.runs.claim_scoped_runs``, workflow runs
    only), oldest first, each as a dict of its workflow run's names."""
    claimed = claim_scoped_runs(tx, actions=False, workflows=workflow_ids, **kwargs)
    return [
        {
            "id": run.id, "workflow_id": run.trigger_id, "schedule_id": run.schedule_id,
            "attempts": run.attempts, "input": run.input, "steps": run.action_results,
            "initial_state": run.initial_state, "request_context": run.request_context,
            "resume_data": run.resume_data, "scheduled_for": run.scheduled_for,
            "created_at": run.created_at, "updated_at": run.updated_at, "attempt": run.attempt,
        }
        for run in claimed
    ]  # fmt: skip
