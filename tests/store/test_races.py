"""Real concurrency against the store (DESIGN §6): ledger races and concurrent migration."""

from __future__ import annotations

import subprocess
import sys
import threading
from typing import Any

import pytest

from support.waiting import wait_for
from tocsin.core.model import TriggerState
from tocsin.store import Store, open_store
from tocsin.store.ledger import claim_occurrences, fired_identities
from tocsin.store.migrate import current_revision, head_revision
from tocsin.store.state import get_state, upsert_state
from tocsin.store.tx import Tx

from .helpers import NOW, PG_ONLY, make_table, new_id

RACERS = 4


def _claim_in(tx: Tx, identity: str) -> bool:
    claims = [("t", "trg_race", identity, new_id())]
    return claim_occurrences(tx, claims=claims, now=NOW) == {("t", "trg_race", identity)}


def _claim(store: Store, identity: str) -> bool:
    with store.begin() as tx:
        return _claim_in(tx, identity)


def test_racing_claims_of_one_identity_give_exactly_one_winner(store: Store) -> None:
    barrier = threading.Barrier(RACERS)
    results: list[bool] = []
    errors: list[BaseException] = []

    def racer() -> None:
        try:
            barrier.wait(10)
            results.append(_claim(store, "rec|2026-08-27"))
        except BaseException as exc:  # reported below, not swallowed
            errors.append(exc)

    threads = [threading.Thread(target=racer) for _ in range(RACERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert errors == []
    assert sorted(results) == [False] * (RACERS - 1) + [True]


def _wait_until_blocked(store: Store, timeout_s: float = 10.0) -> None:
    """Until some other backend of this database waits on a lock (PostgreSQL)."""

    def waiting() -> int:
        with store.engine.connect() as conn:
            count: int = conn.exec_driver_sql(
                "SELECT count(*) FROM pg_stat_activity "
                "WHERE wait_event_type = 'Lock' AND datname = current_database()"
            ).scalar_one()
        return count

    wait_for("the second claim to wait for the first", waiting, timeout=timeout_s, every=0.02)


@PG_ONLY
@pytest.mark.parametrize(("first_commits", "second_wins"), [(True, False), (False, True)])
def test_pg_second_claim_waits_for_the_first_transaction(
    store: Store, first_commits: bool, second_wins: bool
) -> None:
    outcome: dict[str, Any] = {}
    with store.engine.connect() as conn:
        first = conn.begin()
        tx = Tx(conn=conn, is_postgres=True)
        assert _claim_in(tx, "w")
        thread = threading.Thread(target=lambda: outcome.update(won=_claim(store, "w")))
        thread.start()
        _wait_until_blocked(store)
        if first_commits:
            first.commit()
        else:
            first.rollback()
        thread.join(10)
    assert outcome == {"won": second_wins}
    with store.read() as tx2:
        assert fired_identities(tx2, table_id="t", trigger_id="trg_race", identities=["w"]) == {"w"}


def _state_for(store: Store, table_id: str) -> TriggerState:
    with store.begin() as tx:
        return upsert_state(
            tx, trigger_id="trg_shared", table_id=table_id, kind="interval", anchor=NOW,
            schedule_hash="h", now=NOW, next_due_at=NOW,
        )  # fmt: skip


@PG_ONLY
def test_pg_two_tables_create_one_trigger_id_without_waiting_on_each_other(store: Store) -> None:
    """A trigger id is unique within its table only: while one table's config save holds its
    new state row uncommitted, another table's save of the same id neither waits (no timing
    oracle across tenants) nor is refused; each table keeps its own row."""
    first_table, second_table = make_table(store).id, make_table(store).id
    outcome: dict[str, Any] = {}
    with store.engine.connect() as conn:
        first = conn.begin()
        tx = Tx(conn=conn, is_postgres=True)
        upsert_state(
            tx, trigger_id="trg_shared", table_id=first_table, kind="interval", anchor=NOW,
            schedule_hash="h", now=NOW, next_due_at=NOW,
        )  # fmt: skip
        thread = threading.Thread(
            target=lambda: outcome.update(got=_state_for(store, second_table))
        )
        thread.start()
        thread.join(10)  # done while the first transaction is still open
        assert not thread.is_alive()
        first.commit()
    assert outcome["got"].table_id == second_table
    with store.read() as tx2:
        for table_id in (first_table, second_table):
            kept = get_state(tx2, table_id=table_id, trigger_id="trg_shared")
            assert kept is not None and kept.table_id == table_id


def test_processes_opening_one_database_at_once_migrate_once(store_url: str) -> None:
    code = "import sys; from tocsin.store import open_store; open_store(sys.argv[1]).dispose()"
    procs = [
        subprocess.Popen(
            [sys.executable, "-W", "error", "-c", code, store_url],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for _ in range(3)
    ]
    outputs = [proc.communicate(timeout=120) for proc in procs]
    failures = [
        err.decode() for proc, (_, err) in zip(procs, outputs, strict=True) if proc.returncode
    ]
    assert failures == []
    store = open_store(store_url)
    try:
        assert current_revision(store) == head_revision()
    finally:
        store.dispose()
