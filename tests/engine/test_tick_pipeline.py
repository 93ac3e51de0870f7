"""The pipelined tick (``engine.tick_pipeline``): the same outcome as the sequential path on
both backends; on SQLite a plan read outside the lock is applied only when nothing else was
written since; on PostgreSQL a batch whose writes fail is rolled back alone.

Batches of 3 tables, so a dozen tables make several batches in flight.
"""

from __future__ import annotations

import os
import re
import sys
import threading
import uuid
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import psycopg
import pytest
from engine_support import (
    NOW,
    clock_trigger,
    date_trigger,
    finish_all,
    interval,
    make_table,
    minutes,
    runs_of,
    write_raw_triggers,
)
from sqlalchemy import func, select

from tocsin.core import identity
from tocsin.engine import tick_batch, tick_pipeline
from tocsin.errors import TransientStoreError
from tocsin.service import Tocsin
from tocsin.settings import Settings
from tocsin.store import ledger, tick_coarse
from tocsin.store import tables as schema
from tocsin.store.tx import Pinned

SQLITE = pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
PG = pytest.mark.parametrize(
    "backend", [pytest.param("postgresql", marks=pytest.mark.pg)], indirect=True
)


PAST = "2026-08-27T01:00"


@pytest.fixture(autouse=True)
def small_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tick_pipeline, "PIPELINE_TABLES", 3)


