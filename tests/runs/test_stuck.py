"""SPEC §8, §9.4, §9.7 with a configured stale window (``TOCSIN_STUCK_AFTER_S`` = 60 here): the
``stuck`` filter, the stale-running retry and the tick's requeue sweep all follow it."""

from __future__ import annotations

from datetime import timedelta

import pytest

from tocsin.errors import Conflict
from tocsin.service import Tocsin
from tocsin.settings import Settings
from tocsin.store.runs import claim_run

from .helpers import NOW, make_run, make_table, read_run, trigger

WINDOW_S = 60


@pytest.fixture
def settings(store_url: str) -> Settings:
    return Settings(database_url=store_url, stuck_after_s=WINDOW_S)


def test_stuck_filter_retry_and_sweep_follow_the_configured_window(tocsin: Tocsin) -> None:
    trg = trigger({"type": "invoke_command", "command": "missing"})
    table = make_table(tocsin, trg)
    failed = make_run(tocsin, table, trg)
    tocsin.work(now=NOW)
    running = make_run(tocsin, table, trg)
    make_run(tocsin, table, trg)  # pending: never stuck
    with tocsin.store.begin() as tx:
        claim_run(tx, run_id=running["id"], now=NOW)

    def stuck(seconds: int) -> list[str]:
        page = tocsin.list_runs(table["id"], status="stuck", now=NOW + timedelta(seconds=seconds))
        return sorted(r["id"] for r in page["items"])

    assert stuck(WINDOW_S) == [failed["id"]]
    assert stuck(WINDOW_S + 1) == sorted([failed["id"], running["id"]])
    with pytest.raises(Conflict):  # still live at the window's edge
        tocsin.retry_run(table["id"], running["id"], now=NOW + timedelta(seconds=WINDOW_S))
    later = NOW + timedelta(seconds=WINDOW_S + 1)
    assert tocsin.tick(now=later)["trigger_runs_requeued"] == 2  # the stale one and the pending
    assert read_run(tocsin, running["id"])["status"] == "pending"
