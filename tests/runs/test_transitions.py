"""STYLE R6: every status change the execution side performs is one its state machine lists."""

from __future__ import annotations

import itertools
from datetime import timedelta
from typing import Any

from tocsin.core.model import RUN_TRANSITIONS, RunStatus
from tocsin.service import Tocsin
from tocsin.store import runs as store_runs
from tocsin.store.approvals import CHANGE_TRANSITIONS
from tocsin.store.runs import claim_run

from .helpers import LATER, NOW, STALE, make_run, make_table, read_run, trigger


def test_run_transitions_are_all_listed(tocsin: Tocsin) -> None:
    seen: list[tuple[str, str]] = []
    fails = {"left": 1}

    def once(inputs: dict[str, Any]) -> str:
        if fails["left"]:
            fails["left"] -= 1
            raise RuntimeError("first time fails")
        return "ok"

    tocsin.register_command("once", once)
    trg = trigger({"type": "invoke_command", "command": "once"})
    table = make_table(tocsin, trg)
    run = make_run(tocsin, table, trg)

    def observe(action: Any) -> None:
        before = read_run(tocsin, run["id"])["status"]
        action()
        seen.append((before, read_run(tocsin, run["id"])["status"]))

    observe(lambda: tocsin.retry_run(table["id"], run["id"], now=NOW))  # pending → pending
    observe(lambda: tocsin.work(now=LATER))  # pending → running → failed
    observe(lambda: tocsin.retry_run(table["id"], run["id"], now=LATER))  # failed → pending

    def claim() -> None:
        with tocsin.store.begin() as tx:
            claim_run(tx, run_id=run["id"], now=LATER)

    observe(claim)  # pending → running
    later = STALE + timedelta(seconds=60)
    observe(lambda: tocsin.requeue(now=later))  # running → pending
    observe(lambda: tocsin.work(now=later))  # → done
    assert seen == [
        ("pending", "pending"),
        ("pending", "failed"),
        ("failed", "pending"),
        ("pending", "running"),
        ("running", "pending"),
        ("pending", "done"),
    ]
    for before, after in seen:
        assert RunStatus(before).may_become(RunStatus(after)) or (before, after) in {
            ("pending", "failed"),
            ("pending", "done"),
        }  # these two pass through running inside one work() call
    assert RunStatus.PENDING.may_become(RunStatus.RUNNING)
    assert {RunStatus.DONE, RunStatus.FAILED} <= RUN_TRANSITIONS[RunStatus.RUNNING]
    assert RUN_TRANSITIONS[RunStatus.DONE] == frozenset()
    assert set(RUN_TRANSITIONS) == set(RunStatus)  # every status lists its moves
    assert store_runs.RUN_TRANSITIONS is RUN_TRANSITIONS  # the store checks the core one


def test_staged_change_transitions_are_all_listed() -> None:
    path = ["staged", "approved", "applying", "applied"]
    for before, after in itertools.pairwise(path):
        assert after in CHANGE_TRANSITIONS[before]
    assert "rejected" in CHANGE_TRANSITIONS["staged"]
    assert "approved" in CHANGE_TRANSITIONS["applying"]  # the sweep's requeue
    assert all(not CHANGE_TRANSITIONS[s] for s in ("applied", "failed", "rejected"))
