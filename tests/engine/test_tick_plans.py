"""The tick's keyed writes on PostgreSQL (``dialects.keyed_access_only`` after the run insert).

A batch's consumed windows and finished tables are updated by primary key. Left to itself, the
planner hashed every trigger state (and every table) to update a batch of them: 17 ms of a 30 ms
update of 5,000 states among 50,000, per batch, growing with the number of triggers. The plans
are read inside a real tick's transaction, under the settings it runs with.
"""

from __future__ import annotations

import copy
import uuid
from typing import Any

import pytest
from engine_support import NOW, interval, make_table, minutes
from sqlalchemy import event, insert, select

from tocsin.core.schedules.identity import definition_digest
from tocsin.engine.ids import uuid7s
from tocsin.service import Tocsin
from tocsin.store import pools
from tocsin.store.schema import tables, trigger_definitions, trigger_state

TABLES = 400
PER_TABLE = 5


def clone(t: Tocsin, template: str, n: int) -> None:
    """``n`` copies of the template table's rows (fresh ids), inserted in bulk."""
    with t.store.engine.begin() as conn:
        table = dict(conn.execute(select(tables).where(tables.c.id == template)).mappings().one())
        rows = conn.execute(select(trigger_state).where(trigger_state.c.table_id == template))
        states = [dict(r) for r in rows.mappings()]
        table_rows, state_rows, definitions = [], [], []
        for new_id in uuid7s(NOW, n):
            ids = {s["trigger_id"]: f"trg_{uuid.uuid4().hex[:20]}" for s in states}
            config = copy.deepcopy(table["triggers"])
            hashes = {}
            for trigger in config:
                trigger["id"] = ids[trigger["id"]]
                hashes[trigger["id"]] = definition_digest(trigger)
                definitions.append({"hash": hashes[trigger["id"]], "definition": trigger})
            table_rows.append({**table, "id": new_id, "triggers": config})
            state_rows += [
                {
                    **s,
                    "trigger_id": ids[s["trigger_id"]],
                    "table_id": new_id,
                    "definition_hash": hashes[ids[s["trigger_id"]]],
                }
                for s in states
            ]
        conn.execute(insert(tables), table_rows)
        conn.execute(insert(trigger_state), state_rows)
        conn.execute(insert(trigger_definitions), definitions)
        conn.exec_driver_sql("ANALYZE")


@pytest.mark.parametrize("backend", [pytest.param("postgresql", marks=pytest.mark.pg)])
def test_consumed_windows_and_finished_tables_are_updated_by_key(tocsin: Tocsin) -> None:
    template = make_table(tocsin)
    tocsin.set_triggers(template, [interval(60 * (k + 1)) for k in range(PER_TABLE)], now=NOW)
    clone(tocsin, template, TABLES - 1)
    plans: dict[str, str] = {}

    ticker = tocsin.store.engines[pools.TICKER]  # the tick's pool

    @event.listens_for(ticker, "before_cursor_execute")
    def explain(conn: Any, cursor: Any, statement: str, params: Any, *_: Any) -> None:
        for name in ("UPDATE trigger_state SET last_consumed", "UPDATE tables SET next_due_at"):
            if name in statement and name not in plans:
                cursor.execute(f"EXPLAIN {statement}", params)
                plans[name] = "\n".join(str(row[0]) for row in cursor.fetchall())

    report = tocsin.tick(now=NOW + minutes(1), table_limit=TABLES)
    event.remove(ticker, "before_cursor_execute", explain)
    assert report["runs_created"] == TABLES * PER_TABLE
    assert len(plans) == 2
    for plan in plans.values():
        assert "Seq Scan" not in plan and "Hash" not in plan, plan
    assert "pk_trigger_state" in plans["UPDATE trigger_state SET last_consumed"]
    assert "pk_tables" in plans["UPDATE tables SET next_due_at"]
