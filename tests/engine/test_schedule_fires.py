"""SPEC §12 workflow schedules through the tick (``tocsin.engine.schedules``) on SQLite and
PostgreSQL: fires and their records, downtime, pause/resume, overlap, the ledger fence, pages."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from tocsin import Conflict, NotFound
from tocsin.engine.schedules import fire_all_due_schedules, fire_due_schedules
from tocsin.service import Tocsin
from workflows.helpers import NOW, daily, every_minute, minutes

NINE_NY = datetime.fromisoformat("2026-03-02T14:00:00+00:00")  # 09:00 New York, Monday


def test_imperative_create_delete_and_declared_delete_conflict(tocsin: Tocsin) -> None:
    tocsin.register_workflows([daily()])
    tocsin.sync_schedules(now=NOW)
    with pytest.raises(NotFound, match="unknown workflow 'nope'"):
        tocsin.schedules.create(workflow_id="nope", cron="* * * * *", timezone="UTC", now=NOW)
    made = tocsin.schedules.create(
        workflow_id="daily-report", cron="0 */2 * * *", timezone="UTC", now=NOW
    )
    assert made["next_fire_at"] == NOW + timedelta(hours=2)
    assert tocsin.schedules.list(workflow_id="daily-report")["total"] == 2
    tocsin.schedules.delete(made["id"])
    with pytest.raises(NotFound, match="schedule not found"):
        tocsin.schedules.get(made["id"])
    with pytest.raises(Conflict, match="declared in code"):
        tocsin.schedules.delete("wf_daily-report")


def test_scheduled_fire_records_scheduled_and_actual_time(tocsin: Tocsin) -> None:
    tocsin.register_workflows([daily()])
    tocsin.sync_schedules(now=NOW)
    assert tocsin.tick(now=NINE_NY - timedelta(seconds=1))["schedules_fired"] == 0
    late = NINE_NY + timedelta(seconds=40)
    assert tocsin.tick(now=late)["schedules_fired"] == 1
    (fire,) = tocsin.schedules.fires("wf_daily-report")["items"]
    assert (fire["scheduled_for"], fire["fired_at"]) == (NINE_NY, late)
    assert (fire["publish_status"], fire["error"], fire["run_status"]) == (
        "published",
        None,
        "pending",
    )
    run = tocsin.get_workflow_run(fire["run_id"])
    assert (run["trigger"], run["schedule_id"], run["status"]) == (
        "scheduled",
        "wf_daily-report",
        "pending",
    )
    assert tocsin.work(now=late) == 1
    (fire,) = tocsin.schedules.fires("wf_daily-report")["items"]
    assert fire["run_status"] == "success"
    assert tocsin.schedules.get("wf_daily-report")["last_fire"]["run_status"] == "success"
    assert tocsin.schedules.get("wf_daily-report")["next_fire_at"] == NINE_NY + timedelta(days=1)
    assert tocsin.tick(now=late + minutes(1))["schedules_fired"] == 0


def test_downtime_coalesces_to_the_latest_missed_instant(tocsin: Tocsin) -> None:
    tocsin.register_workflows([every_minute(overlap="allow")])
    tocsin.sync_schedules(now=NOW)
    assert tocsin.tick(now=NOW + minutes(10) + timedelta(seconds=5))["schedules_fired"] == 1
    (fire,) = tocsin.schedules.fires("wf_tick-tock")["items"]
    assert fire["scheduled_for"] == NOW + minutes(10)
    assert tocsin.schedules.get("wf_tick-tock")["next_fire_at"] == NOW + minutes(11)


def test_pause_fires_nothing_and_resume_starts_from_now_without_backlog(tocsin: Tocsin) -> None:
    tocsin.register_workflows([daily()])
    tocsin.sync_schedules(now=NOW)
    paused = tocsin.schedules.pause("wf_daily-report", now=NOW)
    assert paused["paused"] is True and paused["paused_at"] == NOW
    assert tocsin.schedules.pause("wf_daily-report", now=NOW)["paused"] is True  # idempotent
    again = tocsin.schedules.pause("wf_daily-report", now=NOW + minutes(1))
    assert again["paused_at"] == NOW  # the first pause's instant stays
    week = NINE_NY + timedelta(days=7, hours=1)
    for day in range(8):
        assert tocsin.tick(now=NINE_NY + timedelta(days=day, seconds=5))["schedules_fired"] == 0
    resumed = tocsin.schedules.resume("wf_daily-report", now=week)
    assert resumed["paused"] is False and resumed["paused_at"] is None
    next_nine = datetime.fromisoformat("2026-03-10T13:00:00+00:00")  # 09:00 EDT (DST since 8th)
    assert resumed["next_fire_at"] == next_nine
    assert tocsin.schedules.resume("wf_daily-report", now=week + minutes(1)) == resumed
    assert tocsin.tick(now=week + minutes(1))["schedules_fired"] == 0
    assert tocsin.tick(now=next_nine)["schedules_fired"] == 1
    assert tocsin.schedules.fires("wf_daily-report")["total"] == 1


def test_overlap_skip_fires_nothing_while_a_run_is_active(tocsin: Tocsin) -> None:
    tocsin.register_workflows([every_minute(), every_minute("tock-tick", overlap="allow")])
    tocsin.sync_schedules(now=NOW)
    assert tocsin.tick(now=NOW + minutes(1))["schedules_fired"] == 2
    assert tocsin.tick(now=NOW + minutes(2))["schedules_fired"] == 1  # tick-tock still pending
    assert tocsin.schedules.fires("wf_tock-tick")["total"] == 2
    assert tocsin.schedules.fires("wf_tick-tock")["total"] == 1
    tocsin.work(now=NOW + minutes(2))
    assert tocsin.tick(now=NOW + minutes(3))["schedules_fired"] == 2


def test_the_ledger_fences_an_instant_fired_twice(tocsin: Tocsin) -> None:
    tocsin.register_workflows([every_minute(overlap="allow")])
    tocsin.sync_schedules(now=NOW)
    at = NOW + minutes(1)
    assert fire_due_schedules(tocsin.store, now=at) == 1
    # a stale scheduler that still believes the minute is due cannot fire it again
    from tocsin.store import schedules as store_schedules

    with tocsin.store.begin() as tx:
        store_schedules.update_schedule(
            tx, schedule_id="wf_tick-tock", values={"next_fire_at": at}, now=at
        )
    assert fire_due_schedules(tocsin.store, now=at) == 0
    assert tocsin.schedules.fires("wf_tick-tock")["total"] == 1
    assert tocsin.workflow_runs()["total"] == 1


def test_the_pass_fires_every_due_schedule_a_page_at_a_time(tocsin: Tocsin) -> None:
    tocsin.register_workflows([every_minute()])
    ids = [
        tocsin.schedules.create(workflow_id="tick-tock", cron="* * * * *", timezone="UTC", now=NOW)[
            "id"
        ]
        for _ in range(5)
    ]
    at = NOW + minutes(1)
    # pages of two: 2 + 2 + 1 (the short page ends it), every schedule once
    assert fire_all_due_schedules(tocsin.store, now=at, page=2) == 5
    assert fire_all_due_schedules(tocsin.store, now=at, page=2) == 0
    assert [tocsin.schedules.fires(i)["total"] for i in ids] == [1] * 5
    assert tocsin.workflow_runs()["total"] == 5
    tocsin.work(now=at)
    # a page that comes back full is followed by one more claim, which finds nothing
    assert fire_all_due_schedules(tocsin.store, now=at + minutes(1), page=5) == 5
    assert tocsin.workflow_runs(status="pending")["total"] == 5


def test_a_tick_fires_more_due_schedules_than_one_page(tocsin: Tocsin) -> None:
    tocsin.register_workflows([every_minute()])
    tocsin.schedules.create(workflow_id="tick-tock", cron="* * * * *", timezone="UTC", now=NOW)
    tocsin.sync_schedules(now=NOW)
    assert tocsin.fire_schedules(now=NOW + minutes(1), limit=1) == 1  # one page: up to limit
    # the tick drains: the other one fires now, not a tick later
    assert tocsin.tick(now=NOW + minutes(1))["schedules_fired"] == 1
    assert tocsin.workflow_runs()["total"] == 2


def test_unregistered_workflow_is_a_publish_failed_fire(tocsin: Tocsin) -> None:
    tocsin.register_workflows([every_minute()])
    tocsin.sync_schedules(now=NOW)
    assert fire_due_schedules(tocsin.store, now=NOW + minutes(1), registered=set()) == 1
    (fire,) = tocsin.schedules.fires("wf_tick-tock")["items"]
    assert fire["publish_status"] == "publish_failed" and fire["run_id"] is None
    assert fire["error"] == "unknown workflow 'tick-tock': no workflow with this id is registered"
    assert fire["run_status"] is None


def test_schedule_pages_and_missing_ids(tocsin: Tocsin) -> None:
    tocsin.register_workflows([daily(), every_minute()])
    tocsin.sync_schedules(now=NOW)
    page = tocsin.schedules.list(skip=1, limit=1)
    assert (page["total"], page["skip"], page["limit"], len(page["items"])) == (2, 1, 1, 1)
    assert tocsin.schedules.list(workflow_id="tick-tock")["items"][0]["id"] == "wf_tick-tock"
    for call in (tocsin.schedules.get, tocsin.schedules.fires):
        with pytest.raises(NotFound):
            call("wf_nope")
    with pytest.raises(NotFound):
        tocsin.schedules.pause("x" * 500, now=NOW)