@pytest.fixture
def applied(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """What each pipelined batch's ``tick_coarse.apply`` returned, in order."""
    seen: list[bool] = []
    real = tick_coarse.apply

    def spy(tx: Any, statements: Any) -> bool:
        ok = real(tx, statements)
        seen.append(ok)
        return ok

    monkeypatch.setattr(tick_coarse, "apply", spy)
    return seen


def populate(t: Tocsin) -> list[str]:
    """14 tables of 7 flavours: clock kinds, date tables (the sequential path), a broken stored
    trigger beside a good one, a trashed table."""
    tables = []
    for i in range(14):
        table_id = make_table(t)
        tables.append(table_id)
        flavour = i % 7
        if flavour in (3, 4):
            t.insert_records(table_id, [{"Due": PAST}, {"Due": "2026-08-27T05:10"}], now=NOW)
        triggers = {
            0: [interval(60)],
            1: [clock_trigger({"type": "cron", "expression": "*/2 * * * *"}), interval(300)],
            2: [clock_trigger({"type": "daily", "at": "05:03"})],
            3: [date_trigger()],
            4: [interval(60), date_trigger(offset=-5)],
            5: [interval(120)],
            6: [interval(60)],
        }[flavour]
        t.set_triggers(table_id, triggers, now=NOW)
        if flavour == 5:
            good = t.get_triggers(table_id)
            write_raw_triggers(
                t, table_id, [{"id": "trg_broken", "on": "schedule"}, *good], now=NOW
            )
        if flavour == 6:
            t.trash_table(table_id, now=NOW)
    return tables


def canonical(t: Tocsin, tables: list[str]) -> list[Any]:
    """Per table (creation order): its runs and trigger states with ids replaced by positions."""
    out = []
    for table_id in tables:
        position = {trg["id"]: k for k, trg in enumerate(stored_triggers(t, table_id))}
        position["trg_broken"] = -1
        with t.store.read() as tx:
            cols = (
                schema.runs.c.trigger_id,
                schema.runs.c.identity,
                schema.runs.c.scheduled_for,
                schema.runs.c.status,
            )
            run_rows = tx.conn.execute(
                select(*cols, schema.runs.c.definition).where(schema.runs.c.table_id == table_id)
            ).all()
            rows = tx.conn.execute(
                select(
                    schema.trigger_state.c.trigger_id,
                    schema.trigger_state.c.last_consumed,
                    schema.trigger_state.c.next_due_at,
                    schema.trigger_state.c.retired,
                ).where(schema.trigger_state.c.table_id == table_id)
            ).all()
            table_row = tx.conn.execute(
                select(schema.tables.c.next_due_at, schema.tables.c.last_ticked_at).where(
                    schema.tables.c.id == table_id
                )
            ).one()
        runs_ = sorted(
            (position[r[0]], _record_free(r[1]), r[2], r[3], _without_ids(r[4])) for r in run_rows
        )
        states = sorted((position[r[0]], r[1], r[2], r[3]) for r in rows)
        out.append((runs_, states, tuple(table_row)))
    return out


def stored_triggers(t: Tocsin, table_id: str) -> list[dict[str, Any]]:
    with t.store.read() as tx:
        stmt = select(schema.tables.c.triggers).where(schema.tables.c.id == table_id)
        return list(tx.conn.execute(stmt).scalar_one())


def run_count(t: Tocsin, table_id: str) -> int:
    with t.store.read() as tx:
        stmt = (
            select(func.count()).select_from(schema.runs).where(schema.runs.c.table_id == table_id)
        )
        return int(tx.conn.execute(stmt).scalar_one())


def last_ticked(t: Tocsin, table_id: str) -> Any:
    with t.store.read() as tx:
        stmt = select(schema.tables.c.last_ticked_at).where(schema.tables.c.id == table_id)
        return tx.conn.execute(stmt).scalar_one()


def _record_free(identity_: str) -> str:
    """A date identity without its record id (the value tells a table's records apart)."""
    return re.sub(r"^record:[^:]+:", "record:", identity_)


def _without_ids(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_ids(v) for k, v in value.items() if k != "id"}
    if isinstance(value, list):
        return [_without_ids(v) for v in value]
    return value


def tick_rounds(t: Tocsin, tables: list[str]) -> list[dict[str, int]]:
    counts = []
    for k, at in enumerate([NOW, NOW + minutes(1), NOW + minutes(2), NOW + minutes(7)]):
        counts.append(t.tick(now=at, table_limit=100))
        if k % 2 == 0:
            for table_id in tables:
                if not t.get_table(table_id)["trashed"]:
                    finish_all(t, table_id, now=at)
    return counts


@pytest.fixture
def second(backend: str, tmp_path: Path) -> Iterator[Tocsin]:
    """Another fresh store on the same backend."""
    with ExitStack() as stack:
        if backend == "sqlite":
            url = f"sqlite:///{tmp_path}/second.db"
        else:
            base = os.environ["TOCSIN_TEST_PG_URL"]  # the backend fixture checked it
            schema = f"t_{uuid.uuid4().hex[:16]}"
            admin = base.replace("postgresql+psycopg://", "postgresql://")
            with psycopg.connect(admin, autocommit=True) as conn:
                conn.execute(f"CREATE SCHEMA {schema}")
            stack.callback(_drop_schema, admin, schema)
            url = f"{base}{'&' if '?' in base else '?'}options=-csearch_path%3D{schema}"
        t = Tocsin.open(url, settings=Settings(database_url=url))
        stack.callback(t.close)
        yield t


def _drop_schema(admin: str, schema: str) -> None:
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA {schema} CASCADE")


def test_pipelined_ticks_leave_what_sequential_ticks_leave(
    tocsin: Tocsin, second: Tocsin, applied: list[bool], monkeypatch: pytest.MonkeyPatch
) -> None:
    tables = populate(tocsin)
    piped = tick_rounds(tocsin, tables)
    assert len(applied) >= 4 and all(applied)  # batches really went through the pipeline
    assert piped[0]["runs_created"] > 0
    monkeypatch.setattr(tick_pipeline, "PIPELINE_TABLES", 10_000)  # the sequential path
    other = populate(second)
    calls = len(applied)
    assert tick_rounds(second, other) == piped
    assert len(applied) == calls
    assert canonical(second, other) == canonical(tocsin, tables)


def test_frozen_definitions_are_the_stored_triggers(tocsin: Tocsin, applied: list[bool]) -> None:
    tables = populate(tocsin)
    tocsin.tick(now=NOW, table_limit=100)
    assert applied
    for table_id in tables:
        if tocsin.get_table(table_id)["trashed"]:
            continue
        stored = {trg["id"]: trg for trg in tocsin.get_triggers(table_id)}
        for run in runs_of(tocsin, table_id):
            if run["record_id"] is None:
                assert run["definition"] == stored[run["trigger_id"]]


@SQLITE
def test_a_plan_read_before_another_writer_committed_is_not_applied(
    tocsin: Tocsin, applied: list[bool], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another connection commits between the writer's transactions, after a batch was planned:
    that batch's plan is dropped and its tables are read again under the lock."""
    tables = [make_table(tocsin) for _ in range(12)]
    for table_id in tables:
        tocsin.set_triggers(table_id, [interval(60)], now=NOW)
    real = tick_pipeline._Writer._transaction
    trashed: list[str] = []
    calls = {"n": 0}

    def meddling(self: Any, pinned: Pinned) -> bool:
        calls["n"] += 1
        if calls["n"] == 2:  # batch 1 committed; batch 2 is planned (waits for the lock)
            with self.pipe.cond:
                assert self.pipe.cond.wait_for(lambda: self.pipe.job is not None, timeout=10)
                planned = list(self.pipe.job.table_ids)
            for table_id in tables:  # every table not ticked yet, batch 2's included
                if last_ticked(tocsin, table_id) is None:
                    tocsin.trash_table(table_id, now=NOW)
                    trashed.append(table_id)
            assert set(planned) <= set(trashed)
        return bool(real(self, pinned))

    monkeypatch.setattr(tick_pipeline._Writer, "_transaction", meddling)
    counts = tocsin.tick(now=NOW, table_limit=100)
    assert applied[0] is True and len(trashed) == 9
    assert counts["runs_created"] == counts["tables_scanned"] == 3
    assert [run_count(tocsin, t) for t in tables] == [1, 1, 1] + [0] * 9


def test_a_lost_claim_rolls_the_batch_back_to_the_precise_path(
    tocsin: Tocsin, applied: list[bool]
) -> None:
    """An identity already in the ledger: the coarse writes' count differs, the batch goes
    through the precise path, which consumes the window without a run (SPEC §6)."""
    tables = [make_table(tocsin) for _ in range(9)]
    for table_id in tables:
        tocsin.set_triggers(table_id, [interval(60)], now=NOW)
    taken = tocsin.get_triggers(tables[4])[0]["id"]
    window = NOW  # an interval's first window is its anchor: the save
    with tocsin.store.begin() as tx:
        ledger.claim_occurrence(
            tx,
            trigger_id=taken,
            identity=identity.clock_identity(window),
            table_id=tables[4],
            run_id="elsewhere",
            now=NOW,
        )
    counts = tocsin.tick(now=NOW, table_limit=100)
    assert False in applied
    assert counts["tables_scanned"] == 9 and counts["runs_created"] == 8
    assert [len(runs_of(tocsin, t)) for t in tables] == [1, 1, 1, 1, 0, 1, 1, 1, 1]
    [trigger] = tocsin.preview(tables[4], now=NOW)["triggers"]
    assert trigger["last_consumed_window_at"] == window.replace(tzinfo=None).isoformat()
    assert not trigger["due_now"]


def test_a_failing_coarse_write_sends_its_tables_down_the_precise_path(
    tocsin: Tocsin, monkeypatch: pytest.MonkeyPatch
) -> None:
    tables = [make_table(tocsin) for _ in range(9)]
    for table_id in tables:
        tocsin.set_triggers(table_id, [interval(60)], now=NOW)
    real = tick_coarse.apply
    calls = {"n": 0}

    def flaky(tx: Any, statements: Any) -> bool:
        calls["n"] += 1
        if calls["n"] == 2:
            raise RuntimeError("disk hiccup")
        return real(tx, statements)

    monkeypatch.setattr(tick_coarse, "apply", flaky)
    counts = tocsin.tick(now=NOW, table_limit=100)
    assert calls["n"] == 3
    assert counts["tables_scanned"] == counts["runs_created"] == 9
    assert [len(runs_of(tocsin, t)) for t in tables] == [1] * 9


@SQLITE
def test_a_writer_that_cannot_lock_leaves_everything_to_the_sequential_path(
    tocsin: Tocsin, applied: list[bool], monkeypatch: pytest.MonkeyPatch
) -> None:
    tables = [make_table(tocsin) for _ in range(7)]
    for table_id in tables:
        tocsin.set_triggers(table_id, [interval(60)], now=NOW)

    def locked(self: Pinned) -> Any:
        raise TransientStoreError("database is locked")

    monkeypatch.setattr(Pinned, "begin_immediate", locked)
    counts = tocsin.tick(now=NOW, table_limit=100)
    assert applied == []
    assert counts["tables_scanned"] == counts["runs_created"] == 7
    assert all(len(runs_of(tocsin, t)) == 1 for t in tables)
    assert not [th for th in threading.enumerate() if th.name == "tocsin-tick-writer"]


def test_only_file_databases_pipeline(tmp_path: Path) -> None:
    memory = Tocsin.open("sqlite://", settings=Settings(database_url="sqlite://"))
    try:
        assert not tick_pipeline.pipelined(memory.store, 1000)
    finally:
        memory.close()
    url = f"sqlite:///{tmp_path}/f.db"
    file = Tocsin.open(url, settings=Settings(database_url=url))
    try:
        assert tick_pipeline.pipelined(file.store, 4)
        assert not tick_pipeline.pipelined(file.store, 3)  # one batch: nothing to overlap
    finally:
        file.close()


def test_the_switch_interval_is_lowered_inside_and_put_back_after() -> None:
    before = sys.getswitchinterval()
    with tick_pipeline.quick_switches():
        assert sys.getswitchinterval() == tick_pipeline.SWITCH_INTERVAL_S
        with tick_pipeline.quick_switches():
            assert sys.getswitchinterval() == tick_pipeline.SWITCH_INTERVAL_S
        assert sys.getswitchinterval() == tick_pipeline.SWITCH_INTERVAL_S
    assert sys.getswitchinterval() == before


def test_a_lower_switch_interval_the_application_set_is_kept() -> None:
    before = sys.getswitchinterval()
    sys.setswitchinterval(0.0001)
    low = sys.getswitchinterval()  # as CPython stores it (microseconds)
    try:
        with tick_pipeline.quick_switches():
            assert sys.getswitchinterval() == low
        assert sys.getswitchinterval() == low
    finally:
        sys.setswitchinterval(before)


def test_a_pipelined_tick_puts_the_switch_interval_back(tocsin: Tocsin) -> None:
    before = sys.getswitchinterval()
    for table_id in [make_table(tocsin) for _ in range(7)]:
        tocsin.set_triggers(table_id, [interval(60)], now=NOW)
    assert tocsin.tick(now=NOW, table_limit=100)["runs_created"] == 7
    assert sys.getswitchinterval() == before


@PG
def test_a_batch_whose_writes_fail_is_rolled_back_alone(
    tocsin: Tocsin, monkeypatch: pytest.MonkeyPatch
) -> None:
    """PostgreSQL: each batch is its own transaction; the finisher rolls a failing one back
    (its tables wait for the next tick) and commits the others."""
    tables = [make_table(tocsin) for _ in range(9)]
    for table_id in tables:
        tocsin.set_triggers(table_id, [interval(60)], now=NOW)
    real = tick_coarse.apply

    def coarse(tx: Any, statements: Any) -> bool:
        if _mentions(statements, tables[3]):  # the second batch: coarse, then precise writes fail
            raise RuntimeError("writes down")
        return real(tx, statements)

    def precise(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("writes still down")

    monkeypatch.setattr(tick_coarse, "apply", coarse)
    monkeypatch.setattr(tick_pipeline, "write_decided", precise)
    counts = tocsin.tick(now=NOW, table_limit=100)
    assert counts["tables_scanned"] == counts["runs_created"] == 6
    assert [run_count(tocsin, t) for t in tables] == [1, 1, 1, 0, 0, 0, 1, 1, 1]
    monkeypatch.setattr(tick_coarse, "apply", real)
    monkeypatch.setattr(tick_pipeline, "write_decided", tick_batch.write_decided)
    assert tocsin.tick(now=NOW, table_limit=100)["runs_created"] == 3  # they were not stamped
    assert [run_count(tocsin, t) for t in tables] == [1] * 9


def _mentions(statements: Any, value: str) -> bool:
    """Whether a prepared statement binds ``value`` (PostgreSQL binds one list per column)."""
    return any(
        value == p or (isinstance(p, list) and value in p)
        for _, params, _ in statements
        for p in params
    )


def test_batch_sizes(monkeypatch: pytest.MonkeyPatch) -> None:
    """At most PIPELINE_TABLES, at least MIN_BATCH_TABLES; two batches from twice the minimum."""
    monkeypatch.setattr(tick_pipeline, "PIPELINE_TABLES", 250)
    monkeypatch.setattr(tick_pipeline, "MIN_BATCH_TABLES", 100)
    sizes = {n: tick_pipeline.batch_size(n) for n in (1, 100, 150, 200, 201, 400, 2000)}
    assert sizes == {1: 100, 100: 100, 150: 100, 200: 100, 201: 101, 400: 200, 2000: 250}
    assert [list(map(len, tick_pipeline._batches(["t"] * n))) for n in (200, 600)] == [
        [100, 100],
        [250, 250, 100],
    ]
