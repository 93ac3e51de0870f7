"""``max_concurrent`` on a workflow and on a schedule: never more of their runs running at once
than that, across claims (the one claim, ``store.runs.claim_scoped_runs``); a run past it stays
pending until one ends, then the next claim takes it."""

from __future__ import annotations

import threading
from datetime import timedelta
from typing import Any

import pytest
from pydantic import BaseModel

from tocsin import Schedule, StepContext, step, workflow
from tocsin.errors import ConfigError
from tocsin.runs.pool import RunPool
from tocsin.service import Tocsin

from .helpers import NOW


class Job(BaseModel):
    n: int


class Steps:
    """Each run's step blocks until the test opens its gate; ``running`` are the steps now in
    their body, ``peak`` the most at once."""

    def __init__(self) -> None:
        self.changed = threading.Condition()
        self.gates: dict[int, threading.Event] = {}
        self.running: set[int] = set()
        self.peak = 0

    def hold(self, n: int) -> None:
        with self.changed:
            self.running.add(n)
            self.peak = max(self.peak, len(self.running))
            self.changed.notify_all()
        assert self.gates.setdefault(n, threading.Event()).wait(30)
        with self.changed:
            self.running.discard(n)
            self.changed.notify_all()

    def until(self, probe: Any) -> None:
        with self.changed:
            assert self.changed.wait_for(probe, 30)


STEPS = Steps()


@step(id="held", input=Job, output=Job)
def held(data: Job, ctx: StepContext) -> Job:
    STEPS.hold(data.n)
    return data


def _count(tocsin: Tocsin, status: str) -> int:
    return int(tocsin.workflow_runs(status=status)["total"])


def test_a_workflow_with_max_concurrent_2_never_has_a_third_running(tocsin: Tocsin) -> None:
    global STEPS
    STEPS = Steps()
    tocsin.register_workflows(
        [workflow(id="two", input=Job, output=Job, max_concurrent=2).then(held).commit()]
    )
    for n in range(5):
        tocsin.start_workflow("two", {"n": n}, now=NOW, wait=False)
    pool = RunPool(8)
    try:
        assert tocsin.work(pool=pool, now=NOW) == 2  # the other 3 stay pending
        STEPS.until(lambda: len(STEPS.running) == 2)
        assert (_count(tocsin, "running"), _count(tocsin, "pending")) == (2, 3)
        assert tocsin.work(pool=pool, now=NOW) == 0  # no slot of the workflow's is free
        first = min(STEPS.running)
        STEPS.gates[first].set()  # one run ends: one slot frees
        STEPS.until(lambda: first not in STEPS.running)
        pool_wait(tocsin, lambda: _count(tocsin, "success") == 1)
        assert tocsin.work(pool=pool, now=NOW) == 1
        STEPS.until(lambda: len(STEPS.running) == 2)
        assert (_count(tocsin, "running"), _count(tocsin, "pending")) == (2, 2)
    finally:
        for n in range(5):
            STEPS.gates.setdefault(n, threading.Event()).set()
        assert pool.wait_idle(30)
    while tocsin.work(pool=pool, now=NOW):
        assert pool.wait_idle(30)
    assert _count(tocsin, "success") == 5
    assert STEPS.peak == 2


def test_without_a_pool_the_limit_holds_too(tocsin: Tocsin) -> None:
    """``work`` without a pool runs its claims one after the other: each claim takes no more
    than the room left (here every run ends before the next claim, so all of them run)."""
    global STEPS
    STEPS = Steps()
    for n in range(4):
        STEPS.gates[n] = threading.Event()
        STEPS.gates[n].set()
    tocsin.register_workflows(
        [workflow(id="one", input=Job, output=Job, max_concurrent=1).then(held).commit()]
    )
    for n in range(4):
        tocsin.start_workflow("one", {"n": n}, now=NOW, wait=False)
    assert tocsin.work(now=NOW) == 4
    assert STEPS.peak == 1 and _count(tocsin, "success") == 4


def pool_wait(tocsin: Tocsin, probe: Any) -> None:
    """Wait for a run a pool thread is finishing (its finish commits after its step returns)."""
    done = threading.Event()
    for _ in range(600):
        if probe():
            return
        done.wait(0.05)
    raise AssertionError("the run did not finish")


@pytest.mark.parametrize("value", [0, -1, True, 1.5, "2", 10_001])
def test_max_concurrent_must_be_a_whole_number_from_1(value: Any) -> None:
    with pytest.raises(ConfigError) as err:
        workflow(id="bad", input=Job, output=Job, max_concurrent=value)
    assert str(err.value) == (
        f"workflow 'bad': max_concurrent must be a whole number from 1 to 10000, got {value!r}"
    )
    with pytest.raises(ConfigError) as err:
        Schedule(cron="0 9 * * *", timezone="UTC", id="s", max_concurrent=value)
    assert "schedule 's': max_concurrent must be" in str(err.value)


def test_a_schedule_with_max_concurrent_1_runs_one_of_its_runs_at_a_time(tocsin: Tocsin) -> None:
    global STEPS
    STEPS = Steps()
    every_minute = Schedule(
        cron="* * * * *", timezone="UTC", overlap="allow", max_concurrent=1, input_data={"n": 0}
    )
    tocsin.register_workflows(
        [workflow(id="tick", input=Job, output=Job, schedule=every_minute).then(held).commit()]
    )
    for minute in range(4):  # the first syncs; then one fire a minute (overlap allowed)
        tocsin.tick(now=NOW + timedelta(minutes=minute, seconds=1))
    fired = _count(tocsin, "pending")
    assert fired >= 2
    tocsin.start_workflow("tick", {"n": 9}, now=NOW, wait=False)  # a manual run: not limited
    pool = RunPool(8)
    try:
        assert tocsin.work(pool=pool, now=NOW + timedelta(minutes=3)) == 2
        STEPS.until(lambda: len(STEPS.running) == 2)
        assert tocsin.work(pool=pool, now=NOW + timedelta(minutes=3)) == 0
        assert (_count(tocsin, "running"), _count(tocsin, "pending")) == (2, fired - 1)
    finally:
        for n in (0, 9):
            STEPS.gates.setdefault(n, threading.Event()).set()
        assert pool.wait_idle(30)
    while tocsin.work(pool=pool, now=NOW + timedelta(minutes=3)):
        assert pool.wait_idle(30)
    assert _count(tocsin, "success") == fired + 1
