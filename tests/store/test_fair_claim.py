"""The table-run claim (``store.runs.claim_scoped_runs``): the scopes in turn, a worker's room per
tenant, and a trigger's ``max_concurrent`` held against two claimers at once."""

from __future__ import annotations

import threading
from datetime import timedelta
from typing import Any

import pytest

from tocsin.core.model import Table
from tocsin.errors import TransientStoreError
from tocsin.store import Store
from tocsin.store.runs import claim_scoped_runs, next_turn, tenant_of

from .helpers import CLAIM_AT, NOW, PG_ONLY, claim_ids, make_table, pending_table_runs

LATER = CLAIM_AT


def _scope(table: Table) -> str:
    return f"{table.scope}:{table.scope_id}"


def test_ready_runs_of_different_scopes_interleave(store: Store, table: Table) -> None:
    """A's 50 runs are all older than B's and C's: a claim of 6 takes two of each scope, the
    oldest of each, not A's six oldest; the next claim goes on after the last scope it took."""
    other_b, other_c = make_table(store), make_table(store)
    a_ids = pending_table_runs(store, table, 50)
    later = NOW + timedelta(minutes=1)
    b_ids, c_ids = (pending_table_runs(store, t, 3, at=later) for t in (other_b, other_c))
    claimed = claim_ids(store, 6)
    assert {run_id for run_id, _ in claimed} == {*a_ids[:2], *b_ids[:2], *c_ids[:2]}
    scopes = {scope for _, scope in claimed}
    assert scopes == {_scope(t) for t in (table, other_b, other_c)}
    after = next_turn("", scopes)
    assert after == max(scopes)
    # visiting from past ``after``: the first scope in key order comes first again, one run each
    assert len(claim_ids(store, 3, after=after)) == 3


def test_a_claim_visits_the_scopes_in_turn_from_where_the_last_stopped(
    store: Store, table: Table
) -> None:
    """Four scopes with many runs each, claims of 2: each claim takes the next two scopes."""
    tables = sorted([table, *(make_table(store) for _ in range(3))], key=_scope)
    for t in tables:
        pending_table_runs(store, t, 5)
    after, seen = "", []
    for _ in range(4):
        claimed = claim_ids(store, 2, after=after)
        scopes = sorted({scope for _, scope in claimed})
        seen.append(scopes)
        after = next_turn(after, scopes)
    keys = [_scope(t) for t in tables]
    assert seen == [keys[:2], keys[2:], keys[:2], keys[2:]]


def test_a_tenant_at_its_cap_gets_nothing_and_another_its_room(store: Store, table: Table) -> None:
    other = make_table(store)
    pending_table_runs(store, table, 16)
    pending_table_runs(store, other, 4)
    held = {_scope(table): 7}
    claimed = claim_ids(store, 8, held=held, cap=7)
    assert {scope for _, scope in claimed} == {_scope(other)}  # A's 7 running: none more
    assert len(claim_ids(store, 8, held={_scope(table): 5}, cap=7)) == 2  # A's room: 2


def test_a_limited_triggers_runs_have_a_scope_within_their_tenants(
    store: Store, table: Table
) -> None:
    trigger = {"id": "two", "on": "created", "max_concurrent": 2, "actions": []}
    pending_table_runs(store, table, 5, trigger=trigger)
    pending_table_runs(store, table, 3)
    claimed = claim_ids(store, 10)
    limited = [scope for _, scope in claimed if scope != _scope(table)]
    assert limited == [f"{_scope(table)}/{table.id}/two"] * 2  # its limit: 2 of its 5
    assert {tenant_of(scope) for _, scope in claimed} == {_scope(table)}
    assert len(claimed) == 5 and len(claim_ids(store, 10)) == 0  # the other 3 wait for a slot


def test_a_tenants_scopes_in_one_claim_share_its_room(store: Store, table: Table) -> None:
    """A tenant with two scopes in one claim (a limited trigger's and its own) gets no more than
    its room between them, each scope's oldest first; a tenant alone in its scope its share."""
    other = make_table(store)
    trigger = {"id": "five", "on": "created", "max_concurrent": 5, "actions": []}
    limited = pending_table_runs(store, table, 4, trigger=trigger)
    plain = pending_table_runs(store, table, 4)
    others = pending_table_runs(store, other, 4)
    claimed = claim_ids(store, 12, held={_scope(table): 4}, cap=7)  # the tenant's room: 3
    mine = [run_id for run_id, scope in claimed if tenant_of(scope) == _scope(table)]
    assert len(mine) == 3
    assert {limited[0], plain[0]} <= set(mine) <= {*limited[:2], *plain[:2]}
    assert {run_id for run_id, scope in claimed if scope == _scope(other)} == set(others)


@PG_ONLY
def test_two_claimers_at_once_never_pass_a_triggers_limit(store: Store, table: Table) -> None:
    """A claims its trigger's 2 and holds its transaction open; B, meanwhile, skips A's locked
    rows and takes 2 more, then waits for A's advisory lock: once A commits, B counts 4 > 2 and
    rolls back (``TransientStoreError``), and a claim after that takes none."""
    trigger = {"id": "two", "on": "created", "max_concurrent": 2, "actions": []}
    pending_table_runs(store, table, 6, trigger=trigger)
    a_claimed, a_commit = threading.Event(), threading.Event()
    outcome: dict[str, Any] = {}

    def claimer_a() -> None:
        with store.begin() as tx:
            outcome["a"] = len(claim_scoped_runs(tx, now=LATER, limit=2))
            a_claimed.set()
            assert a_commit.wait(30)

    def claimer_b() -> None:
        try:
            with store.begin() as tx:
                outcome["b"] = len(claim_scoped_runs(tx, now=LATER, limit=2))
        except TransientStoreError as exc:
            outcome["b"] = exc

    first = threading.Thread(target=claimer_a)
    first.start()
    assert a_claimed.wait(30)
    second = threading.Thread(target=claimer_b)
    second.start()
    _until_waiting_for_advisory_lock(store)
    a_commit.set()
    first.join(30)
    second.join(30)
    assert outcome["a"] == 2
    assert isinstance(outcome["b"], TransientStoreError)
    assert claim_ids(store, 10) == []  # the trigger's 2 are running: none more


def _until_waiting_for_advisory_lock(store: Store) -> None:
    pause = threading.Event()
    for _ in range(600):
        with store.read() as tx:
            waiting = tx.conn.exec_driver_sql(
                "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted"
            ).scalar_one()
        if waiting:
            return
        pause.wait(0.05)
    pytest.fail("claimer B never waited for A's advisory lock")
