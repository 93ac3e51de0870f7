"""Lanes as schedules: pause and resume (``paused`` skips, nothing run for the paused instants),
catch-up after downtime (``all``: each missed window in order, paged; ``latest``: once over the
merged window; ``none``: skipped) and the fire history with its skips, through the facade."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from lanes.lane_support import LANE_ID, TPE, Probe, make_lane, policy
from tocsin import Lane, Schedule, Tocsin
from tocsin.core.contract.lane import Window
from tocsin.engine.lanes import PAGE_INSTANTS
from tocsin.errors import Conflict, NotFound

DAY0 = datetime(2026, 9, 7, 12, 0, tzinfo=TPE)
S1 = DAY0.replace(day=8, hour=7, minute=30)  # the daily lane's first instant after DAY0
HOURLY = Schedule(cron="0 * * * *", timezone="Asia/Taipei")
H0 = datetime(2026, 9, 7, 10, 5, tzinfo=TPE)  # the hourly lane is anchored here: next 11:00
H1 = H0.replace(hour=11, minute=0)


def day(n: int) -> datetime:
    return S1 + timedelta(days=n)


def recording(windows: list[Window]) -> Probe:
    """A probe whose source records each window it is asked for, in order."""

    def answer(window: Window) -> list[object]:
        windows.append(window)
        return []

    return Probe(answer=answer)  # type: ignore[arg-type]


def lane_of(probe: Probe, schedule: Schedule, **options: str) -> Lane:
    return Lane(
        id=LANE_ID,
        schedule=schedule,
        policy_version="policy-v1",
        source=probe.fetch,
        select=policy,
        handler=probe.handle,
        **options,  # type: ignore[arg-type]
    )


def skips_of(t: Tocsin) -> list[tuple[str, int, str, str]]:
    """The lane's skip rows in its history: (reason, count, first, last), newest first."""
    return [
        (i["reason"], i["count"], i["first_instant"], i["last_instant"])
        for i in t.lanes.fires(LANE_ID)["items"]
        if i["kind"] == "skip"
    ]


def fired(t: Tocsin) -> list[tuple[datetime, datetime, datetime]]:
    """(scheduled_for, window start, window end) of each fire, oldest first."""
    items = [i for i in t.lanes.fires(LANE_ID, limit=500)["items"] if i["kind"] == "fire"]
    return [
        (i["scheduled_for"], i["window"]["start_inclusive"], i["window"]["end_exclusive"])
        for i in reversed(items)
    ]


def lane_due(t: Tocsin, at: datetime) -> dict[str, object]:
    """The lane's entry in ``t.due(at)`` (without its kind and id)."""
    due = t.due(at=at)
    (entry,) = [e for e in due["fires"] + due["not_firing"] if e.get("lane_id") == LANE_ID]
    assert entry.pop("kind") == "lane" and entry.pop("lane_id") == LANE_ID
    return entry


def test_a_lane_paused_over_three_instants_records_paused_x3_and_runs_none(
    tocsin: Tocsin,
) -> None:
    probe = Probe()
    t = tocsin
    t.lanes.register([make_lane(probe)])
    t.tick(now=DAY0)
    paused = t.lanes.pause(LANE_ID, now=DAY0)
    assert paused["paused"] is True and paused["paused_at"] == DAY0
    assert t.lanes.pause(LANE_ID, now=DAY0 + timedelta(hours=1))["paused_at"] == DAY0  # idempotent
    assert lane_due(t, day(0)) == {"status": "skipped", "reason": "paused", "runs": 0}
    assert t.lanes.next_fires(LANE_ID, now=day(0))["items"] == []
    for n in range(3):
        assert t.tick(now=day(n) + timedelta(seconds=5))["lanes_fired"] == 0
    back = day(2) + timedelta(hours=1)
    resumed = t.lanes.resume(LANE_ID, now=back)
    assert resumed["paused"] is False and resumed["next_fire_at"] == day(3)
    assert t.lanes.resume(LANE_ID, now=back)["next_fire_at"] == day(3)  # idempotent
    assert skips_of(t) == [
        ("paused", 3, "2026-09-07T23:30:00", "2026-09-09T23:30:00"),
    ]
    assert t.tick(now=back)["lanes_fired"] == 0  # nothing runs for the paused instants
    assert t.work(now=back) == 0 and probe.source_calls == 0
    assert t.tick(now=day(3))["lanes_fired"] == 1
    assert t.work(now=day(3)) == 1
    assert fired(t) == [(day(3), day(2), day(3))]  # the next regular window only
    kinds = [i["kind"] for i in t.lanes.fires(LANE_ID)["items"]]
    assert kinds == ["fire", "skip"]


