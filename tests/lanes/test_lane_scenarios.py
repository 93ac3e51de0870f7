"""SPEC §14 and the seed's six-scenario table: source calls / downstream calls per scenario, on
SQLite and PostgreSQL, through the facade (``Tocsin.open(url, lanes=[...])``, ``t.lanes``).

| scenario                 | source | candidates | decision                    | source / handler |
| source empty             | asked  | 0          | noop / source_empty         | 1 / 0            |
| window overlap           | no     | —          | rejected / window_overlap   | 0 / 0            |
| duplicate trigger        | no     | —          | ignored / duplicate_trigger | 0 / 0            |
| all candidates excluded  | asked  | 2          | noop / no_eligible_input    | 1 / 0            |
| source unavailable       | failed | —          | stopped / source_unavailable| 1 / 0            |
| eligible data            | asked  | 2          | ready / selected            | 1 / 1            |
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from tocsin import Candidate, Tocsin
from tocsin.core.contract.lane import ContractMismatch
from tocsin.settings import Settings

from .lane_support import (
    A_END,
    A_START,
    B_END,
    B_START,
    LANE_ID,
    OBSERVED,
    Probe,
    inside,
    make_lane,
    unavailable,
)


@pytest.fixture
def probe() -> Probe:
    return Probe()


@pytest.fixture
def lanes_t(tocsin: Tocsin, probe: Probe) -> Tocsin:
    tocsin.lanes.register([make_lane(probe)])
    return tocsin


def _scheduled(t: Tocsin, start: Any = A_START, end: Any = A_END, now: Any = OBSERVED) -> Any:
    return t.lanes.trigger(
        LANE_ID, window=(start, end), kind="scheduled", scheduled_for=end, now=now
    )


def _delta(probe: Probe, before: tuple[int, int]) -> tuple[int, int]:
    return probe.source_calls - before[0], probe.handler_calls - before[1]


def test_source_empty(lanes_t: Tocsin, probe: Probe) -> None:
    got = _scheduled(lanes_t)
    assert probe.counts() == (1, 0)
    doc = got["contract"]
    assert doc["source_observation"] == {"status": "responded", "candidate_count": 0}
    assert doc["selection"] == {"accepted_refs": [], "rejected": []}
    assert doc["decision"] == {"status": "noop", "reason": "source_empty"}
    assert doc["trigger"]["observed_at"] == "2026-09-08T07:30:05+08:00"
    assert lanes_t.lanes.verify(doc)["ok"] is True


def test_window_overlap_is_rejected_before_the_source(lanes_t: Tocsin, probe: Probe) -> None:
    _scheduled(lanes_t, A_START, A_END)
    before = probe.counts()
    moved = B_START - timedelta(seconds=1)  # B's start one second back: overlaps A
    got = lanes_t.lanes.trigger(LANE_ID, window=(moved, B_END), now=B_END)
    assert _delta(probe, before) == (0, 0)
    doc = got["contract"]
    assert doc["decision"] == {"status": "rejected", "reason": "window_overlap"}
    assert doc["source_observation"] == {"status": "not_asked", "candidate_count": None}
    assert doc["window"]["start_inclusive"] == "2026-09-08T07:29:59+08:00"
    lanes_t.lanes.verify(doc)
    # the rejected window blocks nothing: B itself, sharing A's boundary, is admitted
    ok = _scheduled(lanes_t, B_START, B_END, now=B_END)
    assert ok["decision"] == {"status": "noop", "reason": "source_empty"}
    assert _delta(probe, before) == (1, 0)


def test_duplicate_trigger_same_run_new_attempt(lanes_t: Tocsin, probe: Probe) -> None:
    first = _scheduled(lanes_t)
    before = probe.counts()
    second = _scheduled(lanes_t, now=OBSERVED + timedelta(seconds=2))
    assert _delta(probe, before) == (0, 0)
    assert second["decision"] == {"status": "ignored", "reason": "duplicate_trigger"}
    assert second["run_id"] == first["run_id"]
    assert second["attempt_id"] != first["attempt_id"]
    assert (first["attempt"], second["attempt"]) == (1, 2)
    assert lanes_t.lanes.verify(second["contract"])["attempt"] == 2


def test_all_candidates_excluded(lanes_t: Tocsin, probe: Probe) -> None:
    probe.answer = lambda w: [
        Candidate("early", A_START - timedelta(seconds=1), {"lang": "zh"}),
        Candidate("refused", inside(A_START, 30), {"lang": "en"}),
    ]
    got = _scheduled(lanes_t)
    assert probe.counts() == (1, 0)
    doc = got["contract"]
    assert doc["source_observation"] == {"status": "responded", "candidate_count": 2}
    assert doc["selection"] == {
        "accepted_refs": [],
        "rejected": [
            {"ref": "early", "reason": "outside_window"},
            {"ref": "refused", "reason": "policy_excluded"},
        ],
    }
    assert doc["decision"] == {"status": "noop", "reason": "no_eligible_input"}


def test_source_unavailable(lanes_t: Tocsin, probe: Probe) -> None:
    probe.answer = unavailable("timeout")
    got = _scheduled(lanes_t)
    assert probe.counts() == (1, 0)
    doc = got["contract"]
    assert doc["source_observation"] == {
        "status": "failed",
        "candidate_count": None,
        "failure_category": "timeout",
    }
    assert doc["decision"] == {"status": "stopped", "reason": "source_unavailable"}
    assert got["handler"] == {"status": None, "error": None}


def test_eligible_data_calls_the_handler_once(lanes_t: Tocsin, probe: Probe) -> None:
    probe.answer = lambda w: [
        Candidate("v1", inside(A_START, 10), {"lang": "zh"}),
        Candidate("v2", inside(A_START, 20), {"lang": "en"}),
    ]
    got = _scheduled(lanes_t)
    assert probe.counts() == (1, 1)
    assert probe.handled == [["v1"]]
    doc = got["contract"]
    assert doc["selection"] == {
        "accepted_refs": ["v1"],
        "rejected": [{"ref": "v2", "reason": "policy_excluded"}],
    }
    assert doc["decision"] == {"status": "ready", "reason": "selected"}
    assert probe.contracts == [doc]  # the handler received the recorded contract
    assert got["handler"] == {"status": "succeeded", "error": None}


def test_a_failing_handler_is_recorded_beside_the_contract_and_retried(
    lanes_t: Tocsin, probe: Probe
) -> None:
    probe.answer = lambda w: [Candidate("v1", inside(A_START, 10), {"lang": "zh"})]
    probe.fail_handler = True
    got = _scheduled(lanes_t)
    assert got["handler"] == {"status": "failed", "error": "RuntimeError: downstream refused"}
    assert "handler" not in got["contract"]
    lanes_t.lanes.verify(got["contract"])
    probe.fail_handler = False
    again = lanes_t.lanes.trigger(LANE_ID, kind="retry", run_id=got["run_id"], now=B_END)
    assert again["contract"]["trigger"]["kind"] == "retry"
    assert again["contract"]["trigger"]["scheduled_for"] == "2026-09-08T07:30:00+08:00"
    assert again["run_id"] == got["run_id"] and again["attempt"] == 2
    assert again["handler"]["status"] == "succeeded"
    assert probe.counts() == (2, 2)
    # a run that succeeded is not run again by a retry: the retry is a duplicate trigger
    third = lanes_t.lanes.trigger(LANE_ID, kind="retry", run_id=got["run_id"], now=B_END)
    assert third["decision"] == {"status": "ignored", "reason": "duplicate_trigger"}
    assert probe.counts() == (2, 2)


def test_a_stopped_run_can_be_retried(lanes_t: Tocsin, probe: Probe) -> None:
    probe.answer = unavailable("dns")
    first = _scheduled(lanes_t)
    probe.answer = lambda w: []
    again = lanes_t.lanes.trigger(LANE_ID, kind="retry", run_id=first["run_id"], now=B_END)
    assert again["decision"] == {"status": "noop", "reason": "source_empty"}
    assert probe.counts() == (2, 0)


def test_the_boundary_instant_belongs_to_the_later_window(lanes_t: Tocsin, probe: Probe) -> None:
    probe.answer = lambda w: [Candidate("edge", A_END, {"lang": "zh"})]
    a = _scheduled(lanes_t, A_START, A_END)
    b = _scheduled(lanes_t, B_START, B_END, now=B_END)
    assert a["contract"]["selection"]["rejected"] == [{"ref": "edge", "reason": "outside_window"}]
    assert b["contract"]["selection"]["accepted_refs"] == ["edge"]
    assert probe.handled == [["edge"]]


def test_a_policy_change_is_a_new_run(tocsin: Tocsin, probe: Probe) -> None:
    tocsin.lanes.register([make_lane(probe, version="policy-v1")])
    v1 = _scheduled(tocsin)
    other = Tocsin.open(tocsin.store.engine.url.render_as_string(hide_password=False))
    try:
        other.lanes.register([make_lane(probe, version="policy-v2")])
        v2 = _scheduled(other, A_START, A_END)
        assert v2["run_id"] != v1["run_id"]
        # same window, another run: already covered by v1's window
        assert v2["decision"] == {"status": "rejected", "reason": "window_overlap"}
        with pytest.raises(Exception, match="policy-v1"):
            other.lanes.trigger(LANE_ID, kind="retry", run_id=v1["run_id"], now=B_END)
    finally:
        other.close()


def test_contracts_page_and_filter_by_decision(lanes_t: Tocsin, probe: Probe) -> None:
    _scheduled(lanes_t)
    _scheduled(lanes_t, now=OBSERVED + timedelta(seconds=1))
    lanes_t.lanes.trigger(LANE_ID, window=(A_START, B_END), now=B_END)
    page = lanes_t.lanes.contracts(LANE_ID, skip=0, limit=2)
    assert page["total"] == 3 and len(page["items"]) == 2
    assert page["items"][0]["decision"] == {"status": "rejected", "reason": "window_overlap"}
    noop = lanes_t.lanes.contracts(LANE_ID, decision="noop")
    assert [i["decision"]["reason"] for i in noop["items"]] == ["source_empty"]
    item = noop["items"][0]
    assert set(item["contract"]) >= {"trigger", "source_observation", "selection", "decision"}
    assert lanes_t.lanes.contracts(LANE_ID, decision="ignored")["total"] == 1
    with pytest.raises(Exception, match="decision"):
        lanes_t.lanes.contracts(LANE_ID, decision="done")
    listed = lanes_t.lanes.list()
    assert [(x["id"], x["attempts"]) for x in listed] == [(LANE_ID, 3)]


def test_bad_input_is_rejected_before_anything_is_written(lanes_t: Tocsin, probe: Probe) -> None:
    for kwargs in (
        {"window": (A_END, A_START)},
        {"window": (A_START.replace(tzinfo=None), A_END)},
        {"window": None},
        {"window": (A_START, A_END), "kind": "cron"},
        {"window": (A_START, A_END), "run_id": "run_x"},
        {"kind": "retry"},
        {"kind": "retry", "run_id": "run_x", "scheduled_for": A_END},
        {"kind": "scheduled", "window": (A_START, A_END)},
        {"window": (A_START, A_END), "scheduled_for": A_END.replace(tzinfo=None)},
    ):
        with pytest.raises(Exception) as caught:
            lanes_t.lanes.trigger(LANE_ID, now=OBSERVED, **kwargs)
        assert getattr(caught.value, "status", None) == 400, kwargs
    with pytest.raises(Exception) as missing:
        lanes_t.lanes.trigger(LANE_ID, kind="retry", run_id="run_" + "0" * 32, now=OBSERVED)
    assert getattr(missing.value, "status", None) == 404
    with pytest.raises(Exception) as unknown:
        lanes_t.lanes.trigger("nope", window=(A_START, A_END), now=OBSERVED)
    assert getattr(unknown.value, "status", None) == 404
    assert lanes_t.lanes.contracts(LANE_ID)["total"] == 0
    assert probe.counts() == (0, 0)


def test_stored_contracts_verify_after_reopening(
    store_url: str, settings: Settings, tocsin: Tocsin, probe: Probe
) -> None:
    tocsin.lanes.register([make_lane(probe)])
    probe.answer = lambda w: [
        Candidate("v1", inside(w.start, 10), {"lang": "zh"}),
        Candidate("v2", inside(w.start, 20), {"lang": "en"}),
    ]
    _scheduled(tocsin)
    _scheduled(tocsin)
    tocsin.lanes.trigger(LANE_ID, window=(A_START, B_END), now=B_END)
    tocsin.close()
    reopened = Tocsin.open(store_url, settings=settings)  # no lane registered: history only
    try:
        items = reopened.lanes.contracts(LANE_ID)["items"]
        assert len(items) == 3
        for item in items:
            assert reopened.lanes.verify(item["contract"])["attempt"] == item["attempt"]
            assert reopened.lanes.verify(item)["ok"] is True
        tampered: dict[str, Any] = dict(items[-1]["contract"])
        tampered["selection"] = {"accepted_refs": [], "rejected": tampered["selection"]["rejected"]}
        with pytest.raises(ContractMismatch) as caught:
            reopened.lanes.verify(tampered)
        assert caught.value.field == "source_observation.candidate_count"
    finally:
        reopened.close()
