"""End to end through the facade only: row events and ticks create runs, ``work`` executes them,
``retry_run`` recovers them (SPEC §8, §9)."""

from __future__ import annotations

import uuid
from datetime import timedelta
from typing import Any

import pytest

from tocsin import messages
from tocsin.errors import Conflict
from tocsin.service import Tocsin

from .helpers import LATER, NOW

HOUR = timedelta(hours=1)


def switch(t: Tocsin) -> dict[str, bool]:
    """Register command ``flip`` that fails while ``state["fail"]`` is true."""
    state = {"fail": True}

    def flip(inputs: dict[str, Any]) -> str:
        if state["fail"]:
            raise RuntimeError("switched off")
        return "on"

    t.register_command("flip", flip)
    return state


def test_row_event_run_from_write_to_done(tocsin: Tocsin) -> None:
    table = tocsin.create_table("chatroom", str(uuid.uuid4()), "Cases", {"Title": "text"}, now=NOW)
    tocsin.set_triggers(
        table["id"],
        [{"on": "created", "actions": [{"type": "notify", "message": "new: $row.Title"}]}],
        now=NOW,
    )
    tocsin.insert_records(table["id"], [{"Title": "Leak"}, {"Title": "Fire"}], now=NOW)
    assert tocsin.list_runs(table["id"], status="pending", now=NOW)["total"] == 2
    assert tocsin.work(now=LATER) == 2
    assert tocsin.list_runs(table["id"], status="done", now=LATER)["total"] == 2
    texts = sorted(m["text"] for m in tocsin.messages(table["scope_id"])["items"])
    assert texts == ["new: Fire", "new: Leak"]


def test_trashed_table_fails_pending_runs_with_the_spec_text(tocsin: Tocsin) -> None:
    table = tocsin.create_table("chatroom", str(uuid.uuid4()), "Cases", {"Title": "text"}, now=NOW)
    tocsin.set_triggers(
        table["id"], [{"on": "created", "actions": [{"type": "notify", "message": "x"}]}], now=NOW
    )
    tocsin.insert_records(table["id"], [{"Title": "Leak"}], now=NOW)
    tocsin.trash_table(table["id"], now=NOW)
    tocsin.work(now=LATER)
    tocsin.restore_table(table["id"], now=LATER)
    (run,) = tocsin.list_runs(table["id"], now=LATER)["items"]
    assert run["status"] == "failed" and run["error"] == "trigger config no longer exists"


def test_schedule_run_fails_consumes_its_window_and_retry_recovers_it(tocsin: Tocsin) -> None:
    state = switch(tocsin)
    table = tocsin.create_table("chatroom", str(uuid.uuid4()), "Ops", {"Title": "text"}, now=NOW)
    tocsin.set_triggers(
        table["id"],
        [
            {
                "on": "schedule",
                "schedule": {"type": "interval", "every_seconds": 3600},
                "actions": [{"type": "invoke_command", "command": "flip"}],
            }
        ],
        now=NOW,
    )
    assert tocsin.tick(now=LATER)["runs_created"] == 1
    tocsin.work(now=LATER)
    (failed,) = tocsin.list_runs(table["id"], now=LATER)["items"]
    assert failed["status"] == "failed"
    assert tocsin.tick(now=LATER + timedelta(seconds=60))["runs_created"] == 0  # window consumed
    assert tocsin.tick(now=NOW + HOUR)["runs_created"] == 1  # the next window, pending
    with pytest.raises(Conflict) as err:
        tocsin.retry_run(table["id"], failed["id"], now=NOW + HOUR)
    assert err.value.detail == messages.RETRY_ANOTHER_ACTIVE
    state["fail"] = False
    tocsin.work(now=NOW + HOUR)
    retried = tocsin.retry_run(table["id"], failed["id"], now=NOW + HOUR)
    assert retried["status"] == "pending" and retried["error"] is None
    tocsin.work(now=NOW + HOUR)
    assert tocsin.get_run(table["id"], failed["id"])["status"] == "done"
    assert tocsin.list_runs(table["id"], status="done", now=NOW + HOUR)["total"] == 2
