"""The occurrence ledger: the durable fence (SPEC §1, §5, §6; DESIGN §5; STYLE F3, R5).

An identity ``(trigger_id, identity)`` is inserted at most once, in the same transaction as its
run. The key is ``(table_id, trigger_id, identity)``: a trigger id belongs to one table for good
(``state.upsert_state`` never hands a state to another table, and tables are never deleted), so
the fence is the same, and a table's claims sit together in the index (migration 0003: the
tick's batches claim table after table, and random trigger-id keys scattered every batch's
writes over the whole index).

The claim is ``INSERT … ON CONFLICT DO NOTHING RETURNING``, never a caught IntegrityError: on
PostgreSQL a failed INSERT would abort the whole transaction, and a duplicate claim must be an
idempotent no-op that does not roll back the other runs the same tick inserted.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from sqlalchemy import String, any_, bindparam, select
from sqlalchemy.dialects.postgresql import ARRAY

from tocsin.store.dialects import upsert_insert
from tocsin.store.tables import occurrence_ledger
from tocsin.store.tx import Tx

IN_CHUNK = 500  # identities per IN (...) list: well under SQLite's bound-parameter limit
LEDGER_KEY = ("table_id", "trigger_id", "identity")
_TEXTS = ARRAY(String)


def claim_occurrence(
    tx: Tx, *, trigger_id: str, identity: str, table_id: str, run_id: str, now: datetime
) -> bool:
    """Claim one occurrence; True when this transaction got it, False when already claimed.

    Eligibility: no ledger row with the same ``(table_id, trigger_id, identity)`` exists or is being
    inserted by a concurrent transaction (PostgreSQL waits for that one to end, then skips).
    """
    tx.require_writable()
    stmt = _CLAIM.get(tx.is_postgres)
    if stmt is None:  # prebuilt once per dialect: values travel as parameters
        stmt = _CLAIM[tx.is_postgres] = (
            upsert_insert(tx, occurrence_ledger)
            .on_conflict_do_nothing(index_elements=list(LEDGER_KEY))
            .returning(occurrence_ledger.c.identity)
        )
    values = {
        "trigger_id": trigger_id,
        "identity": identity,
        "table_id": table_id,
        "run_id": run_id,
        "created_at": now,
    }
    return tx.conn.execute(stmt, values).scalar_one_or_none() is not None


_CLAIM: dict[bool, Any] = {}


def release_occurrence(
    tx: Tx, *, table_id: str, trigger_id: str, identity: str, run_id: str
) -> bool:
    """Undo this transaction's claim whose run could not be inserted; True when it was deleted.

    Eligibility: the row was claimed for ``run_id`` (never another claimer's row).
    """
    tx.require_writable()
    stmt = occurrence_ledger.delete().where(
        occurrence_ledger.c.table_id == table_id,
        occurrence_ledger.c.trigger_id == trigger_id,
        occurrence_ledger.c.identity == identity,
        occurrence_ledger.c.run_id == run_id,
    )
    return tx.conn.execute(stmt).rowcount == 1


def fired_identities(
    tx: Tx, *, table_id: str, trigger_id: str, identities: Iterable[str]
) -> set[str]:
    """Which of ``identities`` the ledger already holds for ``trigger_id`` of ``table_id``
    (PostgreSQL: ``= ANY`` of one array; SQLite: chunked IN)."""
    wanted = sorted(set(identities))
    found: set[str] = set()
    if tx.is_postgres and wanted:  # one array parameter: one statement for a whole page
        stmt = select(occurrence_ledger.c.identity).where(
            occurrence_ledger.c.table_id == table_id,
            occurrence_ledger.c.trigger_id == trigger_id,
            occurrence_ledger.c.identity == any_(bindparam("wanted", wanted, type_=_TEXTS)),
        )
        return set(tx.conn.execute(stmt).scalars())
    for start in range(0, len(wanted), IN_CHUNK):
        chunk = wanted[start : start + IN_CHUNK]
        stmt = select(occurrence_ledger.c.identity).where(
            occurrence_ledger.c.table_id == table_id,
            occurrence_ledger.c.trigger_id == trigger_id,
            occurrence_ledger.c.identity.in_(chunk),
        )
        found.update(tx.conn.execute(stmt).scalars())
    return found


__all__ = ["LEDGER_KEY", "claim_occurrence", "fired_identities", "release_occurrence"]
