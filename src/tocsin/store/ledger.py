"""The occurrence ledger: the durable fence (SPEC §1, §5, §6; DESIGN §5; STYLE F3, R5).

An identity ``(table_id, trigger_id, identity)`` is inserted at most once, in the same
transaction as its run. That is the key: a trigger id is unique within its table only (two
tables may use the same id, migration 0020), and a table's claims sit together in the index
(migration 0003: the tick's batches claim table after table, and random trigger-id keys
scattered every batch's writes over the whole index).

The claim is ``INSERT … ON CONFLICT DO NOTHING RETURNING``, never a caught IntegrityError: on
PostgreSQL a failed INSERT would abort the whole transaction, and a duplicate claim must be an
idempotent no-op that does not roll back the other runs the same tick inserted.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime

from sqlalchemy import String, any_, bindparam, select
from sqlalchemy.dialects.postgresql import ARRAY

from tocsin.store.bulk import instant_binder, with_rows
from tocsin.store.schema import occurrence_ledger
from tocsin.store.tx import Tx

IN_CHUNK = 500  # identities per IN (...) list: well under SQLite's bound-parameter limit
_TEXTS = ARRAY(String)


Claim = tuple[str, str, str, str]  # (table_id, trigger_id, identity, run_id)
_CLAIM = (
    "INSERT INTO occurrence_ledger (table_id, trigger_id, identity, run_id, created_at)"
    " SELECT tab, tid, ident, rid, ca FROM v WHERE true"
    " ON CONFLICT (table_id, trigger_id, identity) DO NOTHING"
    " RETURNING run_id"  # each claim has its own run id: the key travels one way only
)
_CLAIM_COLUMNS = (("tab", "text"), ("tid", "text"), ("ident", "text"), ("rid", "text"))


Claimed = tuple[str, str, str]  # (table_id, trigger_id, identity)


def claim_occurrences(tx: Tx, *, claims: Sequence[Claim], now: datetime) -> set[Claimed]:
    """Claim occurrences at ``now``: the keys this transaction got, each one no ledger row held
    or a concurrent transaction was inserting (PostgreSQL waits for that one, then skips it)."""
    tx.require_writable()
    stamp = instant_binder(tx)(now)
    rows = [(*c, stamp) for c in claims]
    got = with_rows(tx, (*_CLAIM_COLUMNS, ("ca", "timestamp")), _CLAIM, rows)
    keys = {c[3]: c[:3] for c in claims}
    return {keys[str(r[0])] for r in got}


def release_occurrences(tx: Tx, *, claims: Sequence[Claim]) -> None:
    """Undo this transaction's claims whose runs could not be inserted (by ``run_id``: never
    another claimer's row)."""
    tx.require_writable()
    for table_id, trigger_id, identity, run_id in claims:
        stmt = occurrence_ledger.delete().where(
            occurrence_ledger.c.table_id == table_id,
            occurrence_ledger.c.trigger_id == trigger_id,
            occurrence_ledger.c.identity == identity,
            occurrence_ledger.c.run_id == run_id,
        )
        tx.conn.execute(stmt)


def fired_identities(
    tx: Tx, *, table_id: str, trigger_id: str, identities: Iterable[str]
) -> set[str]:
    """Which of ``identities`` the ledger already holds for ``trigger_id`` of ``table_id``
    (PostgreSQL: ``= ANY`` of one array, one statement for a whole page; SQLite: chunked IN)."""
    wanted, c = sorted(set(identities)), occurrence_ledger.c
    found: set[str] = set()
    step = max(len(wanted), 1) if tx.is_postgres else IN_CHUNK
    for start in range(0, len(wanted), step):
        chunk = wanted[start : start + step]
        if tx.is_postgres:
            match = c.identity == any_(bindparam("wanted", chunk, type_=_TEXTS))
        else:
            match = c.identity.in_(chunk)
        stmt = select(c.identity).where(c.table_id == table_id, c.trigger_id == trigger_id, match)
        found.update(tx.conn.execute(stmt).scalars())
    return found


__all__ = [
    "Claim",
    "Claimed",
    "claim_occurrences",
    "fired_identities",
    "release_occurrences",
]