def test_a_paused_lane_still_takes_manual_triggers(tocsin: Tocsin) -> None:
    probe = Probe()
    tocsin.lanes.register([make_lane(probe)])
    tocsin.lanes.pause(LANE_ID, now=DAY0)
    got = tocsin.lanes.trigger(LANE_ID, (day(-1), day(0)), now=day(0))
    assert got["decision"] == {"status": "noop", "reason": "source_empty"}
    assert tocsin.lanes.list()[0]["paused"] is True


def test_down_for_a_day_catch_up_latest_runs_once_over_the_merged_window(
    tocsin: Tocsin,
) -> None:
    windows: list[Window] = []
    probe = recording(windows)
    t = tocsin
    t.lanes.register([lane_of(probe, HOURLY, catch_up="latest")])
    t.tick(now=H0)
    assert t.tick(now=H1 + timedelta(seconds=5))["lanes_fired"] == 1
    t.work(now=H1 + timedelta(seconds=5))
    back = H1 + timedelta(days=1, seconds=5)  # down for a day: 24 instants owed
    assert lane_due(t, back) == {
        "status": "fires",
        "runs": 1,
        "scheduled_for": ["2026-09-08T03:00:00"],
        "skips": [{"reason": "coalesced", "count": 23}],
    }
    (item, _) = t.lanes.next_fires(LANE_ID, n=2, now=back)["items"]
    assert (item["at"], item["status"]) == ("2026-09-08T03:00:00", "due")
    assert t.tick(now=back)["lanes_fired"] == 1
    assert t.tick(now=back)["lanes_fired"] == 0
    assert t.work(now=back) == 1
    merged = Window(H1, H1 + timedelta(days=1))
    assert windows == [Window(H1 - timedelta(hours=1), H1), merged]
    (doc,) = [i["contract"] for i in t.lanes.contracts(LANE_ID, limit=1)["items"]]
    assert doc["window"] == {
        "start_inclusive": "2026-09-07T11:00:00+08:00",
        "end_exclusive": "2026-09-08T11:00:00+08:00",
    }
    assert doc["trigger"]["scheduled_for"] == "2026-09-08T11:00:00+08:00"
    # the 23 instants merged into it did not run on their own
    assert skips_of(t) == [("coalesced", 23, "2026-09-07T04:00:00", "2026-09-08T02:00:00")]
    assert t.lanes.get(LANE_ID)["next_fire_at"] == H1 + timedelta(days=1, hours=1)


def test_down_for_a_day_the_default_runs_each_window_in_order(tocsin: Tocsin) -> None:
    windows: list[Window] = []
    probe = recording(windows)
    t = tocsin
    t.lanes.register([lane_of(probe, HOURLY)])
    t.tick(now=H0)
    assert t.tick(now=H1 + timedelta(seconds=5))["lanes_fired"] == 1
    back = H1 + timedelta(days=1, seconds=5)  # down for a day: 24 instants owed
    assert t.tick(now=back)["lanes_fired"] == 24
    assert t.tick(now=back)["lanes_fired"] == 0
    assert t.work(now=back) == 25
    assert windows == [
        Window(H1 + timedelta(hours=n - 1), H1 + timedelta(hours=n)) for n in range(25)
    ]
    assert skips_of(t) == []
    assert t.lanes.fires(LANE_ID)["total"] == 25


