"""SPEC §14 failure paths: a source that raises anything or answers garbage is a failed source
(``stopped / source_unavailable``, never a zero count); a raising policy fails the attempt with
no decision (retryable); attempts admitted by the tick wait for a process that registers the
lane."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from tocsin import Candidate, Tocsin

from .lane_support import A_END, A_START, LANE_ID, OBSERVED, Probe, inside, make_lane


@pytest.fixture
def probe() -> Probe:
    return Probe()


@pytest.fixture
def t(tocsin: Tocsin, probe: Probe) -> Tocsin:
    tocsin.lanes.register([make_lane(probe)])
    return tocsin


def _run(t: Tocsin) -> Any:
    return t.lanes.trigger(LANE_ID, window=(A_START, A_END), now=OBSERVED)


def _boom(window: Any) -> list[Candidate]:
    raise ConnectionError("connection refused")


@pytest.mark.parametrize(
    ("answer", "category"),
    [
        (_boom, "source_error"),
        (lambda w: None, "invalid_response"),
        (lambda w: ["not a candidate"], "invalid_response"),
        (lambda w: [Candidate("naive", A_START.replace(tzinfo=None))], "invalid_response"),
    ],
)
def test_a_broken_source_is_a_failed_source(
    t: Tocsin, probe: Probe, answer: Any, category: str
) -> None:
    probe.answer = answer
    got = _run(t)
    assert got["contract"]["source_observation"] == {
        "status": "failed",
        "candidate_count": None,
        "failure_category": category,
    }
    assert got["decision"] == {"status": "stopped", "reason": "source_unavailable"}
    assert got["error"]
    assert probe.counts() == (1, 0)
    t.lanes.verify(got["contract"])


def test_a_raising_policy_fails_the_attempt_without_a_decision(tocsin: Tocsin) -> None:
    probe = Probe()
    probe.answer = lambda w: [Candidate("v1", inside(w.start, 5), {"lang": "zh"})]
    lane = make_lane(probe)
    broken = type(lane)(
        id=lane.id,
        schedule=lane.schedule,
        policy_version=lane.policy_version,
        source=lane.source,
        select=lambda c: 1 / 0,
        handler=lane.handler,
    )
    tocsin.lanes.register([broken])
    got = tocsin.lanes.trigger(LANE_ID, window=(A_START, A_END), now=OBSERVED)
    assert (got["state"], got["contract"], got["decision"]) == ("failed", None, None)
    assert "ZeroDivisionError" in got["error"]
    assert probe.counts() == (1, 0)
    retried = tocsin.lanes.trigger(LANE_ID, kind="retry", run_id=got["run_id"], now=A_END)
    assert retried["attempt"] == 2 and retried["state"] == "failed"


def test_a_process_without_the_lane_leaves_its_attempts_pending(
    tocsin: Tocsin, store_url: str
) -> None:
    probe = Probe()
    tocsin.lanes.register([make_lane(probe)])
    tocsin.tick(now=A_START)
    assert tocsin.tick(now=OBSERVED)["lanes_fired"] == 1
    bare = Tocsin.open(store_url, settings=tocsin.settings)
    try:
        assert bare.work(now=OBSERVED) == 0
        (item,) = bare.lanes.contracts(LANE_ID)["items"]
        assert item["state"] == "pending"
    finally:
        bare.close()
    assert tocsin.work(now=OBSERVED + timedelta(seconds=1)) == 1
    assert probe.source_calls == 1


def test_a_stale_unfinished_run_can_be_retried_and_its_attempt_is_superseded(
    t: Tocsin, probe: Probe
) -> None:
    t.tick(now=A_START)
    assert t.tick(now=OBSERVED)["lanes_fired"] == 1  # admitted, never executed (a crash)
    (pending,) = t.lanes.contracts(LANE_ID)["items"]
    assert pending["scheduled_for"] == A_END and pending["contract"] is None
    early = t.lanes.trigger(LANE_ID, kind="retry", run_id=pending["run_id"], now=OBSERVED)
    assert early["decision"] == {"status": "ignored", "reason": "duplicate_trigger"}
    stale = OBSERVED + timedelta(seconds=t.settings.stuck_after_s + 1)
    # duplicates arriving meanwhile do not make the stalled run look fresh
    t.lanes.trigger(LANE_ID, kind="scheduled", scheduled_for=A_END, now=stale)
    retried = t.lanes.trigger(LANE_ID, kind="retry", run_id=pending["run_id"], now=stale)
    assert retried["attempt"] == 4
    assert retried["decision"] == {"status": "noop", "reason": "source_empty"}
    old = t.lanes.attempt(pending["attempt_id"])
    assert old["state"] == "failed" and "superseded by retry attempt 4" in old["error"]
    assert t.work(now=stale) == 0  # the superseded attempt is never executed
    assert probe.source_calls == 1
