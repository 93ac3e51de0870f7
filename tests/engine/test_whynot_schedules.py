"""Why-not for workflow schedules on SQLite and PostgreSQL: catch-up policies after a week of
downtime, skip ranges (coalesced, active_run, paused), next fires, backfill."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import pytest

from support.settings import with_settings
from tocsin import Schedule, workflow
from tocsin.errors import ValidationError
from tocsin.service import Tocsin
from tocsin.workflows import Workflow
from workflows.helpers import NOW, NY, ReportIn, ReportOut, daily, minutes, send_report

WEEK = timedelta(days=7)
SID = "wf_minutely"


def minutely(**kw: Any) -> Workflow:
    sched = Schedule(cron="* * * * *", timezone="UTC", input_data={"user_id": "m"}, **kw)
    return (
        workflow(id="minutely", input=ReportIn, output=ReportOut, schedule=sched)
        .then(send_report)
        .commit()
    )


def _setup(t: Tocsin, **kw: Any) -> None:
    t.register_workflows([minutely(**kw)])
    t.sync_schedules(now=NOW)


def _skips(t: Tocsin, sid: str = SID) -> list[tuple[str, str, str, int]]:
    items = t.schedules.skips(sid)["items"]
    return [(s["reason"], s["first_instant"], s["last_instant"], s["count"]) for s in items]


def _scheduled(t: Tocsin) -> list[datetime]:
    runs = t.workflow_runs(workflow_id="minutely", limit=500)["items"]
    return sorted(r["scheduled_for"] for r in runs)


def test_catch_up_latest_fires_the_latest_and_records_the_week_as_one_row(tocsin: Tocsin) -> None:
    _setup(tocsin, overlap="allow")
    assert tocsin.tick(now=NOW + WEEK)["schedules_fired"] == 1
    assert _scheduled(tocsin) == [NOW + WEEK]
    assert _skips(tocsin) == [("coalesced", "2026-03-02T12:01:00", "2026-03-09T11:59:00", 10_079)]


def test_catch_up_none_fires_nothing_after_downtime_and_records_every_instant(
    tocsin: Tocsin,
) -> None:
    _setup(tocsin, overlap="allow", catch_up="none")
    assert tocsin.tick(now=NOW + WEEK)["schedules_fired"] == 0
    assert _skips(tocsin) == [("coalesced", "2026-03-02T12:01:00", "2026-03-09T12:00:00", 10_080)]
    assert tocsin.schedules.get(SID)["next_fire_at"] == NOW + WEEK + minutes(1)
    assert tocsin.tick(now=NOW + WEEK + minutes(1))["schedules_fired"] == 1  # on time: fires
    assert _scheduled(tocsin) == [NOW + WEEK + minutes(1)]


def test_catch_up_all_fires_the_newest_max_oldest_first(tocsin: Tocsin) -> None:
    _setup(tocsin, overlap="allow", catch_up="all", max_catch_up=100)
    assert tocsin.tick(now=NOW + WEEK)["schedules_fired"] == 100
    assert _scheduled(tocsin) == [NOW + WEEK - minutes(99 - i) for i in range(100)]
    assert _skips(tocsin) == [("coalesced", "2026-03-02T12:01:00", "2026-03-09T10:20:00", 9_980)]
    fires = tocsin.schedules.fires(SID, limit=500)["items"]
    assert len(fires) == 100 and fires[0]["scheduled_for"] == NOW + WEEK
    assert tocsin.schedules.get(SID)["last_fire"]["scheduled_for"] == NOW + WEEK


def test_catch_up_all_without_downtime_fires_once(tocsin: Tocsin) -> None:
    _setup(tocsin, overlap="allow", catch_up="all")
    assert tocsin.tick(now=NOW + minutes(1))["schedules_fired"] == 1
    assert tocsin.tick(now=NOW + minutes(3))["schedules_fired"] == 2
    assert _scheduled(tocsin) == [NOW + minutes(m) for m in (1, 2, 3)]
    assert _skips(tocsin) == []


def test_overlap_skip_records_active_run_ranges_merged(tocsin: Tocsin) -> None:
    _setup(tocsin)  # overlap="skip"
    assert tocsin.tick(now=NOW + minutes(1))["schedules_fired"] == 1
    for m in (2, 3, 4, 6):  # the run stays pending
        assert tocsin.tick(now=NOW + minutes(m))["schedules_fired"] == 0
    assert _skips(tocsin) == [("active_run", "2026-03-02T12:02:00", "2026-03-02T12:06:00", 5)]


def test_a_pause_records_the_instants_it_skipped_at_resume(tocsin: Tocsin) -> None:
    tocsin.register_workflows([daily()])
    tocsin.sync_schedules(now=NOW)
    sid = "wf_daily-report"
    tocsin.schedules.pause(sid, now=NOW)
    for day in range(8):
        assert tocsin.tick(now=NOW + timedelta(days=day, hours=3))["schedules_fired"] == 0
    tocsin.schedules.resume(sid, now=NOW + WEEK + timedelta(hours=3))
    # 09:00 New York from Mon 2 to Mon 9 (DST from the 8th: 13:00 UTC)
    assert _skips(tocsin, sid) == [("paused", "2026-03-02T14:00:00", "2026-03-09T13:00:00", 8)]


def test_next_fires_in_utc_and_the_schedule_zone(tocsin: Tocsin) -> None:
    tocsin.register_workflows([daily()])
    tocsin.sync_schedules(now=NOW)
    sid = "wf_daily-report"
    out = tocsin.schedules.next_fires(sid, n=7, now=NOW)
    got = [(i["at"], i["local"], i["status"]) for i in out["items"]]
    assert got[0] == ("2026-03-02T14:00:00", "2026-03-02T09:00:00-05:00", "scheduled")
    assert got[6] == ("2026-03-08T13:00:00", "2026-03-08T09:00:00-04:00", "scheduled")
    assert all(i["zone"] == NY for i in out["items"])
    tocsin.schedules.pause(sid, now=NOW)
    assert tocsin.schedules.next_fires(sid, now=NOW)["items"] == []
    with pytest.raises(ValidationError):
        tocsin.schedules.next_fires(sid, n=0, now=NOW)


def test_next_fires_honours_the_overlap_fence(tocsin: Tocsin) -> None:
    _setup(tocsin)
    sch = tocsin.schedules.create(
        workflow_id="minutely", cron="* * * * *", timezone="UTC", overlap="allow", now=NOW
    )
    assert tocsin.tick(now=NOW + minutes(1))["schedules_fired"] == 2
    out = tocsin.schedules.next_fires(SID, n=2, now=NOW + minutes(2))
    # 12:02 is due but the run of 12:01 is pending: overlap="skip" skips it, it never fires
    assert out["active_run"] is True
    assert [(i["at"], i["status"]) for i in out["items"]] == [
        ("2026-03-02T12:03:00", "scheduled"),
        ("2026-03-02T12:04:00", "scheduled"),
    ]
    out = tocsin.schedules.next_fires(sch["id"], n=2, now=NOW + minutes(2))
    assert out["active_run"] is False
    assert [(i["at"], i["status"]) for i in out["items"]] == [
        ("2026-03-02T12:02:00", "due"),
        ("2026-03-02T12:03:00", "scheduled"),
    ]


def test_backfill_twice_creates_each_run_once_in_order(tocsin: Tocsin) -> None:
    _setup(tocsin)
    start, end = NOW - timedelta(hours=2), NOW - timedelta(hours=1)
    seen: list[tuple[int, int]] = []
    first = tocsin.schedules.backfill(
        SID, start, end, now=NOW, progress=lambda d, n: seen.append((d, n))
    )
    assert first == {"instants": 60, "created": 60, "existing": 0}
    assert seen[-1] == (60, 60)
    again = tocsin.schedules.backfill(SID, start - timedelta(minutes=5), end, now=NOW)
    assert again == {"instants": 65, "created": 5, "existing": 60}
    runs = tocsin.workflow_runs(workflow_id="minutely", limit=500)["items"]
    assert len(runs) == 65 and {r["trigger"] for r in runs} == {"backfill"}
    instants = sorted(r["scheduled_for"] for r in runs)
    assert instants == [start - timedelta(minutes=5) + minutes(i) for i in range(65)]
    # backfilled runs never fence or consume the scheduled instants
    assert tocsin.tick(now=NOW + minutes(1))["schedules_fired"] == 1


def test_backfill_refuses_more_than_10000_without_force(tocsin: Tocsin) -> None:
    _setup(tocsin)
    with pytest.raises(ValidationError) as err:
        tocsin.schedules.backfill(SID, NOW - WEEK, NOW, now=NOW)  # 10,080 instants
    assert err.value.detail == (
        "the backfill range holds more than 10000 instants: narrow it or pass force=True (--force)"
    )
    with pytest.raises(ValidationError):
        tocsin.schedules.backfill(SID, NOW, NOW - WEEK, now=NOW)
    assert tocsin.workflow_runs(workflow_id="minutely")["total"] == 0


@with_settings(backfill_max_instants=100)  # TOCSIN_BACKFILL_MAX_INSTANTS (1,000,000 by default)
def test_a_forced_backfill_past_its_bound_is_not_told_to_pass_force(tocsin: Tocsin) -> None:
    _setup(tocsin)
    with pytest.raises(ValidationError) as err:
        tocsin.schedules.backfill(SID, NOW - WEEK, NOW, now=NOW, force=True)
    assert err.value.detail == (
        "the backfill range holds more than 100 instants, the most a forced backfill takes:"
        " narrow it"
    )
    assert tocsin.workflow_runs(workflow_id="minutely")["total"] == 0


def test_backfill_of_a_compound_schedule_says_it_needs_a_cron(tocsin: Tocsin) -> None:
    _setup(tocsin)
    tree = {"any": [{"cron": "0 * * * *", "timezone": "America/New_York"}]}
    made = tocsin.schedules.create(workflow_id="minutely", trigger=tree, timezone="UTC", now=NOW)
    with pytest.raises(ValidationError) as err:
        tocsin.schedules.backfill(made["id"], NOW - WEEK, NOW, now=NOW)
    assert err.value.detail == (
        f"schedule '{made['id']}' fires on a compound trigger tree: backfill takes the instants"
        " of a cron schedule only"
    )


def test_a_spring_forward_gap_is_a_dst_gap_skip(tocsin: Tocsin) -> None:
    sched = Schedule(
        cron="30 2 * * *", timezone="Europe/Paris", input_data={"user_id": "m"}, overlap="allow"
    )
    flow = (
        workflow(id="minutely", input=ReportIn, output=ReportOut, schedule=sched)
        .then(send_report)
        .commit()
    )
    tocsin.register_workflows([flow])
    start = datetime.fromisoformat("2027-03-26T12:00:00+00:00")
    tocsin.sync_schedules(now=start)
    fired = [tocsin.tick(now=start + timedelta(days=d))["schedules_fired"] for d in (1, 2, 3)]
    assert fired == [1, 0, 1]  # the 27th, nothing on the 28th (no 02:30), the 29th
    assert _skips(tocsin) == [("dst_gap", "2027-03-28T01:00:00", "2027-03-28T01:00:00", 1)]
