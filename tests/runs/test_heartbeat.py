"""SPEC §8, §9.7: a worker pass that takes long keeps its runs fresh, so the tick's sweep
requeues only runs whose worker really stopped; a run requeued while it waited in a claimed
batch is dropped before any of its actions runs (another worker owns it now).

The worker reads ``clock`` before each claim and each action (``Tocsin.work(clock=…)``, as
``tocsin worker`` does). Each webhook delivery here moves that clock forward and runs a tick
mid-pass; the receiver counts deliveries per ``Idempotency-Key``.
"""

from __future__ import annotations

from collections import Counter
from datetime import datetime, timedelta
from typing import Any

import httpx

from tocsin.service import Tocsin

from .helpers import NOW, make_run, make_table, read_run, trigger


class SlowReceiver:
    """A clock the test moves, and a webhook receiver that takes time and ticks mid-pass."""

    def __init__(self, t: Tocsin, *steps_s: int) -> None:
        self.t, self.now, self.steps = t, NOW, list(steps_s)
        self.deliveries: Counter[str] = Counter()
        self.requeued: list[int] = []
        t.configure_outbound(
            transport=httpx.MockTransport(self.receive), resolve=lambda host: ["93.184.216.34"]
        )

    def read(self) -> datetime:
        return self.now

    def receive(self, request: httpx.Request) -> httpx.Response:
        self.deliveries[request.headers["Idempotency-Key"]] += 1
        self.now += timedelta(seconds=self.steps.pop(0) if self.steps else 1)
        self.requeued.append(self.t.tick(now=self.now)["trigger_runs_requeued"])
        return httpx.Response(200)

    def count(self, run: dict[str, Any]) -> int:
        return self.deliveries[f"tocsin-{run['id']}-act_1"]


def two_runs(t: Tocsin) -> tuple[dict[str, Any], dict[str, Any]]:
    trg = trigger({"type": "webhook", "url": "https://hooks.example/in"})
    table = make_table(t, trg)
    return make_run(t, table, trg), make_run(t, table, trg, now=NOW + timedelta(seconds=1))


def test_a_long_pass_keeps_its_runs_fresh(tocsin: Tocsin) -> None:
    rx = SlowReceiver(tocsin, 200, 200)  # 200 s per delivery: the pass outlasts the 300 s window
    first, second = two_runs(tocsin)
    assert tocsin.work(clock=rx.read) == 2
    assert rx.requeued == [0, 0]  # nothing looked stale to the ticks mid-pass
    for run in (first, second):
        assert read_run(tocsin, run["id"])["status"] == "done"
        assert rx.count(run) == 1
    assert read_run(tocsin, second["id"])["started_at"] == NOW  # claimed with the first


def test_a_run_requeued_while_it_waited_is_dropped_before_its_actions(tocsin: Tocsin) -> None:
    rx = SlowReceiver(tocsin, 400)  # the first delivery alone outlives the stale window
    first, second = two_runs(tocsin)
    tocsin.work(clock=rx.read)  # the pass goes on: both runs are claimed again, and end
    assert rx.requeued[0] == 2  # both runs looked dead: requeued to pending
    for run in (first, second):
        assert read_run(tocsin, run["id"])["status"] == "done"
    assert rx.count(first) == 2  # in flight past the window: sent again (same key)
    assert rx.count(second) == 1  # dropped while it waited, then sent once
