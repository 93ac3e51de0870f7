"""The occurrence ledger is the fence (SPEC §5, §6; DESIGN §5; STYLE F3)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from tocsin.core.model import Table
from tocsin.store import Store
from tocsin.store.ledger import IN_CHUNK, claim_occurrences, fired_identities, release_occurrences
from tocsin.store.runs import get_run, insert_run

from .helpers import NOW, new_id


def _claim(tx: Any, identity: str, trigger_id: str = "trg_a", table_id: str = "t") -> bool:
    got = claim_occurrences(tx, claims=[(table_id, trigger_id, identity, new_id())], now=NOW)
    return got == {(table_id, trigger_id, identity)}


def _run(tx: Any, run_id: str, table_id: str) -> None:
    insert_run(
        tx, id=run_id, table_id=table_id, trigger_id="trg_a", record_id=new_id(),
        source="schedule", clock=False, payload={}, definition=None, identity="x",
        scheduled_for=NOW, now=NOW,
    )  # fmt: skip


def test_an_identity_is_claimed_once(store: Store) -> None:
    with store.begin() as tx:
        assert _claim(tx, "r1|2026-08-27")
    with store.begin() as tx:
        assert not _claim(tx, "r1|2026-08-27")
        assert _claim(tx, "r1|2026-08-27", trigger_id="trg_b")  # the fence is (trigger, identity)
        assert _claim(tx, "r1|2026-08-27", table_id="t2")  # per table: another table's trg_a


def test_one_call_claims_many_and_answers_only_what_it_got(store: Store) -> None:
    with store.begin() as tx:
        assert _claim(tx, "old")
        got = claim_occurrences(
            tx,
            claims=[
                ("t", "trg_a", "old", new_id()),  # already held
                ("t", "trg_a", "new", new_id()),
                ("t", "trg_b", "old", new_id()),  # another trigger: its own fence
                ("t", "trg_a", "new", new_id()),  # twice in one call: claimed once
                ("t2", "trg_a", "old", new_id()),  # another table's trg_a: its own fence
            ],
            now=NOW,
        )
        assert got == {("t", "trg_a", "new"), ("t", "trg_b", "old"), ("t2", "trg_a", "old")}
        assert claim_occurrences(tx, claims=[], now=NOW) == set()


def test_duplicate_claim_does_not_roll_back_the_transaction(store: Store, table: Table) -> None:
    first_run, second_run = new_id(), new_id()
    with store.begin() as tx:
        assert _claim(tx, "r1|v")
        _run(tx, first_run, table.id)
        assert not _claim(tx, "r1|v")  # no IntegrityError; the PG transaction is not aborted
        assert _claim(tx, "r2|v")
        _run(tx, second_run, table.id)
    with store.read() as tx:
        assert get_run(tx, run_id=first_run) is not None
        assert get_run(tx, run_id=second_run) is not None
        assert fired_identities(
            tx, table_id="t", trigger_id="trg_a", identities=["r1|v", "r2|v"]
        ) == {
            "r1|v",
            "r2|v",
        }


def test_fired_identities_answers_for_many_in_chunks(store: Store) -> None:
    claimed = {f"rec{i}|2026-08-{1 + i % 28:02d}" for i in range(0, 2 * IN_CHUNK + 10, 3)}
    with store.begin() as tx:
        for identity in claimed:
            assert _claim(tx, identity)
        _claim(tx, "rec-elsewhere", trigger_id="trg_other")
    asked = [f"rec{i}|2026-08-{1 + i % 28:02d}" for i in range(2 * IN_CHUNK + 10)]
    with store.read() as tx:
        assert (
            fired_identities(tx, table_id="t", trigger_id="trg_a", identities=iter(asked))
            == claimed
        )
        assert fired_identities(tx, table_id="t", trigger_id="trg_a", identities=[]) == set()
        assert (
            fired_identities(tx, table_id="t", trigger_id="trg_a", identities=["rec-elsewhere"])
            == set()
        )


def test_claim_stores_its_row(store: Store) -> None:
    run_id = new_id()
    later = NOW + timedelta(minutes=1)
    with store.begin() as tx:
        got = claim_occurrences(tx, claims=[("tbl", "trg_a", "w", run_id)], now=later)
        assert got == {("tbl", "trg_a", "w")}
        row = tx.conn.exec_driver_sql(
            "SELECT table_id, run_id FROM occurrence_ledger WHERE identity = 'w'"
        ).one()
    assert tuple(row) == ("tbl", run_id)


def test_release_undoes_only_the_claim_of_its_own_run(store: Store) -> None:
    mine = new_id()
    with store.begin() as tx:
        assert claim_occurrences(tx, claims=[("t", "trg_a", "w1", mine)], now=NOW) == {
            ("t", "trg_a", "w1")
        }
        release_occurrences(tx, claims=[("t", "trg_a", "w1", new_id())])  # another run's claim
        assert fired_identities(tx, table_id="t", trigger_id="trg_a", identities=["w1"]) == {"w1"}
        release_occurrences(tx, claims=[("t", "trg_a", "w1", mine)])
        assert fired_identities(tx, table_id="t", trigger_id="trg_a", identities=["w1"]) == set()
        assert _claim(tx, "w1")  # claimable again
        release_occurrences(tx, claims=[])  # nothing to release: a no-op
