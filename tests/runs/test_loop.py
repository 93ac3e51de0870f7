"""The worker loop (``tocsin worker``): drains, idles, survives failing passes, stops gracefully
without leaving a run ``running`` (SPEC §8, §9.1)."""

from __future__ import annotations

import threading
from datetime import datetime
from typing import Any

from support.waiting import wait_for
from tocsin.runs.worker import serve_worker
from tocsin.service import Tocsin

from .helpers import LATER, make_run, make_table, read_run, trigger
from .slow_receivers import DripReceiver

DEADLINE_S = 10.0


def start(t: Any, stop: threading.Event) -> threading.Thread:
    thread = threading.Thread(
        target=serve_worker,
        args=(t,),
        kwargs={"stop_event": stop, "poll_interval": 0.01, "clock": lambda: LATER},
        daemon=True,
    )
    thread.start()
    return thread


def test_loop_executes_runs_as_they_arrive_and_stops(tocsin: Tocsin) -> None:
    trg = trigger({"type": "notify", "message": "x"})
    table = make_table(tocsin, trg)
    stop = threading.Event()
    thread = start(tocsin, stop)
    runs = [make_run(tocsin, table, trg) for _ in range(3)]
    wait_for(
        "every run done",
        lambda: all(read_run(tocsin, r["id"])["status"] == "done" for r in runs),
        timeout=DEADLINE_S,
        every=0.01,
    )
    stop.set()
    thread.join(DEADLINE_S)
    assert not thread.is_alive()


def test_stop_mid_run_hands_the_run_back_to_pending(tocsin: Tocsin) -> None:
    stop = threading.Event()

    def slow_first(inputs: dict[str, Any]) -> str:
        stop.set()  # the operator asks to stop while this action is in flight
        return "finished anyway"

    tocsin.register_command("slow", slow_first)
    trg = trigger({"type": "invoke_command", "command": "slow"}, {"type": "notify", "message": "y"})
    run = make_run(tocsin, make_table(tocsin, trg), trg)
    thread = start(tocsin, stop)
    thread.join(DEADLINE_S)
    assert not thread.is_alive()
    back = read_run(tocsin, run["id"])
    assert back["status"] == "pending"
    assert [(r["action_id"], r["ok"]) for r in back["action_results"]] == [("act_1", True)]


class Flaky:
    """A work source whose first pass raises (the database went away)."""

    def __init__(self) -> None:
        self.calls: list[datetime | None] = []

    def work(
        self,
        now: datetime | None = None,
        limit: int | None = None,
        *,
        should_stop: Any = None,
        clock: Any = None,
        pool: Any = None,
    ) -> int:
        self.calls.append(clock())
        if len(self.calls) == 1:
            raise ConnectionError("database unavailable")
        return 0


def test_a_failing_pass_is_logged_and_retried(caplog: Any) -> None:
    source, stop = Flaky(), threading.Event()
    thread = start(source, stop)
    wait_for("three calls", lambda: len(source.calls) >= 3, timeout=DEADLINE_S, every=0.01)
    stop.set()
    thread.join(DEADLINE_S)
    assert source.calls[:3] == [LATER] * 3
    assert "worker pass failed" in caplog.text


def test_stop_during_a_dripping_action_hands_the_run_back_at_its_deadline(tocsin: Tocsin) -> None:
    """The stop cannot wait forever on a receiver that drips its answer; the action
    is abandoned at its deadline without a receipt and the run goes back to pending with the
    receipts of the actions before it."""
    stop, result = threading.Event(), []
    with DripReceiver(every_s=0.3) as drip:
        trg = trigger(
            {"type": "notify", "message": "first"},
            {"type": "webhook", "url": drip.url, "timeout_s": 1},
            {"type": "notify", "message": "never"},
        )
        run = make_run(tocsin, make_table(tocsin, trg), trg)
        thread = threading.Thread(
            target=lambda: result.append(
                serve_worker(tocsin, stop_event=stop, poll_interval=0.01, concurrency=2)
            ),
            daemon=True,
        )
        thread.start()
        assert drip.arrived.wait(DEADLINE_S)
        stop.set()
        thread.join(DEADLINE_S)
        (exchange,) = drip.exchanges
    assert result == [True] and not thread.is_alive()
    # the receiver notices the closed connection at its next drip (0.3 s): wait for it to see it
    wait_for("the exchange left", lambda: exchange.left is not None, timeout=DEADLINE_S, every=0.01)
    assert exchange.left is not None and exchange.left - exchange.arrived < 2.0
    back = read_run(tocsin, run["id"])
    assert back["status"] == "pending" and back["attempts"] == 1 and back["error"] is None
    assert [(r["action_id"], r["ok"]) for r in back["action_results"]] == [("act_1", True)]


def test_a_run_that_does_not_stop_in_time_is_reported(tocsin: Tocsin) -> None:
    """A command that never returns cannot be interrupted: the stop gives up after its timeout
    and says so (``tocsin worker`` then exits non-zero); the run stays running for the sweep."""
    stop, entered, release, result = threading.Event(), threading.Event(), threading.Event(), []

    def wedged(inputs: dict[str, Any]) -> str:
        entered.set()
        release.wait(DEADLINE_S)
        return "late"

    tocsin.register_command("wedged", wedged)
    trg = trigger({"type": "invoke_command", "command": "wedged"})
    run = make_run(tocsin, make_table(tocsin, trg), trg)
    thread = threading.Thread(
        target=lambda: result.append(
            serve_worker(tocsin, stop_event=stop, poll_interval=0.01, stop_timeout_s=0.2)
        ),
        daemon=True,
    )
    thread.start()
    try:
        assert entered.wait(DEADLINE_S)
        stop.set()
        thread.join(DEADLINE_S)
        assert result == [False]
        assert read_run(tocsin, run["id"])["status"] == "running"
    finally:
        release.set()
    wait_for(  # it did end, late
        "the run done",
        lambda: read_run(tocsin, run["id"])["status"] == "done",
        timeout=DEADLINE_S,
        every=0.01,
    )
