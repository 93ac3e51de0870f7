"""SPEC §14 with real concurrency: two processes' facades (separate engines and connections, on
threads) trigger the same scheduled run at once → one proceeds, the other is
``ignored / duplicate_trigger``, and their attempt numbers are distinct. Also two ticks at once
admit a scheduled instant once (the occurrence ledger)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from lanes.lane_support import A_END, A_START, LANE_ID, OBSERVED, Probe, make_lane
from tocsin import Tocsin
from tocsin.settings import Settings

ROUNDS = 5
TESTS = Path(__file__).resolve().parents[1]


def _twice(store_url: str, settings: Settings, call: Callable[[Tocsin], Any]) -> list[Any]:
    probe = Probe()
    facades = [Tocsin.open(store_url, settings=settings) for _ in range(2)]
    for t in facades:
        t.lanes.register([make_lane(probe)])
    gate = threading.Barrier(2)

    def run(t: Tocsin) -> Any:
        gate.wait(timeout=30)
        return call(t)

    try:
        with ThreadPoolExecutor(max_workers=2) as pool:
            results = list(pool.map(run, facades))
    finally:
        for t in facades:
            t.close()
    return [probe.source_calls, *results]


def test_two_processes_trigger_the_same_scheduled_run(
    backend: str, store_url: str, settings: Settings, tocsin: Tocsin
) -> None:
    for day in range(ROUNDS):
        end = A_END + timedelta(days=day)
        start = A_START + timedelta(days=day)

        def trigger(t: Tocsin, start: Any = start, end: Any = end) -> Any:
            return t.lanes.trigger(
                LANE_ID, window=(start, end), kind="scheduled", scheduled_for=end, now=end
            )

        calls, first, second = _twice(store_url, settings, trigger)
        decisions = sorted([first["decision"]["status"], second["decision"]["status"]])
        assert decisions == ["ignored", "noop"], (day, first, second)
        assert calls == 1
        assert first["run_id"] == second["run_id"]
        assert {first["attempt"], second["attempt"]} == {1, 2}
        assert first["attempt_id"] != second["attempt_id"]
        ignored = first if first["decision"]["status"] == "ignored" else second
        assert ignored["decision"]["reason"] == "duplicate_trigger"
    assert tocsin.lanes.contracts(LANE_ID, limit=100)["total"] == 2 * ROUNDS


def test_two_ticks_admit_a_scheduled_instant_once(
    backend: str, store_url: str, settings: Settings, tocsin: Tocsin
) -> None:
    probe = Probe()
    tocsin.lanes.register([make_lane(probe)])
    tocsin.tick(now=A_START)  # anchors the lane: next instant 2026-09-08 07:30 +08:00
    counts = _twice(store_url, settings, lambda t: t.tick(now=OBSERVED)["lanes_fired"])
    assert sorted(counts[1:]) == [0, 1]
    assert tocsin.work(now=OBSERVED) == 1
    items = tocsin.lanes.contracts(LANE_ID)["items"]
    assert len(items) == 1
    assert items[0]["contract"]["trigger"]["kind"] == "scheduled"
    assert probe.source_calls == 1


def _spawn(store_url: str, due: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(TESTS), *sys.path])}
    return subprocess.Popen(
        [sys.executable, "-m", "lanes.race_trigger", store_url, due],
        env=env,
        cwd=TESTS,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        bufsize=1,
    )


@pytest.mark.pg
@pytest.mark.parametrize("backend", ["postgresql"])  # PostgreSQL only: overrides the matrix
def test_two_os_processes_trigger_the_same_scheduled_run(tocsin: Tocsin, store_url: str) -> None:
    for day in range(3):
        due = (A_END + timedelta(days=day)).isoformat()
        procs = [_spawn(store_url, due) for _ in range(2)]
        try:
            for proc in procs:
                assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
            for proc in procs:  # both are connected and waiting: release them together
                assert proc.stdin is not None
                proc.stdin.write("go\n")
                proc.stdin.flush()
            out = [json.loads(p.communicate(timeout=60)[0]) for p in procs]
        finally:
            for proc in procs:
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()
        assert sorted(o["decision"]["status"] for o in out) == ["ignored", "noop"], out
        assert {o["attempt"] for o in out} == {1, 2}
        assert out[0]["run_id"] == out[1]["run_id"]
        assert sum(o["source_calls"] for o in out) == 1
    assert tocsin.lanes.contracts(LANE_ID)["total"] == 6
