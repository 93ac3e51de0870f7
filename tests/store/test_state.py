"""Trigger state rows (SPEC §5.1–§5.2): upsert, retire/revive, re-anchor, cursor, windows."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from tocsin.core.model import Table
from tocsin.store import Store
from tocsin.store import state as st
from tocsin.store.ledger import claim_occurrences, fired_identities

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
    store: Store, table: Table
) -> None:
    with store.begin() as tx:
        made = _upsert(tx, table.id)
        assert made is not None and made.as_dict() == {
            "trigger_id": "trg_i", "table_id": table.id, "kind": "interval", "anchor": NOW,
            "last_consumed": None, "cursor_created_at": None, "cursor_id": None,
            "schedule_hash": "h1", "retired": False, "next_due_at": NOW, "updated_at": NOW,
            "paused_at": None, "pause_windows": (), "definition_hash": None,
        }  # fmt: skip
        st.consume_windows(tx, consumed=[(table.id, "trg_i", NOW, None)], now=NOW)
        state = st.get_state(tx, table_id=table.id, trigger_id="trg_i")
        assert state is not None and state.last_consumed == NOW
        st.retire_states(tx, table_id=table.id, keep_ids=[], now=NOW)
        again = _upsert(tx, table.id, schedule_hash="h2", anchor=NOW + HOUR, now=NOW + HOUR)
    assert again.retired is False and again.schedule_hash == "h2"
    assert again.anchor == NOW + HOUR and again.last_consumed == NOW


def test_get_states_keys_by_trigger_id(store: Store, table: Table) -> None:
    with store.begin() as tx:
        _upsert(tx, table.id, "trg_a")
        _upsert(tx, table.id, "trg_b", kind="date_column_reached", anchor=None)
    with store.read() as tx:
        states = st.get_states(tx, table_id=table.id)
        assert set(states) == {"trg_a", "trg_b"}
        assert states["trg_b"].kind == "date_column_reached"
        assert st.get_state(tx, table_id=table.id, trigger_id="trg_a") == states["trg_a"]
        assert st.get_state(tx, table_id=table.id, trigger_id="trg_missing") is None
        assert st.get_state(tx, table_id=new_id(), trigger_id="trg_a") is None  # per table
        assert st.get_states(tx, table_id=new_id()) == {}


def test_states_of_tables_groups_by_table(store: Store, table: Table) -> None:
    other, empty = make_table(store), make_table(store)
    with store.begin() as tx:
        _upsert(tx, table.id, "trg_a")
        _upsert(tx, other.id, "trg_b", kind="date_column_reached", anchor=None)
        st.retire_states(tx, table_id=other.id, keep_ids=[], now=NOW)
    with store.read() as tx:
        grouped = st.states_of_tables(tx, table_ids=[table.id, other.id, empty.id])
        assert grouped == {
            table.id: {"trg_a": st.get_state(tx, table_id=table.id, trigger_id="trg_a")},
            # retired included
            other.id: {"trg_b": st.get_state(tx, table_id=other.id, trigger_id="trg_b")},
            empty.id: {},
        }
        assert grouped[other.id]["trg_b"].retired is True
        assert st.states_of_tables(tx, table_ids=[]) == {}


def test_retire_keeps_listed_ids_and_revive_restores(store: Store, table: Table) -> None:
    with store.begin() as tx:
        for trigger_id in ("trg_a", "trg_b", "trg_c"):
            _upsert(tx, table.id, trigger_id)
        retired = st.retire_states(tx, table_id=table.id, keep_ids={"trg_b"}, now=NOW + HOUR)
        assert retired == {"trg_a", "trg_c"}
        assert st.retire_states(tx, table_id=table.id, keep_ids={"trg_b"}, now=NOW) == set()
        states = st.get_states(tx, table_id=table.id)
        assert {k for k, v in states.items() if v.retired} == {"trg_a", "trg_c"}
        assert st.revive_state(tx, table_id=table.id, trigger_id="trg_a", now=NOW + 2 * HOUR)
        assert not st.revive_state(tx, table_id=table.id, trigger_id="trg_a", now=NOW + 2 * HOUR)
        state = st.get_state(tx, table_id=table.id, trigger_id="trg_a")
        assert state is not None and state.retired is False


def test_reanchor_restarts_the_cursor_and_keeps_ledger_and_history(
    store: Store, table: Table
) -> None:
    rid = new_id()
    with store.begin() as tx:
        _upsert(tx, table.id, "trg_d", kind="date_column_reached", anchor=None)
        st.advance_cursors(tx, cursors=[(table.id, "trg_d", NOW, rid)], now=NOW)
        claim_occurrences(tx, claims=[(table.id, "trg_d", f"{rid}|2026-08-27", new_id())], now=NOW)
        st.consume_windows(tx, consumed=[(table.id, "trg_d", NOW, None)], now=NOW)
        assert st.reanchor_state(
            tx, table_id=table.id, trigger_id="trg_d", anchor=NOW + HOUR, schedule_hash="h9",
            now=NOW + HOUR, next_due_at=NOW + 2 * HOUR,
        )  # fmt: skip
        state = st.get_state(tx, table_id=table.id, trigger_id="trg_d")
        assert state is not None
        assert (state.cursor_created_at, state.cursor_id) == (None, None)
        assert state.anchor == NOW + HOUR and state.schedule_hash == "h9"
        assert state.last_consumed == NOW and state.next_due_at == NOW + 2 * HOUR
        assert fired_identities(
            tx, table_id=table.id, trigger_id="trg_d", identities=[f"{rid}|2026-08-27"]
        )
        assert not st.reanchor_state(
            tx,
            table_id=table.id,
            trigger_id="nope",
            anchor=None,
            schedule_hash=None,
            now=NOW,
            next_due_at=None,
        )


def test_advance_cursor_moves_and_resets(store: Store, table: Table) -> None:
    rid, other = new_id(), new_id()
    with store.begin() as tx:
        _upsert(tx, table.id, "trg_d", kind="date_column_reached")
        _upsert(tx, table.id, "trg_e", kind="date_column_reached")
        st.advance_cursors(
            tx,
            cursors=[(table.id, "trg_d", NOW, rid), (table.id, "trg_e", NOW + HOUR, other)],
            now=NOW + HOUR,
        )
        state = st.get_state(tx, table_id=table.id, trigger_id="trg_d")
        assert state is not None and (state.cursor_created_at, state.cursor_id) == (NOW, rid)
        assert state.updated_at == NOW + HOUR
        state = st.get_state(tx, table_id=table.id, trigger_id="trg_e")
        assert state is not None
        assert (state.cursor_created_at, state.cursor_id) == (NOW + HOUR, other)
        st.advance_cursors(tx, cursors=[(table.id, "trg_d", None, None)], now=NOW)
        state = st.get_state(tx, table_id=table.id, trigger_id="trg_d")
        assert state is not None and state.cursor_id is None
        assert state.cursor_created_at is None
        st.advance_cursors(tx, cursors=[], now=NOW)  # nothing to move: a no-op


def test_consume_window_is_monotonic(store: Store, table: Table) -> None:
    def consumed(tx: Any, trigger_id: str) -> tuple[Any, Any, Any]:
        state = st.get_state(tx, table_id=table.id, trigger_id=trigger_id)
        assert state is not None
        return state.last_consumed, state.next_due_at, state.updated_at

    with store.begin() as tx:
        _upsert(tx, table.id)
        _upsert(tx, table.id, "trg_j")
        st.consume_windows(
            tx, consumed=[(table.id, "trg_i", NOW + HOUR, NOW + 2 * HOUR)], now=NOW + HOUR
        )
        assert consumed(tx, "trg_i") == (NOW + HOUR, NOW + 2 * HOUR, NOW + HOUR)
        # an earlier and the same window are refused (row left as is); a fresh one in the same
        # call still goes through
        st.consume_windows(
            tx,
            consumed=[
                (table.id, "trg_i", NOW, None),
                (table.id, "trg_j", NOW, NOW + HOUR),
                (table.id, "trg_i", NOW + HOUR, None),
            ],
            now=NOW + 2 * HOUR,
        )
        assert consumed(tx, "trg_i") == (NOW + HOUR, NOW + 2 * HOUR, NOW + HOUR)
        assert consumed(tx, "trg_j") == (NOW, NOW + HOUR, NOW + 2 * HOUR)
        st.consume_windows(tx, consumed=[], now=NOW)  # nothing consumed: a no-op


def test_set_next_dues(store: Store, table: Table) -> None:
    with store.begin() as tx:
        _upsert(tx, table.id)
        _upsert(tx, table.id, "trg_j")
        st.set_next_dues(tx, next_dues=[(table.id, "trg_i", None), (table.id, "trg_j", NOW + HOUR)])
        state = st.get_state(tx, table_id=table.id, trigger_id="trg_i")
        assert state is not None and state.next_due_at is None
        state = st.get_state(tx, table_id=table.id, trigger_id="trg_j")
        assert state is not None and state.next_due_at == NOW + HOUR
        st.set_next_dues(tx, next_dues=[])  # nothing to set: a no-op


def test_state_rows_go_with_their_table(store: Store, table: Table) -> None:
    with store.begin() as tx:
        _upsert(tx, table.id)
        tx.conn.exec_driver_sql(f"DELETE FROM tables WHERE id = '{table.id}'")
        assert st.get_state(tx, table_id=table.id, trigger_id="trg_i") is None  # ON DELETE CASCADE


def test_two_tables_keep_their_own_state_for_one_trigger_id(store: Store, table: Table) -> None:
    """A trigger id is unique within its table only: every write touches its own table's row."""
    other = make_table(store)
    with store.begin() as tx:
        _upsert(tx, table.id, trigger_id="trg_shared")
        made = _upsert(tx, other.id, trigger_id="trg_shared", kind="daily", anchor=NOW + HOUR)
        assert (made.table_id, made.kind, made.anchor) == (other.id, "daily", NOW + HOUR)
        st.consume_windows(tx, consumed=[(other.id, "trg_shared", NOW, None)], now=NOW)
        st.set_next_dues(tx, next_dues=[(other.id, "trg_shared", NOW + HOUR)])
        st.advance_cursors(tx, cursors=[(other.id, "trg_shared", NOW, "rec")], now=NOW)
        assert st.pause_state(tx, table_id=other.id, trigger_id="trg_shared", now=NOW)
        assert st.reanchor_state(
            tx, table_id=other.id, trigger_id="trg_shared", anchor=None, schedule_hash="h9",
            now=NOW, next_due_at=None,
        )  # fmt: skip
        st.retire_states(tx, table_id=other.id, keep_ids=[], now=NOW)
    with store.read() as tx:
        kept = st.get_state(tx, table_id=table.id, trigger_id="trg_shared")
        theirs = st.get_state(tx, table_id=other.id, trigger_id="trg_shared")
    assert kept is not None and theirs is not None
    assert (kept.table_id, kept.kind, kept.anchor, kept.schedule_hash) == (
        table.id, "interval", NOW, "h1",
    )  # fmt: skip
    assert (kept.last_consumed, kept.next_due_at, kept.cursor_id) == (None, NOW, None)
    assert not kept.retired and kept.paused_at is None
    assert theirs.retired and theirs.schedule_hash == "h9" and theirs.last_consumed == NOW
