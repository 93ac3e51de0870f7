"""SPEC §9.5: transient lock conflicts are retried inside the run (3 attempts, jittered backoff);
non-retryable errors fail at once; invoke_command retries reuse the same idempotency key."""

from __future__ import annotations

import sqlite3
from typing import Any

import pytest

from tocsin.errors import TransientStoreError
from tocsin.runs import worker as worker_module
from tocsin.service import Tocsin
from tocsin.store.commands import get_command_result

from .helpers import LATER, make_run, make_table, no_wait, read_run, trigger


def failing(t: Tocsin, exc: Exception, times: int) -> list[dict[str, Any]]:
    calls: list[dict[str, Any]] = []

    def fn(inputs: dict[str, Any]) -> str:
        calls.append(inputs)
        if len(calls) <= times:
            raise exc
        return "ok"

    t.register_command("cmd", fn)
    return calls


def one_run(t: Tocsin) -> dict[str, Any]:
    trg = trigger({"type": "invoke_command", "command": "cmd", "inputs": {"k": "$run.id"}})
    return make_run(t, make_table(t, trg), trg)


def test_two_conflicts_then_success_completes_the_run(tocsin: Tocsin) -> None:
    slept = no_wait(tocsin)
    calls = failing(tocsin, TransientStoreError("database is locked"), 2)
    run = one_run(tocsin)
    tocsin.work(now=LATER)
    done = read_run(tocsin, run["id"])
    assert done["status"] == "done" and done["attempts"] == 1
    assert len(calls) == 3
    assert slept == [0.05, 0.1]  # jitter(0, base × 2^(n-1)) with jitter → its upper bound
    with tocsin.store.read() as tx:
        stored = get_command_result(tx, key=f"tocsin-{run['id']}-act_1")
    assert stored is not None and stored.status == "succeeded"


def test_unmapped_driver_lock_errors_are_retried_too(tocsin: Tocsin) -> None:
    no_wait(tocsin)
    calls = failing(tocsin, sqlite3.OperationalError("database is locked"), 1)
    run = one_run(tocsin)
    tocsin.work(now=LATER)
    assert read_run(tocsin, run["id"])["status"] == "done" and len(calls) == 2


def test_three_conflicts_fail_the_run(tocsin: Tocsin) -> None:
    slept = no_wait(tocsin)
    calls = failing(tocsin, TransientStoreError("database is locked"), 3)
    run = one_run(tocsin)
    tocsin.work(now=LATER)
    failed = read_run(tocsin, run["id"])
    assert failed["status"] == "failed" and failed["error"] == "database is locked"
    assert len(calls) == 3 and len(slept) == 2
    with tocsin.store.read() as tx:  # the failed attempt released its reservation
        assert get_command_result(tx, key=f"tocsin-{run['id']}-act_1") is None


def test_non_retryable_errors_fail_at_once(tocsin: Tocsin) -> None:
    slept = no_wait(tocsin)
    calls = failing(tocsin, ValueError("bad input"), 1)
    run = one_run(tocsin)
    tocsin.work(now=LATER)
    failed = read_run(tocsin, run["id"])
    assert failed["status"] == "failed" and "bad input" in failed["error"]
    assert len(calls) == 1 and slept == []


def test_in_run_retries_reuse_the_same_idempotency_key(tocsin: Tocsin) -> None:
    no_wait(tocsin)
    keys: list[str] = []
    calls = failing(tocsin, TransientStoreError("deadlock detected"), 2)

    def spy(inputs: dict[str, Any]) -> str:
        with tocsin.store.read() as tx:
            row = get_command_result(tx, key=f"tocsin-{inputs['k']}-act_1")
        keys.append(row.idempotency_key if row else "")
        return str(len(calls))

    tocsin.register_command("spy", spy)
    trg = trigger(
        {"type": "invoke_command", "command": "cmd", "inputs": {"k": "$run.id"}},
        {"type": "invoke_command", "command": "spy", "inputs": {"k": "$run.id"}},
    )
    run = make_run(tocsin, make_table(tocsin, trg), trg)
    tocsin.work(now=LATER)
    assert read_run(tocsin, run["id"])["status"] == "done"
    assert keys == [f"tocsin-{run['id']}-act_1"]


def test_a_lock_conflict_while_storing_the_receipt_is_retried(
    tocsin: Tocsin, monkeypatch: pytest.MonkeyPatch
) -> None:
    no_wait(tocsin)
    calls = failing(tocsin, RuntimeError("never"), 0)
    real = worker_module.finish_runs
    conflicts: list[int] = []

    def flaky_finish(tx: Any, **kw: Any) -> set[str]:
        if not conflicts:
            conflicts.append(1)
            raise TransientStoreError("database is locked")
        return real(tx, **kw)

    monkeypatch.setattr(worker_module, "finish_runs", flaky_finish)
    run = one_run(tocsin)
    tocsin.work(now=LATER)
    done = read_run(tocsin, run["id"])
    assert done["status"] == "done" and conflicts == [1]
    assert len(calls) == 1  # the action itself ran once


def test_a_lock_conflict_while_claiming_is_retried(
    tocsin: Tocsin, monkeypatch: pytest.MonkeyPatch
) -> None:
    slept = no_wait(tocsin)
    real = worker_module.claim_scoped_runs
    conflicts: list[int] = []

    def flaky_claim(tx: Any, **kw: Any) -> Any:
        if not conflicts:
            conflicts.append(1)
            raise TransientStoreError("database is locked")
        return real(tx, **kw)

    monkeypatch.setattr(worker_module, "claim_scoped_runs", flaky_claim)
    calls = failing(tocsin, RuntimeError("never"), 0)
    run = one_run(tocsin)
    assert tocsin.work(now=LATER) == 1
    assert read_run(tocsin, run["id"])["status"] == "done"
    assert conflicts == [1] and len(slept) == 1 and len(calls) == 1
