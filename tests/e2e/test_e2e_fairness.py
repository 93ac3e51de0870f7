"""One tenant's slow runs do not stall another tenant (``TOCSIN_MAX_RUNNING_PER_SCOPE``).

A real ``tocsin worker`` (8 threads; the default cap: 7 runs of one scope at once in the
process): tenant A holds 16 runs to a receiver that answers after 5 s; tenant B's one run, made
ready while A's fill the worker, reaches its receiver and is done within a second, on the thread
A's scope may not take.
"""

from __future__ import annotations

import signal
import subprocess
import time
import uuid
from pathlib import Path

import pytest

from support.net import LOCALHOST, Receiver
from support.processes import TOCSIN, stop, tocsin_env
from support.waiting import wait_for
from tocsin.service import Tocsin
from tocsin.settings import Settings

pytestmark = pytest.mark.slow

SLOW_S = 5.0
A_RUNS = 16
READY_WITHIN_S = 1.0


def tenant_table(tocsin: Tocsin, url: str) -> str:
    table = tocsin.create_table(
        scope="chatroom", scope_id=str(uuid.uuid4()), name="T", columns={"N": "text"}
    )
    hook = {"id": "hook", "type": "webhook", "url": url, "timeout_s": 60}
    tocsin.set_triggers(table["id"], [{"on": "created", "actions": [hook]}])
    return str(table["id"])


def test_a_tenant_holding_slow_runs_does_not_delay_another_tenants_ready_run(
    store_url: str, tmp_path: Path
) -> None:
    env = tocsin_env(store_url, outbound_allow=LOCALHOST, worker_concurrency="8")
    env.pop("TOCSIN_MAX_RUNNING_PER_SCOPE", None)  # the default: one thread less than 8
    tocsin = Tocsin.open(settings=Settings.from_environ(env))
    log = tmp_path / "worker.log"
    with log.open("wb") as out, Receiver(after_s=SLOW_S) as slow, Receiver() as fast:
        try:
            table_a, table_b = tenant_table(tocsin, slow.url), tenant_table(tocsin, fast.url)
            tocsin.insert_records(table_a, [{"N": str(i)} for i in range(A_RUNS)])
            proc = subprocess.Popen([TOCSIN, "worker"], env=env, stdout=out, stderr=out)
            try:
                wait_for(
                    "A's runs at the slow receiver", lambda: len(slow.arrivals) >= 7, every=0.02
                )
                ready = time.monotonic()
                tocsin.insert_records(table_b, [{"N": "b"}])  # B's run is ready now
                wait_for("B's run at its receiver", lambda: fast.arrivals, every=0.01)
                [run_b] = wait_for(
                    "B's run done",
                    lambda: [
                        r for r in tocsin.list_runs(table_b)["items"] if r["status"] == "done"
                    ],
                    every=0.02,
                )
                done = time.monotonic()
                held = len(slow.arrivals)
            finally:
                stop(proc, signal.SIGKILL)  # A's runs would hold a clean stop 5 s
        finally:
            tocsin.close()
    print(log.read_text())  # shown by pytest when the test fails
    assert fast.arrivals[0] - ready < READY_WITHIN_S
    assert done - ready < READY_WITHIN_S + 0.5  # done: one poll of the run list more
    assert held == 7  # A kept one thread free: 7 runs at the receiver, none answered yet
    assert run_b["error"] is None