def test_one_tick_pages_through_every_missed_window(tocsin: Tocsin) -> None:
    """More missed windows than one page admits (``PAGE_INSTANTS``): the tick pages on."""
    t = tocsin
    t.lanes.register([lane_of(Probe(), Schedule(cron="* * * * *", timezone="UTC"))])
    start = datetime(2026, 9, 7, 0, 0, 30, tzinfo=UTC)
    t.tick(now=start)
    back = start + timedelta(minutes=250)
    assert PAGE_INSTANTS < 250
    assert lane_due(t, back)["runs"] == 250  # paged as the tick pages
    assert t.tick(now=back)["lanes_fired"] == 250
    assert t.tick(now=back)["lanes_fired"] == 0
    page = t.lanes.fires(LANE_ID, limit=500)
    assert page["total"] == 250
    ends = [i["scheduled_for"] for i in page["items"] if i["kind"] == "fire"]
    first = start + timedelta(seconds=30)
    assert ends == [first + timedelta(minutes=n) for n in reversed(range(250))]


def test_down_for_a_day_catch_up_none_skips_the_missed_instants(tocsin: Tocsin) -> None:
    windows: list[Window] = []
    probe = recording(windows)
    t = tocsin
    t.lanes.register([lane_of(probe, HOURLY, catch_up="none")])
    t.tick(now=H0)
    assert t.tick(now=H1 + timedelta(seconds=5))["lanes_fired"] == 1  # on time: it runs
    back = H1 + timedelta(days=1, seconds=5)
    assert t.tick(now=back)["lanes_fired"] == 0
    assert skips_of(t) == [("coalesced", 24, "2026-09-07T04:00:00", "2026-09-08T03:00:00")]
    following = H1 + timedelta(days=1, hours=1)
    assert t.tick(now=following)["lanes_fired"] == 1
    t.work(now=following)
    assert windows[-1] == Window(following - timedelta(hours=1), following)


def test_a_spring_forward_gap_is_recorded_as_dst_gap(tocsin: Tocsin) -> None:
    ny = ZoneInfo("America/New_York")
    probe = Probe()
    t = tocsin
    t.lanes.register([lane_of(probe, Schedule(cron="30 2 * * *", timezone="America/New_York"))])
    t.tick(now=datetime(2027, 3, 13, 12, 0, tzinfo=ny))
    due = datetime(2027, 3, 15, 2, 30, tzinfo=ny)  # 2027-03-14 02:30 does not exist
    assert t.lanes.get(LANE_ID)["next_fire_at"] == due
    assert t.tick(now=due)["lanes_fired"] == 1
    assert skips_of(t) == [("dst_gap", 1, "2027-03-14T07:00:00", "2027-03-14T07:00:00")]


def test_pause_needs_a_known_scheduled_lane(tocsin: Tocsin) -> None:
    with pytest.raises(NotFound, match="unknown lane 'nope'"):
        tocsin.lanes.pause("nope", now=DAY0)
    with pytest.raises(NotFound, match="unknown lane 'nope'"):
        tocsin.lanes.fires("nope")
    manual = Lane(
        id="manual-only",
        policy_version="v1",
        source=Probe().fetch,
        select=policy,
        handler=Probe().handle,
    )
    tocsin.lanes.register([manual])
    with pytest.raises(Conflict, match="has no schedule"):
        tocsin.lanes.resume("manual-only", now=DAY0)


def test_the_pause_is_kept_across_processes(tocsin: Tocsin, store_url: str) -> None:
    probe = Probe()
    tocsin.lanes.register([make_lane(probe)])
    tocsin.lanes.pause(LANE_ID, now=DAY0)
    other = Tocsin.open(store_url, lanes=[make_lane(probe)])  # a redeploy never unpauses
    try:
        assert other.tick(now=day(0))["lanes_fired"] == 0
        assert other.lanes.get(LANE_ID)["paused"] is True
    finally:
        other.close()
