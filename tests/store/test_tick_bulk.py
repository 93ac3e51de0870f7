"""The tick's set-based statements keep the per-row rules (SPEC §5.3, §6; DESIGN §5)."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

from sqlalchemy import select, update

from tocsin.store import Store
from tocsin.store.ledger import claim_occurrence, fired_identities
from tocsin.store.runs import get_run
from tocsin.store.state import get_state, get_states, upsert_state
from tocsin.store.tables import runs, tables, trigger_state
from tocsin.store.tick_bulk import (
    ClockRun,
    active_clock_trigger_ids,
    claim_occurrences,
    consume_windows,
    insert_clock_runs,
    lock_candidate_tables,
    states_of_tables,
)

from .helpers import NOW, make_table, new_id


def _claim(trigger_id: str, identity: str) -> tuple[str, str, str, str]:
    return (trigger_id, identity, "t", new_id())


DEFINITION = {"id": "trg_x", "on": "schedule", "name": "é ✓"}


def _run_row(trigger_id: str, table_id: str) -> ClockRun:
    definition = {**DEFINITION, "id": trigger_id}
    return (new_id(), table_id, trigger_id, definition, "window:2026-08-27T05:00:00", NOW)


def test_bulk_claims_return_only_the_identities_this_transaction_got(store: Store) -> None:
    with store.begin() as tx:
        assert claim_occurrence(
            tx, trigger_id="trg_a", identity="w1", table_id="t", run_id=new_id(), now=NOW
        )
    rows = [_claim("trg_a", "w1"), _claim("trg_a", "w2"), _claim("trg_b", "w1")]
    with store.begin() as tx:
        assert claim_occurrences(tx, rows=rows, now=NOW) == {("trg_a", "w2"), ("trg_b", "w1")}
    with store.read() as tx:
        assert fired_identities(tx, table_id="t", trigger_id="trg_a", identities=["w1", "w2"]) == {
            "w1",
            "w2",
        }


def test_bulk_runs_are_refused_for_a_trigger_with_an_active_clock_run(
    store: Store, table: dict[str, Any]
) -> None:
    first = _run_row("trg_a", table["id"])
    with store.begin() as tx:
        assert insert_clock_runs(tx, rows=[first], now=NOW) == {first[0]}
    again, other = _run_row("trg_a", table["id"]), _run_row("trg_b", table["id"])
    with store.begin() as tx:
        assert insert_clock_runs(tx, rows=[again, other], now=NOW) == {other[0]}
        assert active_clock_trigger_ids(tx, trigger_ids=["trg_a", "trg_b", "trg_c"]) == {
            "trg_a",
            "trg_b",
        }
    with store.read() as tx:
        run = get_run(tx, run_id=first[0])
    assert run is not None
    assert (run["status"], run["clock"], run["payload"], run["action_results"]) == (
        "pending",
        True,
        {},
        [],
    )
    assert run["definition"] == first[3] and run["scheduled_for"] == NOW
    assert (run["identity"], run["created_at"], run["updated_at"]) == (first[4], NOW, NOW)
    with store.read() as tx:  # instants are stored as SQLAlchemy stores them (SQL equality holds)
        found = tx.conn.execute(
            select(runs.c.id).where(runs.c.updated_at == NOW, runs.c.scheduled_for == NOW)
        ).scalars()
        assert set(found) == {first[0], other[0]}


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


def test_bulk_state_reads_equal_the_per_table_reads(store: Store) -> None:
    """``states_of_tables`` reads rows without SQLAlchemy's result processing: the same dicts
    as ``get_states`` (aware UTC instants to the microsecond, booleans, nulls)."""
    first, second, bare = make_table(store), make_table(store), make_table(store)
    stamp = NOW + timedelta(microseconds=123_456)
    with store.begin() as tx:
        for trigger_id, table_id in (("trg_a", first["id"]), ("trg_b", first["id"])):
            upsert_state(
                tx, trigger_id=trigger_id, table_id=table_id, kind="interval", anchor=stamp,
                schedule_hash="h", now=NOW, next_due_at=None,
            )  # fmt: skip
        upsert_state(
            tx, trigger_id="trg_c", table_id=second["id"], kind="date_column_reached",
            anchor=None, schedule_hash=None, now=stamp, next_due_at=stamp,
        )  # fmt: skip
        tx.conn.execute(
            update(trigger_state)
            .where(trigger_state.c.trigger_id == "trg_c")
            .values(cursor_created_at=stamp, cursor_id="rec-1", last_consumed=NOW)
        )
        tx.conn.execute(
            update(trigger_state).where(trigger_state.c.trigger_id == "trg_b").values(retired=True)
        )
    ids = [first["id"], second["id"], bare["id"]]
    with store.begin() as tx:
        bulk = states_of_tables(tx, table_ids=ids)
        assert bulk == {i: get_states(tx, table_id=i) for i in ids}
    assert bulk[first["id"]]["trg_b"]["retired"] is True
    assert bulk[first["id"]]["trg_a"]["anchor"] == stamp
    assert bulk[second["id"]]["trg_c"]["cursor_created_at"] == stamp
    assert bulk[second["id"]]["trg_c"]["anchor"] is None
    assert bulk[bare["id"]] == {}


def test_bulk_table_lock_reads_candidates_in_input_order(store: Store) -> None:
    """Only live tables with a config that are due (or never evaluated); configs decoded."""
    config = [{"id": "trg_a", "on": "schedule", "schedule": {"type": "interval"}, "x": "é"}]
    due, later, unknown, trashed, bare = (make_table(store) for _ in range(5))
    with store.begin() as tx:
        for t, next_due, gone in (
            (due, NOW, False),
            (later, NOW + timedelta(seconds=1), False),
            (unknown, None, False),
            (trashed, NOW, True),
        ):
            tx.conn.execute(
                update(tables)
                .where(tables.c.id == t["id"])
                .values(triggers=config, next_due_at=next_due, trashed=gone)
            )
    order = [unknown["id"], bare["id"], trashed["id"], later["id"], due["id"], "missing"]
    with store.begin() as tx:
        locked = lock_candidate_tables(tx, table_ids=order, now=NOW)
    assert [t["id"] for t in locked] == [unknown["id"], due["id"]]
    texts = locked[0].pop("definitions")  # each trigger's stored JSON text
    assert locked[0] == {"id": unknown["id"], "columns": unknown["columns"], "triggers": config}
    assert {k: json.loads(v) for k, v in texts.items()} == {"trg_a": config[0]}
