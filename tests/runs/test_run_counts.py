"""SPEC §8 / §16: the global run counts behind the /metrics gauges, stuck included."""

from __future__ import annotations

from datetime import timedelta

from tocsin.service import Tocsin
from tocsin.store.runs import claim_run

from .helpers import NOW, make_run, make_table, trigger


def test_stuck_counts_failed_and_stale_running_but_not_live_running(tocsin: Tocsin) -> None:
    trg = trigger({"type": "notify", "message": "x"})
    table = make_table(tocsin, trg)
    run = make_run(tocsin, table, trg)
    assert tocsin.run_counts(now=NOW) == {
        "pending": 1,
        "running": 0,
        "done": 0,
        "failed": 0,
        "stuck": 0,
    }
    with tocsin.store.begin() as tx:
        claim_run(tx, run_id=run["id"], now=NOW)
    live = NOW + timedelta(seconds=tocsin.settings.stuck_after_s)
    assert tocsin.run_counts(now=live)["stuck"] == 0
    stale = live + timedelta(seconds=1)
    counts = tocsin.run_counts(now=stale)
    assert counts["running"] == 1
    assert counts["stuck"] == 1
