"""SQLite's coarse writes for the pipelined tick keep the bulk writes' rules, and the stored
trigger texts it copies into runs are the stored JSON (``tick_coarse``, ``array_with_texts``)."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tocsin.store import Store
from tocsin.store.runs import get_run
from tocsin.store.state import get_state, upsert_state
from tocsin.store.tick_bulk import array_with_texts, claim_occurrences
from tocsin.store.tick_coarse import apply, data_version, prepare_clock_writes

from .helpers import NOW, SQLITE_ONLY, make_table, new_id

LATER = NOW + timedelta(minutes=1)


def _state(store: Store, table_id: str, *trigger_ids: str) -> None:
    with store.begin() as tx:
        for trigger_id in trigger_ids:
            upsert_state(
                tx, trigger_id=trigger_id, table_id=table_id, kind="interval", anchor=NOW,
                schedule_hash="h", now=NOW, next_due_at=NOW,
            )  # fmt: skip


def _writes(store: Store, table_id: str, trigger_ids: list[str]) -> tuple[list[Any], list[str]]:
    """The coarse writes firing window ``window:x`` of each trigger (the first trigger's
    definition given as a mapping, the others as stored JSON text)."""
    run_ids = [new_id() for _ in trigger_ids]
    pairs = list(zip(trigger_ids, run_ids, strict=True))
    definitions = [
        {"id": t} if k == 0 else json.dumps({"id": t}) for k, t in enumerate(trigger_ids)
    ]
    with store.read() as tx:
        statements = prepare_clock_writes(
            tx,
            claims=[(t, "window:x", table_id, r) for t, r in pairs],
            runs=[
                (r, table_id, t, d, "window:x", NOW)
                for (t, r), d in zip(pairs, definitions, strict=True)
            ],
            consumed=[(t, NOW, LATER) for t in trigger_ids],
            next_dues=[],
            tables=[(table_id, LATER)],
            now=NOW,
        )
    return statements, run_ids


@SQLITE_ONLY
def test_coarse_writes_claim_insert_consume_and_stamp_the_table(store: Store) -> None:
    table_id = make_table(store)["id"]
    _state(store, table_id, "trg_a", "trg_b")
    statements, run_ids = _writes(store, table_id, ["trg_a", "trg_b"])
    with store.begin() as tx:
        assert apply(tx, statements) is True
    with store.read() as tx:
        runs = [get_run(tx, run_id=r) for r in run_ids]
        state = get_state(tx, trigger_id="trg_b")
        stamped = tx.conn.exec_driver_sql(
            "SELECT next_due_at, last_ticked_at FROM tables WHERE id = ?", (table_id,)
        ).one()
    assert [(r["status"], r["clock"], r["definition"]) for r in runs if r] == [
        ("pending", True, {"id": "trg_a"}),  # encoded
        ("pending", True, {"id": "trg_b"}),  # copied as text
    ]
    assert state is not None and (state["last_consumed"], state["next_due_at"]) == (NOW, LATER)
    assert stamped == ("2026-08-27 05:03:13.000000", "2026-08-27 05:02:13.000000")


@SQLITE_ONLY
def test_a_claim_taken_before_makes_the_counts_differ(store: Store) -> None:
    table_id = make_table(store)["id"]
    _state(store, table_id, "trg_a", "trg_b")
    with store.begin() as tx:
        claim_occurrences(tx, rows=[("trg_b", "window:x", table_id, new_id())], now=NOW)
    statements, _ = _writes(store, table_id, ["trg_a", "trg_b"])
    with store.begin() as tx:
        assert apply(tx, statements) is False


@SQLITE_ONLY
def test_a_run_refused_by_the_one_active_index_makes_the_counts_differ(store: Store) -> None:
    table_id = make_table(store)["id"]
    _state(store, table_id, "trg_a")
    first, _ = _writes(store, table_id, ["trg_a"])
    with store.begin() as tx:
        assert apply(tx, first) is True
    # a new identity and run id: the claim succeeds, the one-active-run index refuses the run
    again, _ = _writes(store, table_id, ["trg_a"])
    again = [(s, tuple("window:y" if v == "window:x" else v for v in p), n) for s, p, n in again]
    with store.begin() as tx:
        assert apply(tx, again) is False


@SQLITE_ONLY
def test_coarse_updates_look_rows_up_by_key(store: Store) -> None:
    """The ``UPDATE … FROM (VALUES …)`` statements probe the primary keys, never scan."""
    table_id = make_table(store)["id"]
    statements, _ = _writes(store, table_id, ["trg_a"])
    with store.read() as tx:
        for sql, params, _ in statements:
            if sql.startswith("UPDATE"):
                plan = tx.conn.exec_driver_sql("EXPLAIN QUERY PLAN " + sql, params).fetchall()
                details = " | ".join(str(row[-1]) for row in plan)
                assert "SCAN trigger_state" not in details and "SCAN tables" not in details
                assert "SEARCH" in details, details


@SQLITE_ONLY
def test_data_version_moves_only_for_other_connections_commits(store: Store) -> None:
    with store.pinned() as pinned:
        with pinned.begin_immediate() as tx:
            before = data_version(tx)
            tx.conn.exec_driver_sql("UPDATE tables SET name = name")  # our own write
        with pinned.begin_immediate() as tx:
            assert data_version(tx) == before
        make_table(store)  # another connection commits
        with pinned.begin_immediate() as tx:
            assert data_version(tx) != before


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)
TRIGGERS = st.lists(
    st.fixed_dictionaries({"id": st.text(min_size=1), "on": st.text()}, optional={"x": JSON})
    | JSON,
    max_size=6,
)


@given(value=TRIGGERS | JSON, indent=st.sampled_from([None, 0, 2]))
def test_array_with_texts_decodes_as_json_loads_and_keeps_each_objects_text(
    value: Any, indent: int | None
) -> None:
    text = json.dumps(value, indent=indent)
    decoded, texts = array_with_texts(text)
    assert decoded == json.loads(text)
    if isinstance(value, list):
        last = {v["id"]: v for v in value if isinstance(v, dict) and isinstance(v.get("id"), str)}
        assert {k: json.loads(t) for k, t in texts.items()} == last
    else:
        assert texts == {}


@pytest.mark.parametrize("text", ["[1,", "[1 2]", "[1] x", "[", "[,]", "[1,]", " "])
def test_array_with_texts_refuses_what_json_loads_refuses(text: str) -> None:
    with pytest.raises(json.JSONDecodeError):
        json.loads(text)
    with pytest.raises(json.JSONDecodeError):
        array_with_texts(text)
