"""Tables and records in the store (SPEC §1–§2): shapes, trash, paging order."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import event

from tocsin.core.model import Table
from tocsin.store import Store
from tocsin.store import records as rec

from .helpers import NOW, make_table, new_id, query_plan


def test_insert_table_returns_the_documented_shape(store: Store) -> None:
    table = make_table(store, requires_approval=True, scp_rules=[{"rule": "x"}])
    assert set(table.as_dict()) >= {
        "id", "scope", "scope_id", "name", "columns", "trashed", "requires_approval",
        "scp_rules", "created_at", "updated_at",
    }  # fmt: skip
    assert table.columns == {"Due": "datetime", "Status": "text"}
    assert table.triggers is None and table.trashed is False
    assert table.requires_approval is True and table.scp_rules == [{"rule": "x"}]
    assert table.created_at == NOW and table.created_at.tzinfo is not None
    with store.read() as tx:
        assert rec.get_table(tx, table_id=table.id) == table


def test_columns_keep_authored_order(store: Store) -> None:
    columns = {"Zeta": "text", "Alpha": "number", "Mid": "date"}
    table = make_table(store, columns=columns)
    with store.read() as tx:
        got = rec.get_table(tx, table_id=table.id)
    assert got is not None and list(got.columns) == ["Zeta", "Alpha", "Mid"]


def test_trashed_table_is_hidden_unless_asked(store: Store, table: Table) -> None:
    later = NOW + timedelta(minutes=1)
    with store.begin() as tx:
        assert rec.set_table_trashed(tx, table_id=table.id, trashed=True, now=later)
        assert not rec.set_table_trashed(tx, table_id=table.id, trashed=True, now=later)
    with store.read() as tx:
        assert rec.get_table(tx, table_id=table.id) is None
        got = rec.get_table(tx, table_id=table.id, include_trashed=True)
        assert got is not None and got.trashed is True and got.updated_at == later
        assert rec.list_tables(tx, scope="chatroom", scope_id=table.scope_id) == []
    with store.begin() as tx:
        assert rec.set_table_trashed(tx, table_id=table.id, trashed=False, now=later)
    with store.read() as tx:
        assert rec.get_table(tx, table_id=table.id) is not None


def test_triggers_none_is_sql_null_and_a_list_round_trips(store: Store, table: Table) -> None:
    triggers = [{"id": "trg_0123456789ab", "on": "schedule", "schedule": {"type": "interval"}}]
    with store.begin() as tx:
        assert rec.set_table_triggers(tx, table_id=table.id, triggers=triggers, now=NOW)
        got = rec.get_table(tx, table_id=table.id)
        assert got is not None and got.triggers == triggers
        rec.set_table_triggers(tx, table_id=table.id, triggers=None, now=NOW)
        rec.set_table_scp_rules(tx, table_id=table.id, scp_rules=None, now=NOW)
        raw = tx.conn.exec_driver_sql(
            "SELECT count(*) FROM tables WHERE triggers IS NULL AND scp_rules IS NULL"
        ).scalar_one()
    assert raw == 1


def test_next_due_is_stored(store: Store, table: Table) -> None:
    due = NOW + timedelta(hours=1)
    with store.begin() as tx:
        rec.set_table_next_due(tx, table_id=table.id, next_due_at=due)
        got = rec.get_table(tx, table_id=table.id)
    assert got is not None and got.next_due_at == due


def test_records_insert_get_update_trash(store: Store, table: Table) -> None:
    rid = new_id()
    later = NOW + timedelta(seconds=5)
    with store.begin() as tx:
        [made] = rec.insert_records(
            tx, table_id=table.id, rows=[{"id": rid, "data": {"Status": "Open"}}], now=NOW
        )
        assert made == {
            "id": rid, "table_id": table.id, "data": {"Status": "Open"}, "trashed": False,
            "created_at": NOW, "updated_at": NOW,
        }  # fmt: skip
        assert rec.get_record(tx, table_id=table.id, record_id=rid) == made
        updated = rec.update_record_data(
            tx, table_id=table.id, record_id=rid, data={"Status": "Done"}, now=later
        )
        assert updated is not None and updated["data"] == {"Status": "Done"}
        assert updated["updated_at"] == later and updated["created_at"] == NOW
        assert rec.update_record_data(
            tx, table_id=table.id, record_id=new_id(), data={}, now=later
        ) is None  # fmt: skip
        trashed = rec.set_record_trashed(
            tx, table_id=table.id, record_id=rid, trashed=True, now=later
        )
        assert trashed is not None and trashed["trashed"] is True
        again = rec.set_record_trashed(
            tx, table_id=table.id, record_id=rid, trashed=True, now=later
        )
        assert again is None  # no state change
        assert rec.get_record(tx, table_id=table.id, record_id=rid) is None
        hidden = rec.get_record(tx, table_id=table.id, record_id=rid, include_trashed=True)
        assert hidden is not None and hidden["trashed"] is True
        assert rec.count_live_records(tx, table_id=table.id) == 0


def _insert_spread(store: Store, table_id: str, n: int) -> list[str]:
    """n records; pairs share a created_at so the id breaks the tie."""
    ids = sorted(new_id() for _ in range(n))
    with store.begin() as tx:
        for i, rid in enumerate(reversed(ids)):
            at = NOW + timedelta(seconds=i // 2)
            rec.insert_records(tx, table_id=table_id, rows=[{"id": rid, "data": {}}], now=at)
    with store.read() as tx:
        items, _ = rec.list_records(tx, table_id=table_id, skip=0, limit=1000)
    return [item["id"] for item in items]


def test_list_records_orders_by_created_at_then_id_and_counts(store: Store, table: Table) -> None:
    order = _insert_spread(store, table.id, 7)
    with store.begin() as tx:
        rec.set_record_trashed(tx, table_id=table.id, record_id=order[0], trashed=True, now=NOW)
    with store.read() as tx:
        items, total = rec.list_records(tx, table_id=table.id, skip=1, limit=2)
        assert total == 6 and [i["id"] for i in items] == order[2:4]
        _, with_trashed = rec.list_records(
            tx, table_id=table.id, skip=0, limit=10, include_trashed=True
        )
        assert with_trashed == 7
    keys = [(i, rid) for i, rid in enumerate(order)]
    assert keys == sorted(keys)


@pytest.mark.parametrize("page_size", [1, 2, 3, 10])
def test_page_live_records_walks_every_live_record_once(
    store: Store, table: Table, page_size: int
) -> None:
    order = _insert_spread(store, table.id, 9)
    with store.begin() as tx:
        rec.set_record_trashed(tx, table_id=table.id, record_id=order[4], trashed=True, now=NOW)
    seen: list[str] = []
    after = None
    with store.read() as tx:
        while True:
            page = rec.page_live_records(tx, table_id=table.id, after=after, limit=page_size)
            if not page:
                break
            assert len(page) <= page_size
            seen.extend(r["id"] for r in page)
            after = (page[-1]["created_at"], page[-1]["id"])
    assert seen == [rid for rid in order if rid != order[4]]


def test_page_live_records_ignores_other_tables(store: Store, table: Table) -> None:
    other = make_table(store)
    with store.begin() as tx:
        rec.insert_records(tx, table_id=other.id, rows=[{"id": new_id(), "data": {}}], now=NOW)
        assert rec.page_live_records(tx, table_id=table.id, after=None, limit=10) == []
        assert rec.page_records is rec.page_live_records


def test_read_only_transaction_refuses_writes(store: Store) -> None:
    with store.read() as tx, pytest.raises(RuntimeError):
        rec.set_table_next_due(tx, table_id=new_id(), next_due_at=None)


def test_the_cursor_page_is_served_by_ix_records_page(store: Store, table: Table) -> None:
    """DESIGN §5: the tick's page query is an index range scan, not a table scan."""
    seen: list[tuple[str, Any]] = []

    def capture(_conn: Any, _cursor: Any, statement: str, params: Any, *_: Any) -> None:
        seen.append((statement, params))

    _insert_spread(store, table.id, 4)
    event.listen(store.engine, "before_cursor_execute", capture)
    try:
        with store.read() as tx:
            rec.page_live_records(tx, table_id=table.id, after=(NOW, "0"), limit=2)
    finally:
        event.remove(store.engine, "before_cursor_execute", capture)
    statement, params = next((s, p) for s, p in seen if "FROM records" in s)
    explain = "EXPLAIN " if store.is_postgres else "EXPLAIN QUERY PLAN "
    with store.read() as tx:
        if store.is_postgres:  # tiny tables: make the planner show whether it *can* use the index
            tx.conn.exec_driver_sql("SET LOCAL enable_seqscan = off")
        plan = tx.conn.exec_driver_sql(explain + statement, params).all()
    assert "ix_records_page" in " ".join(map(str, plan))


def test_the_cursor_page_is_an_index_seek(store: Store, table: Table) -> None:
    """A page after a cursor seeks to it, so it costs the same deep in a large table (the OR
    spelling made SQLite walk the index from the table's first record on every page)."""
    after = (NOW, new_id())
    plan = query_plan(
        store, lambda tx: rec.page_live_records(tx, table_id=table.id, after=after, limit=10)
    )
    assert "ix_records_page" in plan
    assert "(created_at,id)>" in plan or "ROW(created_at" in plan, plan
