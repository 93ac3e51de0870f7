"""The one lease of the one worker (``runs.leases``): under ``tocsin worker``'s pool, the claimer
stamps every run its slots hold, of any kind, so the stale sweep never hands a run that
progresses to another worker (SQLite and PostgreSQL). The workflow runs' case is in
``tests/workflows/test_work_batches.py``; here a table run in a command that outlasts
``TOCSIN_STUCK_AFTER_S`` (300 s) of the worker's clock."""

from __future__ import annotations

import threading
from datetime import timedelta
from typing import Any

from support.waiting import wait_for
from tocsin.runs.worker import serve_worker
from tocsin.service import Tocsin

from .helpers import NOW, make_run, make_table, read_run, trigger


def test_a_pool_renews_a_table_run_in_a_long_command_so_the_sweep_never_takes_it(
    tocsin: Tocsin,
) -> None:
    elapsed, calls, seen = [0.0], [], {}
    clock = lambda: NOW + timedelta(seconds=elapsed[0])  # noqa: E731
    later = NOW + timedelta(seconds=400)
    trg = trigger({"type": "invoke_command", "command": "long"})
    table = make_table(tocsin, trg)
    run = make_run(tocsin, table, trg)

    def long(inputs: dict[str, Any]) -> str:
        calls.append(inputs)
        elapsed[0] += 400.0  # the command takes 400 s of the worker's clock
        renewed = lambda: read_run(tocsin, run["id"])["updated_at"] >= later  # noqa: E731
        wait_for("the claimer's renewal", renewed)
        seen["requeued"] = tocsin.tick(now=clock())["trigger_runs_requeued"]
        return "done"

    tocsin.register_command("long", long)
    stop = threading.Event()
    loop = threading.Thread(
        target=serve_worker,
        args=(tocsin,),
        kwargs={"stop_event": stop, "poll_interval": 0.01, "clock": clock, "concurrency": 2},
    )
    loop.start()
    try:
        wait_for("the run's finish", lambda: read_run(tocsin, run["id"])["status"] == "done")
    finally:
        stop.set()
        loop.join(30)
    assert seen == {"requeued": 0}
    assert len(calls) == 1  # the command ran once
    assert read_run(tocsin, run["id"])["attempts"] == 1
