"""SPEC §12 sync of declared schedules through the facade on SQLite and PostgreSQL: registering,
created / rescheduled / patched / deleted / unchanged, and a redeploy never unpauses (the fires
themselves: tests/engine/test_schedule_fires.py)."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from tocsin.errors import ValidationError
from tocsin.service import Tocsin

from .helpers import NOW, NY, daily, every_minute, minutes

NINE_NY = datetime.fromisoformat("2026-03-02T14:00:00+00:00")  # 09:00 New York, Monday


def test_open_registers_and_writes_nothing(store_url: str) -> None:
    t = Tocsin.open(store_url, workflows=[daily()])
    try:
        assert [w["id"] for w in t.list_workflows()] == ["daily-report"]
        assert t.schedules.list()["total"] == 0
    finally:
        t.close()


def test_sync_creates_then_reports_unchanged(tocsin: Tocsin) -> None:
    tocsin.register_workflows([daily()])
    report = tocsin.sync_schedules(now=NOW)
    assert report == {
        "created": ["wf_daily-report"],
        "rescheduled": [],
        "patched": [],
        "deleted": [],
        "unchanged": [],
    }
    sched = tocsin.schedules.get("wf_daily-report")
    assert sched["next_fire_at"] == NINE_NY
    assert (sched["source"], sched["paused"], sched["last_fire"]) == ("declared", False, None)
    assert sched["input_data"] == {"user_id": "system"} and sched["timezone"] == NY
    assert tocsin.sync_schedules(now=NOW + minutes(5))["unchanged"] == ["wf_daily-report"]


def _redeploy(t: Tocsin, *workflows: object) -> None:
    t.workflows.clear()
    t.register_workflows(workflows)  # type: ignore[arg-type]


def test_cron_or_timezone_change_reschedules(tocsin: Tocsin) -> None:
    tocsin.register_workflows([daily()])
    tocsin.sync_schedules(now=NOW)
    _redeploy(tocsin, daily(cron="30 10 * * *"))
    assert tocsin.sync_schedules(now=NOW)["rescheduled"] == ["wf_daily-report"]
    assert tocsin.schedules.get("wf_daily-report")["next_fire_at"] == NINE_NY + minutes(90)
    _redeploy(tocsin, daily(cron="30 10 * * *", tz="UTC"))
    assert tocsin.sync_schedules(now=NOW)["rescheduled"] == ["wf_daily-report"]
    assert tocsin.schedules.get("wf_daily-report")["next_fire_at"] == NOW.replace(
        hour=10, minute=30
    ) + timedelta(days=1)


def test_payload_change_patches_and_keeps_the_next_fire(tocsin: Tocsin) -> None:
    tocsin.register_workflows([daily()])
    tocsin.sync_schedules(now=NOW)
    _redeploy(tocsin, daily(input_data={"user_id": "ops"}, metadata={"team": "a"}))
    report = tocsin.sync_schedules(now=NOW + timedelta(hours=3))  # after 09:00 NY
    assert report["patched"] == ["wf_daily-report"]
    sched = tocsin.schedules.get("wf_daily-report")
    assert sched["next_fire_at"] == NINE_NY  # kept, not recomputed from the later now
    assert sched["input_data"] == {"user_id": "ops"} and sched["metadata"] == {"team": "a"}


def test_removed_declarations_are_deleted_and_imperative_untouched(tocsin: Tocsin) -> None:
    tocsin.register_workflows([daily()])
    tocsin.sync_schedules(now=NOW)
    imperative = tocsin.schedules.create(
        workflow_id="daily-report",
        cron="*/15 * * * *",
        timezone="UTC",
        input_data={"user_id": "u7"},
        now=NOW,
    )
    assert imperative["id"].startswith("sch_") and imperative["source"] == "imperative"
    _redeploy(tocsin)
    tocsin.register_workflows([every_minute()])
    report = tocsin.sync_schedules(now=NOW)
    assert report["deleted"] == ["wf_daily-report"] and report["created"] == ["wf_tick-tock"]
    ids = [s["id"] for s in tocsin.schedules.list()["items"]]
    assert sorted(ids) == sorted([imperative["id"], "wf_tick-tock"])


def test_redeploy_never_unpauses(tocsin: Tocsin) -> None:
    tocsin.register_workflows([daily()])
    tocsin.sync_schedules(now=NOW)
    tocsin.schedules.pause("wf_daily-report", now=NOW)
    _redeploy(tocsin, daily(cron="0 7 * * *", input_data={"user_id": "x"}))
    assert tocsin.sync_schedules(now=NOW)["rescheduled"] == ["wf_daily-report"]
    assert tocsin.schedules.get("wf_daily-report")["paused"] is True
    _redeploy(tocsin, daily(cron="0 7 * * *", input_data={"user_id": "y"}))
    assert tocsin.sync_schedules(now=NOW)["patched"] == ["wf_daily-report"]
    assert tocsin.schedules.get("wf_daily-report")["paused"] is True


def test_registering_checks_what_it_is_given(tocsin: Tocsin) -> None:
    tocsin.register_workflows([daily()])
    with pytest.raises(ValidationError, match="workflow 'daily-report' is registered twice"):
        tocsin.register_workflows([daily()])
    with pytest.raises(ValidationError, match="expected a committed workflow"):
        tocsin.register_workflows(["daily-report"])  # type: ignore[list-item]
