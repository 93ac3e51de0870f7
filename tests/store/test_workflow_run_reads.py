"""A workflow run's reads (``get_run``, ``runs_by_id``, ``list_runs``) answer the typed
``core.model.WorkflowRun``, its fields decoded, both backends: instants aware (UTC), the JSON
values as values, ``steps`` a list of receipt dicts; ``as_dict()`` the run's dict, its fields in
order."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from tocsin.core.model import WorkflowRun
from tocsin.engine.schedules import new_run
from tocsin.store import Store
from tocsin.store import workflow_runs as store_runs
from tocsin.store.runs import claim_scoped_runs

from .helpers import NOW, new_id

LATER = NOW + timedelta(seconds=5)
FOR = datetime(2026, 8, 27, 9, 0, tzinfo=ZoneInfo("Asia/Singapore"))  # 01:00 UTC
RECEIPTS = [
    {"id": "fetch", "status": "success", "output": {"rows": [1, 2]}, "error": None},
    {"id": "send", "status": "suspended", "output": None, "error": None},
]


def _reads(store: Store, run_id: str) -> list[WorkflowRun]:
    """The run as each read answers it."""
    with store.read() as tx:
        one = store_runs.get_run(tx, run_id=run_id)
        by_id = store_runs.runs_by_id(tx, run_ids=[run_id, "missing"])
        page, total = store_runs.list_runs(tx, workflow_id="wf", status=None, skip=0, limit=5)
    assert one is not None and set(by_id) == {run_id} and total == 1
    return [one, by_id[run_id], page[0]]


def test_every_read_answers_the_typed_run_with_its_fields_decoded(store: Store) -> None:
    row = new_run(
        run_id=new_id(),
        workflow_id="wf",
        input={"user": "u1", "n": [1, None]},
        now=NOW,
        trigger="scheduled",
        schedule_id="sch_1",
        scheduled_for=FOR,
        initial_state={"step": 0},
        request_context={"locale": "en"},
    )
    with store.begin() as tx:
        store_runs.insert_runs(tx, rows=[row])
    fresh = _reads(store, row["id"])
    assert fresh[0] == fresh[1] == fresh[2]
    assert (fresh[0].status, fresh[0].attempts, fresh[0].attempt) == ("pending", 0, 1)
    assert fresh[0].steps == [] and isinstance(fresh[0].steps, list)
    with store.begin() as tx:
        (claimed,) = claim_scoped_runs(
            tx, now=NOW, limit=1, actions=False, workflows=["wf"]
        )  # fmt: skip
        assert store_runs.save_steps(tx, run_id=row["id"], attempts=1, steps=RECEIPTS, now=LATER)
        store_runs.record_alert(tx, run_id=row["id"], alert={"status": "sent", "results": []})
        assert store_runs.transition(
            tx,
            run_id=row["id"],
            from_statuses=("running",),
            values={"status": "suspended", "suspend_payload": {"ask": "ok?"}, "resume_data": 7},
            now=LATER,
        )
    reads = _reads(store, row["id"])
    assert reads[0] == reads[1] == reads[2]
    run = reads[0]
    assert type(run) is WorkflowRun
    assert (run.id, run.workflow_id, run.schedule_id, run.trigger) == (
        row["id"], "wf", "sch_1", "scheduled"
    )  # fmt: skip
    assert (run.status, run.attempts, run.attempt, run.error, run.output) == (
        "suspended", 1, 1, None, None
    )  # fmt: skip
    assert run.input == {"user": "u1", "n": [1, None]}
    assert (run.initial_state, run.request_context) == ({"step": 0}, {"locale": "en"})
    assert (run.suspend_payload, run.resume_data) == ({"ask": "ok?"}, 7)
    assert run.alert == {"status": "sent", "results": []}
    assert type(run.steps) is list and run.steps == RECEIPTS
    instants = (run.scheduled_for, run.created_at, run.updated_at, run.started_at)
    assert instants == (FOR, NOW, LATER, NOW)
    assert all(at is not None and at.utcoffset() == timedelta(0) for at in instants)
    assert run.scheduled_for is not None and run.scheduled_for.tzinfo is UTC
    assert (run.ended_at, run.next_attempt_at) == (None, None)
    # the claim's value and this read's agree on what both hold
    assert (claimed.id, claimed.input, claimed.initial_state) == (run.id, run.input, {"step": 0})
    shown = run.as_dict()
    assert tuple(shown) == store_runs.FIELDS
    assert shown == {name: getattr(run, name) for name in store_runs.FIELDS}
    assert shown["steps"] == run.steps and shown["steps"] is not run.steps
    with pytest.raises(dataclasses.FrozenInstanceError):
        run.status = "running"  # type: ignore[misc]
