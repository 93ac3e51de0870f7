"""``work`` without a pool: batches claimed, run and finished (SQLite and PostgreSQL):
``limit`` and ``should_stop`` looked at before each claim, a claim fence per run, and success
events written with the finish, for the runs the fence let through, only when some schedule
listens.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from pydantic import BaseModel

from tocsin import StepContext, WorkflowSucceeded, step, workflow
from tocsin.service import Tocsin
from tocsin.store import trigger_events as store_events
from tocsin.workflows import runner

from .helpers import NOW, ReportIn, ReportOut, every_minute, minutes


@pytest.fixture
def small_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runner, "BATCH", 2)


def _pending(tocsin: Tocsin, count: int) -> None:
    tocsin.register_workflows([every_minute()])
    for i in range(count):
        tocsin.start_workflow("tick-tock", {"user_id": f"u{i}"}, now=NOW, wait=False)


def _statuses(tocsin: Tocsin) -> dict[str, int]:
    return {
        status: tocsin.workflow_runs(status=status)["total"] for status in ("pending", "success")
    }


@pytest.mark.usefixtures("small_batches")
def test_work_runs_batch_after_batch_up_to_the_limit(tocsin: Tocsin) -> None:
    _pending(tocsin, 7)
    assert tocsin.work(now=NOW, limit=5) == 5  # batches of 2, 2 and 1
    assert _statuses(tocsin) == {"pending": 2, "success": 5}
    assert tocsin.work(now=NOW) == 2
    assert _statuses(tocsin) == {"pending": 0, "success": 7}
    assert tocsin.work(now=NOW) == 0


@pytest.mark.usefixtures("small_batches")
def test_a_stop_request_is_seen_before_the_next_claim(tocsin: Tocsin) -> None:
    _pending(tocsin, 6)
    # asked by the table runs' pass, then before the first workflow claim; set from then on
    answers: Iterator[bool] = iter([False, False])
    assert tocsin.work(now=NOW, should_stop=lambda: next(answers, True)) == 2
    assert _statuses(tocsin) == {"pending": 4, "success": 2}


class Ask(BaseModel):
    cancel: bool = False


def test_success_events_only_for_listened_runs_the_fence_let_finish(tocsin: Tocsin) -> None:
    def body(data: Ask, ctx: StepContext) -> Ask:
        if data.cancel:  # canceled while its step runs: the finish is fenced out
            tocsin.cancel_workflow_run(ctx.run_id, now=NOW)
        return data

    work = step(id="work", input=Ask, output=Ask)(body)
    # "my_wf" is listened to; "myXwf" would match it if "_" were a LIKE wildcard
    flows = [workflow(id=w, input=Ask, output=Ask).then(work).commit() for w in ("my_wf", "myXwf")]
    tocsin.register_workflows(flows)
    tocsin.schedules.create(
        workflow_id="my_wf", trigger=WorkflowSucceeded("my_wf"), input_data={}, now=NOW
    )
    done = tocsin.start_workflow("my_wf", {}, now=NOW, wait=False)
    canceled = tocsin.start_workflow("my_wf", {"cancel": True}, now=NOW, wait=False)
    tocsin.start_workflow("myXwf", {}, now=NOW, wait=False)
    assert tocsin.work(now=NOW + minutes(1)) == 3
    assert tocsin.get_workflow_run(done["id"])["status"] == "success"
    assert tocsin.get_workflow_run(canceled["id"])["status"] == "canceled"
    with tocsin.store.begin() as tx:
        events = store_events.claim_events(tx, limit=10)
    assert [(e["kind"], e["subject"], e["occurred_at"]) for e in events] == [
        ("workflow_succeeded", "my_wf", NOW + minutes(1))
    ]


def test_nothing_listens_nothing_is_written(tocsin: Tocsin) -> None:
    tocsin.register_workflows([every_minute()])
    tocsin.sync_schedules(now=NOW)
    tocsin.tick(now=NOW + minutes(1))
    tocsin.start_workflow("tick-tock", ReportIn(user_id="m").model_dump(), now=NOW, wait=False)
    assert tocsin.work(now=NOW + minutes(1)) == 2
    assert _statuses(tocsin) == {"pending": 0, "success": 2}
    with tocsin.store.read() as tx:
        assert store_events.count_events(tx) == 0
    assert ReportOut  # the helpers' models, as the other tests use them


def test_receipts_keep_the_offset_of_the_instant_they_were_given() -> None:
    from datetime import timedelta, timezone

    from tocsin.workflows.execute import run_stages

    wf = every_minute()
    run = {"id": "r", "workflow_id": wf.id, "input": {"user_id": "u"}, "steps": []}
    shanghai = NOW.astimezone(timezone(timedelta(hours=8)))  # the same instant
    stamps = [
        run_stages(wf, run, now=at, save=lambda steps: True).steps[0]["started_at"]
        for at in (NOW, shanghai, NOW)
    ]
    assert stamps == [NOW.isoformat(), shanghai.isoformat(), NOW.isoformat()]


@pytest.mark.usefixtures("small_batches")
def test_a_failed_claim_never_undoes_the_finish_it_shares_a_transaction_with(
    tocsin: Tocsin, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The next batch is claimed in the last batch's finish transaction; a claim that fails
    there (a failed statement aborts a PostgreSQL transaction) rolls back alone: the finished
    runs stay finished, the error reaches the caller, and the next call goes on."""
    from tocsin.store import workflow_runs as store_runs

    _pending(tocsin, 3)
    claim = store_runs.claim_next_runs
    calls = [0]

    def failing_second(tx, **kwargs):  # type: ignore[no-untyped-def]
        calls[0] += 1
        if calls[0] == 2:
            tx.conn.exec_driver_sql("SELECT no_such_column FROM workflow_runs")
        return claim(tx, **kwargs)

    monkeypatch.setattr(store_runs, "claim_next_runs", failing_second)
    with pytest.raises(Exception, match="no_such_column"):
        tocsin.work(now=NOW)
    assert _statuses(tocsin) == {"pending": 1, "success": 2}
    assert tocsin.work(now=NOW) == 1
    assert _statuses(tocsin) == {"pending": 0, "success": 3}
