"""A lane's ``retry`` and ``on_failure`` (SQLite and PostgreSQL), time driven by ``now=``: a
handler failing once is retried by a new attempt that waits for its ``next_attempt_at``; the
failed attempt's contract is unchanged and both verify."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from tocsin import Candidate, Lane, NonRetryable, Tocsin

from .lane_support import A_END, A_START, LANE_ID, OBSERVED, Probe, inside, policy


def _lane(probe: Probe, **options: Any) -> Lane:
    return Lane(
        id=LANE_ID,
        timezone="Asia/Taipei",
        policy_version="policy-v1",
        source=probe.fetch,
        select=policy,
        handler=probe.handle,
        **options,
    )


class FailsOnce(Probe):
    def handle(self, accepted: list[Candidate], contract: dict[str, Any]) -> None:
        self.fail_handler = self.handler_calls == 0
        super().handle(accepted, contract)


def test_a_handler_failing_once_is_retried(tocsin: Tocsin) -> None:
    probe = FailsOnce(answer=lambda w: [Candidate("v1", inside(A_START, 10), {"lang": "zh"})])
    tocsin.lanes.register(
        [_lane(probe, retry={"max_attempts": 3, "backoff_s": 30, "jitter": False})]
    )
    first = tocsin.lanes.trigger(LANE_ID, window=(A_START, A_END), now=OBSERVED)
    assert first["handler"] == {"status": "failed", "error": "RuntimeError: downstream refused"}
    (retry, same) = tocsin.lanes.contracts(LANE_ID)["items"]
    assert same["attempt_id"] == first["attempt_id"] and same["contract"] == first["contract"]
    assert retry["state"] == "pending" and retry["kind"] == "retry" and retry["attempt"] == 2
    assert retry["next_attempt_at"] == OBSERVED + timedelta(seconds=30)
    assert tocsin.lanes.work(OBSERVED + timedelta(seconds=29)) == 0
    assert tocsin.lanes.work(OBSERVED + timedelta(seconds=30)) == 1
    items = tocsin.lanes.contracts(LANE_ID)["items"]
    done = next(i for i in items if i["attempt"] == 2)
    assert done["handler"] == {"status": "succeeded", "error": None}
    assert done["contract"]["trigger"]["kind"] == "retry"
    assert done["contract"]["selection"] == first["contract"]["selection"]
    assert next(i for i in items if i["attempt"] == 1)["contract"] == first["contract"]
    tocsin.lanes.verify(first["contract"])
    tocsin.lanes.verify(done)
    assert probe.counts() == (2, 2) and probe.handled == [["v1"], ["v1"]]


def test_a_lane_fails_for_good_then_alerts_once(tocsin: Tocsin) -> None:
    probe = Probe(answer=lambda w: [Candidate("v1", inside(A_START, 10), {"lang": "zh"})])
    probe.fail_handler = True
    seen: list[dict[str, Any]] = []
    lane = _lane(probe, retry={"max_attempts": 2, "backoff_s": 10}, on_failure=seen.append)
    tocsin.lanes.register([lane])
    tocsin.lanes.trigger(LANE_ID, window=(A_START, A_END), now=OBSERVED)
    assert seen == []  # the attempt is retried: nobody is alerted
    tocsin.lanes.work(OBSERVED + timedelta(hours=1))
    assert [(a["attempt"], a["handler"]["status"]) for a in seen] == [(2, "failed")]
    last = next(i for i in tocsin.lanes.contracts(LANE_ID)["items"] if i["attempt"] == 2)
    assert last["alert"]["status"] == "sent"
    assert tocsin.lanes.work(OBSERVED + timedelta(days=1)) == 0  # attempts spent


def test_non_retryable_handler_fails_at_once(tocsin: Tocsin) -> None:
    class Refuses(Probe):
        def handle(self, accepted: list[Candidate], contract: dict[str, Any]) -> None:
            raise NonRetryable("schema changed")

    probe = Refuses(answer=lambda w: [Candidate("v1", inside(A_START, 10), {"lang": "zh"})])
    tocsin.lanes.register([_lane(probe, retry={"max_attempts": 3})])
    got = tocsin.lanes.trigger(LANE_ID, window=(A_START, A_END), now=OBSERVED)
    assert got["handler"] == {"status": "failed", "error": "NonRetryable: schema changed"}
    assert [i["attempt"] for i in tocsin.lanes.contracts(LANE_ID)["items"]] == [1]
