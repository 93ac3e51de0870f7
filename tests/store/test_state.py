"""Trigger state rows (SPEC §5.1–§5.2): upsert, retire/revive, re-anchor, cursor, windows."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from tocsin.store import Store
from tocsin.store import state as st
from tocsin.store.ledger import claim_occurrence, fired_identities

from .helpers import NOW, make_table, new_id

HOUR = timedelta(hours=1)


def _upsert(tx: Any, table_id: str, trigger_id: str = "trg_i", **overrides: Any) -> Any:
    fields: dict[str, Any] = {
        "trigger_id": trigger_id,
        "table_id": table_id,
        "kind": "interval",
        "anchor": NOW,
        "schedule_hash": "h1",
        "now": NOW,
        "next_due_at": NOW,
    }
    fields.update(overrides)
    return st.upsert_state(tx, **fields)


def test_upsert_creates_then_overwrites_config_but_keeps_history(
    store: Store, table: dict[str, Any]
) -> None:
    with store.begin() as tx:
        made = _upsert(tx, table["id"])
        assert made == {
            "trigger_id": "trg_i", "table_id": table["id"], "kind": "interval", "anchor": NOW,
            "last_consumed": None, "cursor_created_at": None, "cursor_id": None,
            "schedule_hash": "h1", "retired": False, "next_due_at": NOW, "updated_at": NOW,
        }  # fmt: skip
        assert st.consume_window(tx, trigger_id="trg_i", window=NOW, now=NOW, next_due_at=None)
        st.retire_states(tx, table_id=table["id"], keep_ids=[], now=NOW)
        again = _upsert(tx, table["id"], schedule_hash="h2", anchor=NOW + HOUR, now=NOW + HOUR)
    assert again["retired"] is False and again["schedule_hash"] == "h2"
    assert again["anchor"] == NOW + HOUR and again["last_consumed"] == NOW


def test_get_states_keys_by_trigger_id(store: Store, table: dict[str, Any]) -> None:
    with store.begin() as tx:
        _upsert(tx, table["id"], "trg_a")
        _upsert(tx, table["id"], "trg_b", kind="date_column_reached", anchor=None)
    with store.read() as tx:
        states = st.get_states(tx, table_id=table["id"])
        assert set(states) == {"trg_a", "trg_b"}
        assert states["trg_b"]["kind"] == "date_column_reached"
        assert st.get_state(tx, trigger_id="trg_a") == states["trg_a"]
        assert st.get_state(tx, trigger_id="trg_missing") is None
        assert st.get_states(tx, table_id=new_id()) == {}


def test_retire_keeps_listed_ids_and_revive_restores(store: Store, table: dict[str, Any]) -> None:
    with store.begin() as tx:
        for trigger_id in ("trg_a", "trg_b", "trg_c"):
            _upsert(tx, table["id"], trigger_id)
        retired = st.retire_states(tx, table_id=table["id"], keep_ids={"trg_b"}, now=NOW + HOUR)
        assert retired == {"trg_a", "trg_c"}
        assert st.retire_states(tx, table_id=table["id"], keep_ids={"trg_b"}, now=NOW) == set()
        states = st.get_states(tx, table_id=table["id"])
        assert {k for k, v in states.items() if v["retired"]} == {"trg_a", "trg_c"}
        assert st.revive_state(tx, trigger_id="trg_a", now=NOW + 2 * HOUR)
        assert not st.revive_state(tx, trigger_id="trg_a", now=NOW + 2 * HOUR)
        assert st.get_state(tx, trigger_id="trg_a")["retired"] is False  # type: ignore[index]


def test_reanchor_restarts_the_cursor_and_keeps_ledger_and_history(
    store: Store, table: dict[str, Any]
) -> None:
    rid = new_id()
    with store.begin() as tx:
        _upsert(tx, table["id"], "trg_d", kind="date_column_reached", anchor=None)
        st.advance_cursor(tx, trigger_id="trg_d", created_at=NOW, record_id=rid, now=NOW)
        claim_occurrence(
            tx, trigger_id="trg_d", identity=f"{rid}|2026-08-27", table_id=table["id"],
            run_id=new_id(), now=NOW,
        )  # fmt: skip
        st.consume_window(tx, trigger_id="trg_d", window=NOW, now=NOW, next_due_at=None)
        assert st.reanchor_state(
            tx, trigger_id="trg_d", anchor=NOW + HOUR, schedule_hash="h9", now=NOW + HOUR,
            next_due_at=NOW + 2 * HOUR,
        )  # fmt: skip
        state = st.get_state(tx, trigger_id="trg_d")
        assert state is not None
        assert (state["cursor_created_at"], state["cursor_id"]) == (None, None)
        assert state["anchor"] == NOW + HOUR and state["schedule_hash"] == "h9"
        assert state["last_consumed"] == NOW and state["next_due_at"] == NOW + 2 * HOUR
        assert fired_identities(
            tx, table_id=table["id"], trigger_id="trg_d", identities=[f"{rid}|2026-08-27"]
        )
        assert not st.reanchor_state(
            tx, trigger_id="nope", anchor=None, schedule_hash=None, now=NOW, next_due_at=None
        )


def test_advance_cursor_moves_and_resets(store: Store, table: dict[str, Any]) -> None:
    rid = new_id()
    with store.begin() as tx:
        _upsert(tx, table["id"], "trg_d", kind="date_column_reached")
        st.advance_cursor(tx, trigger_id="trg_d", created_at=NOW, record_id=rid, now=NOW + HOUR)
        state = st.get_state(tx, trigger_id="trg_d")
        assert state is not None and (state["cursor_created_at"], state["cursor_id"]) == (NOW, rid)
        assert state["updated_at"] == NOW + HOUR
        st.advance_cursor(tx, trigger_id="trg_d", created_at=None, record_id=None, now=NOW)
        state = st.get_state(tx, trigger_id="trg_d")
        assert state is not None and state["cursor_id"] is None


def test_consume_window_is_monotonic(store: Store, table: dict[str, Any]) -> None:
    with store.begin() as tx:
        _upsert(tx, table["id"])
        assert st.consume_window(
            tx, trigger_id="trg_i", window=NOW + HOUR, now=NOW + HOUR, next_due_at=NOW + 2 * HOUR
        )
        assert not st.consume_window(tx, trigger_id="trg_i", window=NOW, now=NOW, next_due_at=None)
        assert not st.consume_window(
            tx, trigger_id="trg_i", window=NOW + HOUR, now=NOW, next_due_at=None
        )
        state = st.get_state(tx, trigger_id="trg_i")
        assert state is not None
        assert state["last_consumed"] == NOW + HOUR and state["next_due_at"] == NOW + 2 * HOUR


def test_set_next_due(store: Store, table: dict[str, Any]) -> None:
    with store.begin() as tx:
        _upsert(tx, table["id"])
        st.set_next_due(tx, trigger_id="trg_i", next_due_at=None)
        state = st.get_state(tx, trigger_id="trg_i")
        assert state is not None and state["next_due_at"] is None


def test_state_rows_go_with_their_table(store: Store, table: dict[str, Any]) -> None:
    with store.begin() as tx:
        _upsert(tx, table["id"])
        tx.conn.exec_driver_sql(f"DELETE FROM tables WHERE id = '{table['id']}'")
        assert st.get_state(tx, trigger_id="trg_i") is None  # ON DELETE CASCADE


def test_upsert_never_hands_a_state_to_another_table(store: Store, table: dict[str, Any]) -> None:
    """Two transactions that both saw no state for an id: the later one writes nothing."""
    other = make_table(store)
    with store.begin() as tx:
        _upsert(tx, table["id"], trigger_id="trg_shared")
    with store.begin() as tx:
        assert _upsert(tx, other["id"], trigger_id="trg_shared", kind="daily") is None
    with store.read() as tx:
        kept = st.get_state(tx, trigger_id="trg_shared")
    assert kept is not None and (kept["table_id"], kept["kind"]) == (table["id"], "interval")
