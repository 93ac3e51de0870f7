"""The worker loop (``tocsin worker``): drains, idles, survives failing passes, stops gracefully
without leaving a run ``running`` (SPEC §8, §9.1)."""

from __future__ import annotations

import threading
import time
from datetime import datetime
from typing import Any

from tocsin.runs.worker import serve_worker
from tocsin.service import Tocsin

from .helpers import LATER, make_run, make_table, read_run, trigger

DEADLINE_S = 10.0


def wait_for(predicate: Any) -> None:
    end = time.monotonic() + DEADLINE_S
    while not predicate():
        assert time.monotonic() < end, "timed out"
        time.sleep(0.01)


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
    wait_for(lambda: all(read_run(tocsin, r["id"])["status"] == "done" for r in runs))
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
    ) -> int:
        self.calls.append(clock())
        if len(self.calls) == 1:
            raise ConnectionError("database unavailable")
        return 0


def test_a_failing_pass_is_logged_and_retried(caplog: Any) -> None:
    source, stop = Flaky(), threading.Event()
    thread = start(source, stop)
    wait_for(lambda: len(source.calls) >= 3)
    stop.set()
    thread.join(DEADLINE_S)
    assert source.calls[:3] == [LATER] * 3
    assert "worker pass failed" in caplog.text
