"""SPEC §8, §9.2, §9.7 with real processes: a worker SIGKILLed between receipts loses nothing and
repeats nothing that has a receipt.

Each round: a run of three webhook actions to a real local HTTP server; a worker *process* runs
it. The receiver holds the request of action ``k+1`` (k random in 1..2), so the worker cannot get
past it; once the receipt of action k is stored the test waits a random 0–20 ms — the kill lands
anywhere between that receipt and action k+1's request in flight — and SIGKILLs the worker. The
receipts stored at the kill are exactly actions 1..k. After the stale window (``now`` is driven
forward explicitly), recovery — the moderator retry on even rounds, the tick's requeue sweep on
odd ones — hands the run to a worker that completes it. The receiver must have seen each action
exactly once: nothing with a stored receipt ran twice.
"""

from __future__ import annotations

import random
import time
from multiprocessing.process import BaseProcess
from typing import Any

from support.forkserver import FORKSERVER
from support.waiting import wait_for
from tocsin.service import Tocsin

from . import crash_worker
from .helpers import NOW, STALE, make_run, make_table, read_run, trigger
from .receiver import Receiver

ROUNDS = 20
DEADLINE_S = 15.0
IN_FLIGHT_S = 0.2  # how long a request written before the kill may take to reach the receiver


def spawn_worker(url: str) -> BaseProcess:
    worker = FORKSERVER.Process(target=crash_worker.main, args=(url, NOW.isoformat()), daemon=True)
    worker.start()
    return worker


def ok_receipts(t: Tocsin, run_id: str) -> list[str]:
    return [r["action_id"] for r in read_run(t, run_id)["action_results"] if r["ok"]]


def recover(t: Tocsin, run: dict[str, Any], round_no: int) -> None:
    if round_no % 2 == 0:
        t.retry_run(run["table_id"], run["id"], now=STALE)
    else:
        assert t.tick(now=STALE)["trigger_runs_requeued"] == 1
    assert t.work(now=STALE) == 1


def crash_round(t: Tocsin, url: str, rx: Receiver, table: dict[str, Any], round_no: int) -> None:
    trg = table["triggers"][0]
    run = make_run(t, table, trg)
    keys = [f"tocsin-{run['id']}-{a['id']}" for a in trg["actions"]]
    k = random.randint(1, 2)
    rx.gate(keys[k])
    worker = spawn_worker(url)
    try:
        wait_for(
            f"receipt {k} (exit {worker.exitcode})",
            lambda: len(ok_receipts(t, run["id"])) >= k,
            timeout=DEADLINE_S,
            every=0.002,
        )
        time.sleep(random.uniform(0.0, 0.02))  # a random point before action k+1 can complete
        worker.kill()  # SIGKILL
        worker.join(DEADLINE_S)
        assert worker.exitcode == -9  # killed, not ended
    finally:
        if worker.exitcode is None:
            worker.kill()
            worker.join(DEADLINE_S)
        worker.close()
        # a request the worker wrote just before the kill may still sit in the server's socket:
        # let it reach the gate (which swallows it) before the gate is lifted, or it is read
        # afterwards and counted as a delivery nobody made (seen once in CI)
        rx.arrived.wait(IN_FLIGHT_S)
        rx.release.set()
        rx.gate(None)
    assert ok_receipts(t, run["id"]) == [a["id"] for a in trg["actions"][:k]]  # stored at the kill
    assert read_run(t, run["id"])["status"] == "running"  # the crash left it running
    recover(t, run, round_no)
    done = read_run(t, run["id"])
    assert done["status"] == "done", done
    assert [rx.deliveries[key] for key in keys] == [1, 1, 1], (k, rx.deliveries)


def test_sigkilled_worker_resumes_without_repeating_receipted_actions(
    tocsin: Tocsin, store_url: str
) -> None:
    with Receiver() as rx:
        hooks = [{"type": "webhook", "url": rx.url} for _ in range(3)]
        table = make_table(tocsin, trigger(*hooks))
        for round_no in range(ROUNDS):
            crash_round(tocsin, store_url, rx, table, round_no)
