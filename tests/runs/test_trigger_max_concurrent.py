"""A row-event trigger's ``max_concurrent``: never more of its runs running at once than that
(``store.runs.claim_scoped_runs``); a run past it stays pending until one ends. The key is
checked where every triggers save is (``engine.configs.check_triggers_config``)."""

from __future__ import annotations

import threading
import uuid
from datetime import UTC, datetime
from typing import Any

import pytest

from support.net import Receiver
from tocsin.errors import ConfigError
from tocsin.runs.pool import RunPool
from tocsin.service import Tocsin

NOW = datetime(2026, 8, 27, 5, 2, 13, tzinfo=UTC)


def _table(tocsin: Tocsin, triggers: list[dict[str, Any]]) -> str:
    table = tocsin.create_table("chatroom", str(uuid.uuid4()), "T", {"N": "text"}, now=NOW)
    tocsin.set_triggers(table["id"], triggers, now=NOW)
    return str(table["id"])


def _statuses(tocsin: Tocsin, table_id: str) -> list[str]:
    return sorted(run["status"] for run in tocsin.list_runs(table_id)["items"])


def _until(probe: Any) -> None:
    """Wait for what a pool thread or the receiver brings about (not for a scheduler)."""
    pause = threading.Event()
    for _ in range(600):
        if probe():
            return
        pause.wait(0.05)
    raise AssertionError("timed out")


def test_a_trigger_with_max_concurrent_2_never_has_a_third_run_running(tocsin: Tocsin) -> None:
    with Receiver(gated=True) as held, Receiver() as free:
        hook = {"id": "hook", "type": "webhook", "url": held.url, "timeout_s": 30}
        other = {"id": "other", "type": "webhook", "url": free.url}
        table_id = _table(
            tocsin,
            [
                {"id": "two", "on": "created", "max_concurrent": 2, "actions": [hook]},
                {"id": "free", "on": "updated", "actions": [other]},
            ],
        )
        records = tocsin.insert_records(table_id, [{"N": str(i)} for i in range(5)], now=NOW)
        pool = RunPool(8)
        try:
            assert tocsin.work(pool=pool, now=NOW) == 2  # the other 3 stay pending
            _until(lambda: len(held.arrivals) == 2)
            assert _statuses(tocsin, table_id) == ["pending"] * 3 + ["running"] * 2
            assert tocsin.work(pool=pool, now=NOW) == 0  # its two slots are taken
            # another trigger of the same table is not held back by this one's limit
            tocsin.update_record(table_id, records[0], {"N": "x"}, now=NOW)
            assert tocsin.work(pool=pool, now=NOW) == 1
            _until(lambda: len(free.arrivals) == 1)
            held.release()  # one of the two ends: one slot frees
            _until(lambda: _statuses(tocsin, table_id).count("done") == 2)
            assert tocsin.work(pool=pool, now=NOW) == 1
            _until(lambda: len(held.arrivals) == 3)
            assert _statuses(tocsin, table_id).count("running") == 2
        finally:
            held.release(10)
            assert pool.wait_idle(30)
        while tocsin.work(pool=pool, now=NOW):
            assert pool.wait_idle(30)
    assert _statuses(tocsin, table_id) == ["done"] * 6
    assert len(held.arrivals) == 5


@pytest.mark.parametrize(
    ("trigger", "reason"),
    [
        (
            {"on": "created", "max_concurrent": 0},
            "max_concurrent must be a whole number from 1 to 10000, got 0",
        ),
        (
            {"on": "created", "max_concurrent": "2"},
            "max_concurrent must be a whole number from 1 to 10000, got '2'",
        ),
        (
            {"on": "created", "max_concurrent": True},
            "max_concurrent must be a whole number from 1 to 10000, got True",
        ),
        (
            {
                "on": "schedule",
                "schedule": {"type": "interval", "every_seconds": 3600},
                "max_concurrent": 2,
            },
            "max_concurrent applies to row-event triggers only"
            " (a schedule trigger already runs one run at a time)",
        ),
    ],
)
def test_max_concurrent_is_checked_when_triggers_are_saved(
    tocsin: Tocsin, trigger: dict[str, Any], reason: str
) -> None:
    action = {"type": "notify", "message": "hi"}
    with pytest.raises(ConfigError) as err:
        _table(tocsin, [{"id": "t", **trigger, "actions": [action]}])
    assert str(err.value) == f"trigger invalid: trigger 't': {reason}"
