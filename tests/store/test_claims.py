"""Candidate tables for the tick (SPEC §6; DESIGN §5; STYLE F2, R5): filter, rotation, locks."""

from __future__ import annotations

import json
import threading
import uuid
from contextlib import ExitStack
from datetime import timedelta
from typing import Any

from tocsin.store import Store
from tocsin.store import records as rec
from tocsin.store.claims import claim_candidate_tables, finish_tables

from .helpers import NOW, PG_ONLY, make_table, new_id

TRIGGERS = [{"id": "trg_0123456789ab", "on": "schedule", "schedule": {"type": "interval"}}]


def _candidate(store: Store, **table_fields: Any) -> str:
    table = make_table(store, **table_fields)
    with store.begin() as tx:
        rec.set_table_triggers(tx, table_id=table.id, triggers=TRIGGERS, now=NOW)
    return str(table.id)


def _claim_ids(store: Store, *, now: Any = NOW, limit: int = 100, **claim: Any) -> list[str]:
    """Claim the candidates (one transaction)."""
    with store.begin() as tx:
        return [t["id"] for t in claim_candidate_tables(tx, now=now, limit=limit, **claim)]


def test_only_live_tables_with_triggers_and_due_work_are_candidates(store: Store) -> None:
    never_evaluated = _candidate(store)
    due = _candidate(store)
    idle = _candidate(store)
    trashed = _candidate(store)
    make_table(store)  # no triggers: SQL NULL
    cleared = _candidate(store)
    with store.begin() as tx:
        rec.set_table_next_due(tx, table_id=due, next_due_at=NOW)
        rec.set_table_next_due(tx, table_id=idle, next_due_at=NOW + timedelta(seconds=1))
        rec.set_table_trashed(tx, table_id=trashed, trashed=True, now=NOW)
        rec.set_table_triggers(tx, table_id=cleared, triggers=None, now=NOW)
    assert sorted(_claim_ids(store)) == sorted([never_evaluated, due])
    assert idle in _claim_ids(store, now=NOW + timedelta(seconds=1))
    everything = [never_evaluated, due, idle, trashed, cleared, new_id()]
    # only_ids (a failed batch's tables, one by one) still needs the predicate to hold
    assert sorted(_claim_ids(store, only_ids=everything)) == sorted([never_evaluated, due])
    assert _claim_ids(store, only_ids=[idle]) == [] and _claim_ids(store, only_ids=[]) == []
    # skip_ids: what the tick already took in an earlier batch
    assert _claim_ids(store, skip_ids=[due]) == [never_evaluated]
    assert len(_claim_ids(store, limit=1)) == 1


def test_claimed_tables_come_back_as_table_dicts(store: Store) -> None:
    table_id = _candidate(store)
    with store.begin() as tx:
        [claimed] = claim_candidate_tables(tx, now=NOW, limit=10)
    assert claimed == {
        "id": table_id,
        "columns": {"Due": "datetime", "Status": "text"},
        "triggers": claimed["triggers"],
    }
    # the config as its JSON text: the tick decodes one table's at a time
    assert isinstance(claimed["triggers"], str) and json.loads(claimed["triggers"]) == TRIGGERS


def test_rotation_reaches_every_table_in_turn(store: Store) -> None:
    ids = sorted(_candidate(store) for _ in range(5))
    seen: list[list[str]] = []
    for tick in range(4):
        now = NOW + timedelta(minutes=tick)
        with store.begin() as tx:
            claimed = [t["id"] for t in claim_candidate_tables(tx, now=now, limit=2)]
            finish_tables(tx, values=[(i, now) for i in claimed], now=now)
        seen.append(claimed)
    # never ticked first (by id), then least recently ticked
    assert seen[0] == ids[0:2] and seen[1] == ids[2:4]
    assert seen[2] == [ids[4], ids[0]] and seen[3] == ids[1:3]
    with store.read() as tx:
        stamped = rec.get_table(tx, table_id=ids[4])
    later = NOW + timedelta(minutes=2)
    assert stamped is not None and stamped.last_ticked_at == later
    assert stamped.next_due_at == later


def test_finish_tables_sets_next_due_and_accepts_nothing(store: Store) -> None:
    table_id = _candidate(store)
    with store.begin() as tx:
        finish_tables(tx, values=[], now=NOW)
        finish_tables(tx, values=[(table_id, NOW + timedelta(hours=1))], now=NOW)
    with store.read() as tx:
        finished = rec.get_table(tx, table_id=table_id)
    assert _claim_ids(store, now=NOW + timedelta(minutes=59)) == []
    assert _claim_ids(store, now=NOW + timedelta(hours=1)) == [table_id]
    assert finished is not None and finished.last_ticked_at == NOW
    assert finished.next_due_at == NOW + timedelta(hours=1)


@PG_ONLY
def test_overlapping_pg_ticks_skip_locked_tables(store: Store) -> None:
    ids = {_candidate(store) for _ in range(5)}
    with ExitStack() as stack:
        first = stack.enter_context(store.begin())
        second = stack.enter_context(store.begin())
        got_first = {t["id"] for t in claim_candidate_tables(first, now=NOW, limit=2)}
        got_second = {t["id"] for t in claim_candidate_tables(second, now=NOW, limit=10)}
    assert len(got_first) == 2 and len(got_second) == 3
    assert got_first.isdisjoint(got_second) and got_first | got_second == ids


def test_concurrent_ticks_claim_disjoint_sets(store: Store) -> None:
    """Two ticks at once, each claiming two tables per transaction (as the tick's batches do,
    skipping what it took before): PG by SKIP LOCKED, SQLite by BEGIN IMMEDIATE; a table the
    other tick finished (not due again) is no candidate any more."""
    ids = {_candidate(store) for _ in range(4)}
    results: list[set[str]] = []
    first_claimed = threading.Event()
    release_first = threading.Event()
    not_due = NOW + timedelta(hours=1)

    def tick(hold: bool) -> None:
        got: list[str] = []
        while True:
            with store.begin() as tx:
                batch = claim_candidate_tables(tx, now=NOW, limit=2, skip_ids=got)
                claimed = [t["id"] for t in batch]
                finish_tables(tx, values=[(i, not_due) for i in claimed], now=NOW)
                if hold and not got:
                    first_claimed.set()
                    release_first.wait(10)
            if not claimed:
                break
            got += claimed
        results.append(set(got))

    holder = threading.Thread(target=tick, args=(True,))
    holder.start()
    assert first_claimed.wait(10)
    other = threading.Thread(target=tick, args=(False,))
    other.start()
    other.join(0.3 if store.is_postgres else 0.1)
    release_first.set()
    holder.join(10)
    other.join(10)
    assert len(results) == 2
    assert results[0].isdisjoint(results[1]) and results[0] | results[1] == ids


@PG_ONLY
def test_record_writes_do_not_wait_for_a_tick_holding_the_table(store: Store) -> None:
    """The tick's lock is FOR NO KEY UPDATE: a record insert's foreign-key check (KEY SHARE)
    does not wait for a long date-trigger pass; a config write's FOR UPDATE still does."""
    from sqlalchemy import text

    table_id = _candidate(store)
    with store.begin() as ticking:
        assert claim_candidate_tables(ticking, now=NOW, limit=10, only_ids=[table_id]) != []
        with store.begin() as writer:
            writer.conn.execute(text("SET LOCAL lock_timeout = '2s'"))
            rows = [{"id": str(uuid.uuid4()), "data": {}}]
            assert len(rec.insert_records(writer, table_id=table_id, rows=rows, now=NOW)) == 1
