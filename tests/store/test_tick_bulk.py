"""The tick's set-based statements keep the per-row rules (SPEC §5.3, §6; DESIGN §5)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from sqlalchemy import select

from tocsin.store import Store
from tocsin.store.ledger import claim_occurrence, fired_identities
from tocsin.store.runs import get_run
from tocsin.store.state import get_state, upsert_state
from tocsin.store.tables import runs, trigger_state
from tocsin.store.tick_bulk import (
    active_clock_trigger_ids,
    claim_occurrences,
    consume_windows,
    insert_clock_runs,
)

from .helpers import NOW, new_id


def _ledger_row(trigger_id: str, identity: str) -> dict[str, Any]:
    return {
        "trigger_id": trigger_id,
        "identity": identity,
        "table_id": "t",
        "run_id": new_id(),
        "created_at": NOW,
    }


def _run_row(trigger_id: str, table_id: str) -> dict[str, Any]:
    return {
        "id": new_id(),
        "table_id": table_id,
        "trigger_id": trigger_id,
        "payload": {},
        "definition": {"id": trigger_id, "on": "schedule", "name": "é ✓"},
        "identity": "window:2026-08-27T05:00:00",
        "scheduled_for": NOW,
        "created_at": NOW,
    }


def test_bulk_claims_return_only_the_identities_this_transaction_got(store: Store) -> None:
    with store.begin() as tx:
        assert claim_occurrence(
            tx, trigger_id="trg_a", identity="w1", table_id="t", run_id=new_id(), now=NOW
        )
    rows = [_ledger_row("trg_a", "w1"), _ledger_row("trg_a", "w2"), _ledger_row("trg_b", "w1")]
    with store.begin() as tx:
        assert claim_occurrences(tx, rows=rows) == {("trg_a", "w2"), ("trg_b", "w1")}
    with store.read() as tx:
        assert fired_identities(tx, trigger_id="trg_a", identities=["w1", "w2"]) == {"w1", "w2"}


def test_bulk_runs_are_refused_for_a_trigger_with_an_active_clock_run(
    store: Store, table: dict[str, Any]
) -> None:
    first = _run_row("trg_a", table["id"])
    with store.begin() as tx:
        assert insert_clock_runs(tx, rows=[first]) == {first["id"]}
    again, other = _run_row("trg_a", table["id"]), _run_row("trg_b", table["id"])
    with store.begin() as tx:
        assert insert_clock_runs(tx, rows=[again, other]) == {other["id"]}
        assert active_clock_trigger_ids(tx, trigger_ids=["trg_a", "trg_b", "trg_c"]) == {
            "trg_a",
            "trg_b",
        }
    with store.read() as tx:
        run = get_run(tx, run_id=first["id"])
    assert run is not None
    assert (run["status"], run["clock"], run["payload"], run["action_results"]) == (
        "pending",
        True,
        {},
        [],
    )
    assert run["definition"] == first["definition"] and run["scheduled_for"] == NOW
    with store.read() as tx:  # instants are stored as SQLAlchemy stores them (SQL equality holds)
        found = tx.conn.execute(
            select(runs.c.id).where(runs.c.updated_at == NOW, runs.c.scheduled_for == NOW)
        ).scalars()
        assert set(found) == {first["id"], other["id"]}


def test_bulk_window_consumption_is_monotonic(store: Store, table: dict[str, Any]) -> None:
    later = NOW + timedelta(hours=1)
    with store.begin() as tx:
        for trigger_id in ("trg_a", "trg_b"):
            upsert_state(
                tx, trigger_id=trigger_id, table_id=table["id"], kind="interval", anchor=NOW,
                schedule_hash="h", now=NOW, next_due_at=NOW,
            )  # fmt: skip
        consume_windows(tx, values=[("trg_a", later, later + timedelta(hours=1))], now=NOW)
    with store.begin() as tx:
        consume_windows(tx, values=[("trg_a", NOW, NOW), ("trg_b", NOW, later)], now=later)
    with store.read() as tx:
        a, b = get_state(tx, trigger_id="trg_a"), get_state(tx, trigger_id="trg_b")
    assert a is not None and b is not None
    assert (a["last_consumed"], a["next_due_at"]) == (later, later + timedelta(hours=1))
    assert (b["last_consumed"], b["next_due_at"], b["updated_at"]) == (NOW, later, later)
    with store.read() as tx:
        stmt = select(trigger_state.c.trigger_id).where(trigger_state.c.last_consumed == NOW)
        assert list(tx.conn.execute(stmt).scalars()) == ["trg_b"]
