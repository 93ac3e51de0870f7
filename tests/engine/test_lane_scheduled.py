"""SPEC §14 scheduled runs through the tick (tocsin.engine.lanes): the lane's schedule instant
``s`` runs the window ``[previous instant, s)``; the tick only admits (pending), ``work`` asks
the source; an instant is processed once; missed instants are caught up one window each."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from lanes.lane_support import LANE_ID, TPE, Probe, make_lane
from tocsin import Tocsin
from tocsin.core.contract.verify import verify

DAY0 = datetime(2026, 9, 7, 12, 0, tzinfo=TPE)
S1 = DAY0.replace(day=8, hour=7, minute=30)  # first instant after DAY0


@pytest.fixture
def probe() -> Probe:
    return Probe()


@pytest.fixture
def t(tocsin: Tocsin, probe: Probe) -> Tocsin:
    tocsin.lanes.register([make_lane(probe)])
    return tocsin


def test_the_first_tick_anchors_without_backfill(t: Tocsin, probe: Probe) -> None:
    assert t.tick(now=DAY0)["lanes_fired"] == 0
    (lane,) = t.lanes.list()
    assert lane["next_fire_at"] == S1
    assert t.work(now=DAY0) == 0 and probe.source_calls == 0


def test_a_scheduled_instant_runs_its_window_once(t: Tocsin, probe: Probe) -> None:
    t.tick(now=DAY0)
    late = S1 + timedelta(seconds=5)
    assert t.tick(now=S1 - timedelta(seconds=1))["lanes_fired"] == 0
    assert t.tick(now=late)["lanes_fired"] == 1
    assert t.tick(now=late)["lanes_fired"] == 0  # processed once
    pending = t.lanes.contracts(LANE_ID)["items"]
    assert [(i["state"], i["contract"]) for i in pending] == [("pending", None)]
    assert probe.source_calls == 0  # the tick never waits for the source
    assert t.work(now=late + timedelta(seconds=1)) == 1
    (item,) = t.lanes.contracts(LANE_ID)["items"]
    doc = item["contract"]
    assert doc["trigger"] == {
        "kind": "scheduled",
        "scheduled_for": "2026-09-08T07:30:00+08:00",
        "observed_at": "2026-09-08T07:30:05+08:00",
    }
    assert doc["window"] == {
        "start_inclusive": "2026-09-07T07:30:00+08:00",
        "end_exclusive": "2026-09-08T07:30:00+08:00",
    }
    assert doc["decision"] == {"status": "noop", "reason": "source_empty"}
    assert verify(doc) == 1
    assert probe.source_calls == 1
    assert t.work(now=late + timedelta(seconds=2)) == 0


def test_missed_instants_are_caught_up_as_consecutive_windows(t: Tocsin, probe: Probe) -> None:
    t.tick(now=DAY0)
    three_days_later = S1 + timedelta(days=2, minutes=1)
    assert t.tick(now=three_days_later)["lanes_fired"] == 3
    assert t.work(now=three_days_later) == 3
    docs = [i["contract"] for i in t.lanes.contracts(LANE_ID)["items"]]
    windows = sorted((d["window"]["start_inclusive"], d["window"]["end_exclusive"]) for d in docs)
    assert windows == [
        ("2026-09-07T07:30:00+08:00", "2026-09-08T07:30:00+08:00"),
        ("2026-09-08T07:30:00+08:00", "2026-09-09T07:30:00+08:00"),
        ("2026-09-09T07:30:00+08:00", "2026-09-10T07:30:00+08:00"),
    ]
    assert {d["decision"]["reason"] for d in docs} == {"source_empty"}
    assert probe.source_calls == 3


def test_an_external_duplicate_of_a_ticked_run_is_ignored(t: Tocsin, probe: Probe) -> None:
    t.tick(now=DAY0)
    t.tick(now=S1)
    t.work(now=S1)
    again = t.lanes.trigger(LANE_ID, kind="scheduled", scheduled_for=S1, now=S1)
    assert again["decision"] == {"status": "ignored", "reason": "duplicate_trigger"}
    assert again["attempt"] == 2 and probe.source_calls == 1
