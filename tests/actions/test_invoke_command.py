"""SPEC §10, §9.5 invoke_command: registered callables, templated inputs, idempotency keys."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from runs.helpers import LATER, NOW, add_record, make_run, make_table, no_wait, read_run, trigger
from tocsin import messages
from tocsin.actions import invoke_command as invoke_module
from tocsin.errors import TransientStoreError
from tocsin.service import Tocsin
from tocsin.store.commands import complete_command, get_command_result, reserve_command


def recorder(t: Tocsin, name: str = "cmd") -> list[dict[str, Any]]:
    calls: list[dict[str, Any]] = []

    def fn(inputs: dict[str, Any]) -> dict[str, Any]:
        calls.append(inputs)
        return {"echo": inputs}

    t.register_command(name, fn)
    return calls


def command_run(
    t: Tocsin, inputs: dict[str, Any], row: dict[str, Any] | None = None
) -> dict[str, Any]:
    trg = trigger({"type": "invoke_command", "command": "cmd", "inputs": inputs})
    table = make_table(t, trg)
    record = (add_record(t, table["id"], row), row) if row is not None else None
    return make_run(t, table, trg, record=record)


def key_of(run: dict[str, Any]) -> str:
    return f"tocsin-{run['id']}-act_1"


def test_calls_the_command_with_rendered_inputs_and_stores_the_result(tocsin: Tocsin) -> None:
    calls = recorder(tocsin)
    run = command_run(
        tocsin,
        {"title": "$row.Title", "n": "$row.N", "run": "$run.id"},
        row={"Title": "Leak", "N": 4},
    )
    tocsin.work(now=LATER)
    assert calls == [{"title": "Leak", "n": 4, "run": run["id"]}]
    done = read_run(tocsin, run["id"])
    assert done["status"] == "done"
    assert done["action_results"][0]["detail"].startswith('command cmd returned: {"echo"')
    with tocsin.store.read() as tx:
        stored = get_command_result(tx, key=key_of(run))
    assert stored is not None and stored.status == "succeeded"
    assert stored.result == {"echo": calls[0]}


def test_a_key_that_already_succeeded_is_not_called_again(tocsin: Tocsin) -> None:
    calls = recorder(tocsin)
    run = command_run(tocsin, {})
    with tocsin.store.begin() as tx:  # a previous attempt called it, then crashed pre-receipt
        reserve_command(tx, key=key_of(run), command="cmd", now=NOW, stale_after_s=300)
        complete_command(tx, key=key_of(run), result={"from": "before"}, now=NOW)
    tocsin.work(now=LATER)
    done = read_run(tocsin, run["id"])
    assert done["status"] == "done" and calls == []
    assert (
        done["action_results"][0]["detail"] == 'command cmd already succeeded: {"from": "before"}'
    )


def test_a_live_reservation_of_another_attempt_is_not_called_concurrently(tocsin: Tocsin) -> None:
    slept = no_wait(tocsin)
    calls = recorder(tocsin)
    run = command_run(tocsin, {})
    with tocsin.store.begin() as tx:
        reserve_command(tx, key=key_of(run), command="cmd", now=NOW, stale_after_s=300)
    tocsin.work(now=LATER)
    failed = read_run(tocsin, run["id"])
    assert failed["status"] == "failed" and "held by another attempt" in failed["error"]
    assert calls == [] and len(slept) == 2  # retried in place, then given up


def test_a_stale_reservation_is_taken_over(tocsin: Tocsin) -> None:
    calls = recorder(tocsin)
    run = command_run(tocsin, {})
    with tocsin.store.begin() as tx:
        reserve_command(tx, key=key_of(run), command="cmd", now=NOW, stale_after_s=300)
    tocsin.work(now=NOW + timedelta(seconds=301))
    assert read_run(tocsin, run["id"])["status"] == "done" and len(calls) == 1


def test_a_failed_attempt_releases_the_key_for_the_moderator_retry(tocsin: Tocsin) -> None:
    attempts: list[int] = []

    def flaky(inputs: dict[str, Any]) -> str:
        attempts.append(1)
        if len(attempts) == 1:
            raise RuntimeError("upstream said no")
        return "yes"

    tocsin.register_command("cmd", flaky)
    run = command_run(tocsin, {})
    tocsin.work(now=LATER)
    failed = read_run(tocsin, run["id"])
    assert failed["error"] == "command cmd failed: RuntimeError: upstream said no"
    tocsin.retry_run(failed["table_id"], run["id"], now=LATER)
    tocsin.work(now=LATER)
    assert read_run(tocsin, run["id"])["status"] == "done" and len(attempts) == 2


def test_unregistered_command_fails(tocsin: Tocsin) -> None:
    run = command_run(tocsin, {})
    tocsin.work(now=LATER)
    assert read_run(tocsin, run["id"])["error"] == messages.command_not_registered("cmd")


def test_a_lock_conflict_storing_the_result_does_not_call_again_or_fail(
    tocsin: Tocsin, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The command ran; storing its result hit a lock conflict: the store is retried, the run is
    done and the command was called once (not failed as 'held by another attempt')."""
    calls = recorder(tocsin)
    conflicts: list[int] = []

    def flaky_complete(tx: Any, **kw: Any) -> None:
        if not conflicts:
            conflicts.append(1)
            raise TransientStoreError("database is locked")
        complete_command(tx, **kw)

    monkeypatch.setattr(invoke_module, "complete_command", flaky_complete)
    monkeypatch.setattr(invoke_module.time, "sleep", lambda s: None)
    run = command_run(tocsin, {"x": 1})
    tocsin.work(now=LATER)
    assert read_run(tocsin, run["id"])["status"] == "done"
    assert len(calls) == 1 and conflicts == [1]
    with tocsin.store.read() as tx:
        stored = get_command_result(tx, key=key_of(run))
        assert stored is not None and stored.status == "succeeded"
