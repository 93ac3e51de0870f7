"""Graceful stop: SIGTERM while an outbound action is wedged on a receiver that drips its answer.

``tocsin serve`` (embedded worker) and ``tocsin worker`` as real processes: the stop abandons
the action at its deadline, leaves the run ``pending`` with the receipts of the actions before
it, and exits 0 with no traceback (it used to wait 60 s, crash its log call with
``KeyError: "Attempt to overwrite 'thread' in LogRecord"``, leave the run ``running`` and still
exit 0).
"""

from __future__ import annotations

import signal
import subprocess
import time
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest

from runs.slow_receivers import DripReceiver, FastReceiver
from support.processes import TOCSIN, ServedProcess, create_token, serving
from tocsin.service import Tocsin
from tocsin.settings import Settings

pytestmark = pytest.mark.slow

WAIT_S = 45.0
BAD_WORDS = ("Traceback", "KeyError", "shutdown failed", "did not stop", "uncleanly")


def actions(fast: FastReceiver, drip: DripReceiver, **wedged: Any) -> list[dict[str, Any]]:
    return [
        {"id": "fast", "type": "webhook", "url": fast.url},
        {"id": "wedged", "type": "webhook", "url": drip.url, **wedged},
        {"id": "after", "type": "notify", "message": "never reached"},
    ]


def sigterm(proc: ServedProcess, log: Path) -> tuple[int, float, str]:
    """SIGTERM; the exit code, how long the process took to exit, and what it logged."""
    start = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    try:
        code = proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return code, time.monotonic() - start, log.read_text()


def assert_handed_back(env: dict[str, str], table_id: str) -> None:
    tocsin = Tocsin.open(settings=Settings.from_environ(env))
    try:
        (run,) = tocsin.list_runs(table_id)["items"]
    finally:
        tocsin.close()
    assert run["status"] == "pending" and run["error"] is None
    assert [(r["action_id"], r["ok"]) for r in run["action_results"]] == [("fast", True)]


def test_sigterm_to_serve_during_a_dripping_action(env: dict[str, str], tmp_path: Path) -> None:
    log = tmp_path / "serve.log"  # where ``serving`` logs
    with (
        DripReceiver(every_s=0.5) as drip,
        FastReceiver() as fast,
        serving(env, tmp_path, then=signal.SIGKILL) as (proc, base),
    ):
        scope = str(uuid.uuid4())
        token = create_token(env, scope)
        prefix = f"{base}/private/module/custom_tables/chatroom/{scope}"
        trigger = {"on": "created", "actions": actions(fast, drip, timeout_s=3)}
        with httpx.Client(headers={"Authorization": f"Bearer {token}"}, timeout=10) as http:
            table = http.post(f"{prefix}/tables", json={"name": "T", "columns": {"N": "text"}})
            table_id = table.json()["id"]
            url = f"{prefix}/tables/{table_id}"
            saved = http.put(f"{url}/triggers", json={"triggers": [trigger]})
            assert saved.status_code == 200, saved.text
            created = http.post(f"{url}/records", json={"data": {"N": "x"}})
            assert created.status_code == 201, created.text
        assert drip.arrived.wait(WAIT_S), "the dripping receiver was never called"
        code, took, logged = sigterm(proc, log)
    assert code == 0
    assert took < 3 + 10  # the action's deadline, then the shutdown itself
    assert not [word for word in BAD_WORDS if word in logged]
    assert fast.arrivals  # the first action was delivered, its receipt kept
    assert_handed_back(env, table_id)


def test_sigterm_to_worker_during_a_dripping_action(env: dict[str, str], tmp_path: Path) -> None:
    env = {**env, "TOCSIN_ACTION_TIMEOUT_S": "2"}  # the default deadline, no timeout_s here
    log = tmp_path / "worker.log"
    with log.open("wb") as out, DripReceiver(every_s=0.5) as drip, FastReceiver() as fast:
        tocsin = Tocsin.open(settings=Settings.from_environ(env))
        try:
            table = tocsin.create_table(
                scope="chatroom", scope_id=str(uuid.uuid4()), name="T", columns={"N": "text"}
            )
            tocsin.set_triggers(table["id"], [{"on": "created", "actions": actions(fast, drip)}])
            tocsin.insert_records(table["id"], [{"N": "x"}])
        finally:
            tocsin.close()
        proc = subprocess.Popen([TOCSIN, "worker"], env=env, stdout=out, stderr=subprocess.STDOUT)
        try:
            assert drip.arrived.wait(WAIT_S), "the dripping receiver was never called"
            code, took, logged = sigterm(proc, log)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    print(logged)
    assert code == 0
    assert took < 2 + 10
    assert not [word for word in BAD_WORDS if word in logged]
    assert_handed_back(env, table["id"])
