"""Shared pieces of the lane tests: the seed's fixed windows, a counting source and handler."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from tocsin import Candidate, Lane, Schedule, SourceUnavailable
from tocsin.core.contract.lane import Window

TPE = ZoneInfo("Asia/Taipei")
LANE_ID = "content-intake"
A_START = datetime(2026, 9, 7, 22, 0, tzinfo=TPE)
A_END = B_START = datetime(2026, 9, 8, 7, 30, tzinfo=TPE)
B_END = datetime(2026, 9, 8, 22, 0, tzinfo=TPE)
OBSERVED = A_END + timedelta(seconds=5)

# the "source empty" contract exactly as the seed (trigger-contract-blog) saved it
SEED_CONTRACT = """{
"schema_version": "trigger-contract.v1",
"lane_id": "content-intake",
"trigger": {
"kind": "scheduled",
"scheduled_for": "2026-09-08T07:30:00+08:00",
"observed_at": "2026-09-08T07:30:05+08:00"
},
"window": {
"start_inclusive": "2026-09-07T22:00:00+08:00",
"end_exclusive": "2026-09-08T07:30:00+08:00"
},
"selection_policy_version": "policy-v1",
"run_id": "run_a860db97e33115dfb9030fc9986dd88c",
"attempt_id": "attempt_9b92c6df2d1d4da4125b6de15d118f7f",
"source_observation": { "status": "responded", "candidate_count": 0 },
"selection": { "accepted_refs": [], "rejected": [] },
"decision": { "status": "noop", "reason": "source_empty" }
}"""


def inside(start: datetime, minutes: int) -> datetime:
    return start + timedelta(minutes=minutes)


@dataclass
class Probe:
    """The source and the handler of one lane, counting their calls."""

    answer: Callable[[Window], Sequence[Candidate]] = lambda w: []
    source_calls: int = 0
    handler_calls: int = 0
    handled: list[list[str]] = field(default_factory=list)
    contracts: list[dict[str, Any]] = field(default_factory=list)
    fail_handler: bool = False

    def fetch(self, window: Window, ctx: object) -> Sequence[Candidate]:
        self.source_calls += 1
        return self.answer(window)

    def handle(self, accepted: list[Candidate], contract: dict[str, Any]) -> None:
        self.handler_calls += 1
        self.handled.append([c.ref for c in accepted])
        self.contracts.append(contract)
        if self.fail_handler:
            raise RuntimeError("downstream refused")

    def counts(self) -> tuple[int, int]:
        return self.source_calls, self.handler_calls


def policy(c: Candidate) -> bool:
    """policy-v1: only candidates whose data says ``{"lang": "zh"}``."""
    return isinstance(c.data, dict) and c.data.get("lang") == "zh"


def make_lane(
    probe: Probe,
    *,
    version: str = "policy-v1",
    schedule: Schedule | None = None,
    lane_id: str = LANE_ID,
) -> Lane:
    return Lane(
        id=lane_id,
        schedule=schedule or Schedule(cron="30 7 * * *", timezone="Asia/Taipei"),
        policy_version=version,
        source=probe.fetch,
        select=policy,
        handler=probe.handle,
    )


def unavailable(category: str = "timeout") -> Callable[[Window], Sequence[Candidate]]:
    def answer(window: Window) -> Sequence[Candidate]:
        raise SourceUnavailable(category)

    return answer
