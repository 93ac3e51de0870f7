"""SPEC §9.2–§9.4: moderator retry — who may retry, the 409/404 texts, resume by action_id."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from tocsin import messages
from tocsin.errors import Conflict, NotFound
from tocsin.runs import retry as retry_module
from tocsin.service import Tocsin
from tocsin.store.runs import claim_run, save_receipt

from .helpers import LATER, NOW, STALE, make_run, make_table, read_run, set_triggers, trigger

INTERVAL = {"type": "interval", "every_seconds": 60}


def flaky(t: Tocsin, name: str, fail_times: int) -> list[dict[str, Any]]:
    """A command that raises ``fail_times`` times, then succeeds; returns its call log."""
    calls: list[dict[str, Any]] = []

    def fn(inputs: dict[str, Any]) -> str:
        calls.append(inputs)
        if len(calls) <= fail_times:
            raise RuntimeError(f"{name} failed #{len(calls)}")
        return "ok"

    t.register_command(name, fn)
    return calls


def cmd(name: str) -> dict[str, Any]:
    return {"type": "invoke_command", "command": name}


def test_retry_resumes_at_the_first_unsuccessful_action(tocsin: Tocsin) -> None:
    a, b, c = flaky(tocsin, "a", 0), flaky(tocsin, "b", 1), flaky(tocsin, "c", 0)
    trg = trigger(cmd("a"), cmd("b"), cmd("c"))
    table = make_table(tocsin, trg)
    run = make_run(tocsin, table, trg)
    tocsin.work(now=LATER)
    failed = read_run(tocsin, run["id"])
    assert (
        failed["status"] == "failed"
        and failed["error"] == "command b failed: RuntimeError: b failed #1"
    )
    reset = tocsin.retry_run(table["id"], run["id"], now=LATER)
    assert reset["status"] == "pending" and reset["error"] is None
    tocsin.work(now=LATER)
    done = read_run(tocsin, run["id"])
    assert done["status"] == "done" and done["attempts"] == 2
    assert (len(a), len(b), len(c)) == (1, 2, 1)
    assert [(r["action_id"], r["ok"]) for r in done["action_results"]] == [
        ("act_1", True),
        ("act_2", True),
        ("act_3", True),
    ]


def test_resume_matches_by_action_id_not_position(tocsin: Tocsin) -> None:
    a, b = flaky(tocsin, "a", 0), flaky(tocsin, "b", 1)
    trg = trigger(cmd("a"), cmd("b"))
    table = make_table(tocsin, trg)
    run = make_run(tocsin, table, trg)
    tocsin.work(now=LATER)
    new = flaky(tocsin, "new", 0)
    reordered = [{"id": "act_new", **cmd("new")}, trg["actions"][1], trg["actions"][0]]
    set_triggers(tocsin, table["id"], {**trg, "actions": reordered})
    tocsin.retry_run(table["id"], run["id"], now=LATER)
    tocsin.work(now=LATER)
    assert read_run(tocsin, run["id"])["status"] == "done"
    assert (len(new), len(b), len(a)) == (1, 2, 1)  # act_1 kept its receipt after moving


def test_legacy_receipts_without_ids_resume_by_position(tocsin: Tocsin) -> None:
    a, b = flaky(tocsin, "a", 0), flaky(tocsin, "b", 0)
    trg = trigger(cmd("a"), cmd("b"))
    table = make_table(tocsin, trg)
    run = make_run(tocsin, table, trg)
    with tocsin.store.begin() as tx:
        claimed = claim_run(tx, run_id=run["id"], now=NOW)
        assert claimed is not None
        legacy = [{"type": "invoke_command", "ok": True, "detail": "old"}]
        save_receipt(tx, run_id=run["id"], attempts=1, receipts=legacy, now=NOW)
    tocsin.retry_run(table["id"], run["id"], now=STALE)
    tocsin.work(now=STALE)
    assert read_run(tocsin, run["id"])["status"] == "done"
    assert (len(a), len(b)) == (0, 1)


def test_retry_refuses_done_runs(tocsin: Tocsin) -> None:
    trg = trigger({"type": "notify", "message": "x"})
    table = make_table(tocsin, trg)
    run = make_run(tocsin, table, trg)
    tocsin.work(now=LATER)
    with pytest.raises(Conflict) as err:
        tocsin.retry_run(table["id"], run["id"], now=LATER)
    assert err.value.status == 409
    assert err.value.detail == (
        "run is done; only failed/pending (or stale-running) runs can be retried"
    )


def test_retry_refuses_live_running_but_accepts_stale_running(tocsin: Tocsin) -> None:
    trg = trigger({"type": "notify", "message": "x"})
    table = make_table(tocsin, trg)
    run = make_run(tocsin, table, trg)
    with tocsin.store.begin() as tx:
        claim_run(tx, run_id=run["id"], now=NOW)
    with pytest.raises(Conflict) as err:
        tocsin.retry_run(table["id"], run["id"], now=NOW + timedelta(seconds=300))
    assert err.value.detail == messages.retry_refused("running")
    reset = tocsin.retry_run(table["id"], run["id"], now=STALE)
    assert reset["status"] == "pending"
    assert tocsin.work(now=STALE) == 1
    assert read_run(tocsin, run["id"])["status"] == "done"


def test_retry_accepts_pending_runs(tocsin: Tocsin) -> None:
    trg = trigger({"type": "notify", "message": "x"})
    table = make_table(tocsin, trg)
    run = make_run(tocsin, table, trg)
    assert tocsin.retry_run(table["id"], run["id"], now=LATER)["status"] == "pending"


def test_unknown_run_or_other_table_is_404(tocsin: Tocsin) -> None:
    trg = trigger({"type": "notify", "message": "x"})
    table, other = make_table(tocsin, trg), make_table(tocsin)
    run = make_run(tocsin, table, trg)
    for table_id, run_id in ((table["id"], "nope"), (other["id"], run["id"])):
        with pytest.raises(NotFound) as err:
            tocsin.retry_run(table_id, run_id, now=LATER)
        assert err.value.status == 404 and err.value.detail == messages.RUN_NOT_FOUND


def test_clock_retry_refused_while_another_run_of_the_trigger_is_active(tocsin: Tocsin) -> None:
    flaky(tocsin, "f", 1)
    trg = trigger(cmd("f"), on="schedule", schedule=INTERVAL)
    table = make_table(tocsin, trg)
    first = make_run(tocsin, table, trg, source="schedule", scheduled_for=NOW)
    tocsin.work(now=LATER)
    assert read_run(tocsin, first["id"])["status"] == "failed"
    make_run(tocsin, table, trg, source="schedule", scheduled_for=LATER, now=LATER)
    with pytest.raises(Conflict) as err:
        tocsin.retry_run(table["id"], first["id"], now=LATER)
    assert err.value.detail == (
        "another run is active for this schedule trigger; retry after it completes"
    )
    tocsin.work(now=LATER)  # the second run ends: the fence is free again
    assert tocsin.retry_run(table["id"], first["id"], now=LATER)["status"] == "pending"


def test_schedule_retry_survives_trigger_deletion(tocsin: Tocsin) -> None:
    flaky(tocsin, "f", 1)
    trg = trigger(cmd("f"), on="schedule", schedule=INTERVAL)
    table = make_table(tocsin, trg)
    run = make_run(tocsin, table, trg, source="schedule", scheduled_for=NOW)
    tocsin.work(now=LATER)
    set_triggers(tocsin, table["id"])
    tocsin.retry_run(table["id"], run["id"], now=LATER)
    tocsin.work(now=LATER)
    assert read_run(tocsin, run["id"])["status"] == "done"


def test_row_event_retry_reads_the_edited_trigger(tocsin: Tocsin) -> None:
    flaky(tocsin, "bad", 99)
    good = flaky(tocsin, "good", 0)
    trg = trigger(cmd("bad"))
    table = make_table(tocsin, trg)
    run = make_run(tocsin, table, trg)
    tocsin.work(now=LATER)
    set_triggers(tocsin, table["id"], {**trg, "actions": [{"id": "act_1", **cmd("good")}]})
    tocsin.retry_run(table["id"], run["id"], now=LATER)
    tocsin.work(now=LATER)
    assert read_run(tocsin, run["id"])["status"] == "done" and len(good) == 1


def test_clock_retry_losing_the_fence_race_says_another_run_is_active(
    tocsin: Tocsin, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another run became active between the retry's check and its reset (a race): 409 with
    the fence's text, not a status the run does not have."""
    flaky(tocsin, "f", 1)
    trg = trigger(cmd("f"), on="schedule", schedule=INTERVAL)
    table = make_table(tocsin, trg)
    first = make_run(tocsin, table, trg, source="schedule", scheduled_for=NOW)
    tocsin.work(now=LATER)
    make_run(tocsin, table, trg, source="schedule", scheduled_for=LATER, now=LATER)
    monkeypatch.setattr(retry_module, "has_other_active_run", lambda tx, **kw: False)
    with pytest.raises(Conflict) as err:
        tocsin.retry_run(table["id"], first["id"], now=LATER)
    assert err.value.detail == messages.RETRY_ANOTHER_ACTIVE
    assert read_run(tocsin, first["id"])["status"] == "failed"
