"""One slow tenant does not stop the others. The worker process executes runs of
different tables side by side on a bounded pool, and a receiver that drips its answer costs
its own run its deadline, not everyone's (SPEC §8, §9; real receivers on 127.0.0.1)."""

from __future__ import annotations

import threading
from typing import Any

from support.waiting import wait_for
from tocsin.runs.pool import RunPool
from tocsin.runs.worker import serve_worker
from tocsin.service import Tocsin

from .helpers import make_run, make_table, read_run, trigger
from .slow_receivers import DripReceiver, FastReceiver

DEADLINE_S = 1.5
SLACK_S = 1.0
WAIT_S = 30.0


def start(t: Tocsin, stop: threading.Event, concurrency: int, out: list[bool]) -> threading.Thread:
    def loop() -> None:
        out.append(serve_worker(t, stop_event=stop, poll_interval=0.05, concurrency=concurrency))

    thread = threading.Thread(target=loop, daemon=True)
    thread.start()
    return thread


def finished(t: Tocsin, *runs: dict[str, Any]) -> bool:
    return all(read_run(t, r["id"])["status"] in ("done", "failed") for r in runs)


def test_a_dripping_receiver_costs_its_own_run_its_deadline_while_another_tenant_completes(
    tocsin: Tocsin,
) -> None:
    stop, result = threading.Event(), []
    with DripReceiver(every_s=0.5) as drip, FastReceiver() as fast:
        slow_trg = trigger({"type": "webhook", "url": drip.url, "timeout_s": DEADLINE_S})
        fast_trg = trigger({"type": "webhook", "url": fast.url})
        slow_table, fast_table = make_table(tocsin, slow_trg), make_table(tocsin, fast_trg)
        assert slow_table["scope_id"] != fast_table["scope_id"]  # two tenants
        slow = make_run(tocsin, slow_table, slow_trg)
        thread = start(tocsin, stop, concurrency=4, out=result)
        try:
            assert drip.arrived.wait(WAIT_S)  # the slow receiver holds the worker's request
            quick = make_run(tocsin, fast_table, fast_trg)  # another tenant's run arrives
            wait_for("both runs", lambda: finished(tocsin, slow, quick), timeout=WAIT_S, every=0.02)
        finally:
            stop.set()
            thread.join(WAIT_S)
        (exchange,) = drip.exchanges
    slow_after, quick_after = read_run(tocsin, slow["id"]), read_run(tocsin, quick["id"])
    assert quick_after["status"] == "done"
    assert slow_after["status"] == "failed" and "1.5 s deadline" in slow_after["error"]
    (receipt,) = slow_after["action_results"]
    assert receipt["ok"] is False and "ReadTimeout" in receipt["detail"]
    took = (slow_after["finished_at"] - slow_after["started_at"]).total_seconds()
    assert DEADLINE_S <= took < DEADLINE_S + SLACK_S  # its own deadline, not more
    # the other tenant was served while the slow receiver still held its connection
    (arrival,) = fast.arrivals
    assert exchange.left is not None and exchange.arrived < arrival < exchange.left
    assert quick_after["finished_at"] < slow_after["finished_at"]
    assert result == [True] and not thread.is_alive()


def test_the_pool_is_bounded_and_every_slow_run_still_ends_by_its_deadline(
    tocsin: Tocsin,
) -> None:
    """Five dripping runs through a pool of two: never more than two exchanges at once, each
    ended by its deadline, and the run of a fast tenant queued behind them still completes."""
    stop, result = threading.Event(), []
    with DripReceiver(every_s=0.3) as drip, FastReceiver() as fast:
        slow_trg = trigger({"type": "webhook", "url": drip.url, "timeout_s": 0.5})
        fast_trg = trigger({"type": "webhook", "url": fast.url})
        slow_table, fast_table = make_table(tocsin, slow_trg), make_table(tocsin, fast_trg)
        slows = [make_run(tocsin, slow_table, slow_trg) for _ in range(5)]
        quick = make_run(tocsin, fast_table, fast_trg)
        thread = start(tocsin, stop, concurrency=2, out=result)
        try:
            wait_for(
                "every run", lambda: finished(tocsin, *slows, quick), timeout=WAIT_S, every=0.02
            )
        finally:
            stop.set()
            thread.join(WAIT_S)
        assert drip.most_held == 2 and len(drip.exchanges) == 5
    assert [read_run(tocsin, r["id"])["status"] for r in slows] == ["failed"] * 5
    assert read_run(tocsin, quick["id"])["status"] == "done"
    assert result == [True]


def test_a_full_pool_runs_its_busy_beats_while_a_claimer_waits_for_a_slot() -> None:
    """``RunPool.on_busy``: each wait that finds every slot busy calls the beats (the latest
    per key), in the waiting thread; a failing beat is logged, never raised; a free slot skips
    them."""
    pool = RunPool(1)
    release = threading.Event()
    beats: list[str] = []
    pool.on_busy("a", lambda: beats.append("old"))
    pool.on_busy("a", lambda: beats.append(threading.current_thread().name))
    pool.on_busy("b", lambda: 1 / 0)
    assert pool.wait_for_slot(0.01)  # free: no beat
    assert beats == []
    pool.submit(lambda: release.wait(30))
    try:
        assert not pool.wait_for_slot(0.01)
        assert not pool.wait_for_slot(0.01)
    finally:
        release.set()
    assert beats == [threading.current_thread().name] * 2
    assert pool.wait_idle(30)
