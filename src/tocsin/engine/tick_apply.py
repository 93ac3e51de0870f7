"""The tick's writes: a batch's plans applied with a few set-based statements (SPEC §5.3, §6).

In the batch's transaction, for every fire of every plan at once:

1. ledger claims (``INSERT … ON CONFLICT DO NOTHING RETURNING``): an identity already claimed
   (by an earlier tick, or a racing one) is not returned, and gets no run;
2. pending runs for the claims this transaction got (``RETURNING id``); the one-active-run index
   refuses a clock run whose trigger got an active run meanwhile: its claim is released and its
   window stays due (no identity is ever claimed without its run);
3. clock windows consumed (a claim lost to a racing tick consumes its window too), triggers'
   ``next_due_at``, date cursors, and each table's ``next_due_at`` with its rotation stamp.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from tocsin.engine.ids import uuid7s
from tocsin.engine.tick_plan import Fire, TablePlan, row_payload
from tocsin.store import claims, dialects, ledger, skips, state
from tocsin.store import runs as store_runs
from tocsin.store.tx import Tx


def apply_plans(tx: Tx, plans: Sequence[TablePlan], now: datetime) -> int:
    """Write ``plans`` (see the module docstring); how many runs it created."""
    fires = [f for p in plans for f in p.fires]
    claimed = claim_and_insert(tx, fires, now)  # run id per fire; None: refused
    next_due = {p.table_id: p.next_due for p in plans}
    consumed: list[state.Consumed] = []
    for (table_id, trigger_id, _, _, _, _, window, after), run_id in zip(
        fires, claimed, strict=True
    ):
        if run_id is None and window is not None:  # refused: the window stays due
            next_due[table_id] = min(next_due[table_id], window)
            continue
        if window is not None:
            consumed.append((table_id, trigger_id, window, after))
    if tx.is_postgres:  # the updates below are by key: never a table hashed whole for a page
        dialects.keyed_access_only(tx)
    state.consume_windows(tx, consumed=consumed, now=now)
    skips.record_skips(tx, ranges=[r for p in plans for r in p.skips], now=now)
    next_dues = [(p.table_id, tid, at) for p in plans for tid, at in p.next_dues]
    state.set_next_dues(tx, next_dues=next_dues)
    cursors = [(p.table_id, tid, *(c or (None, None))) for p in plans for tid, c in p.cursors]
    state.advance_cursors(tx, cursors=cursors, now=now)
    claims.finish_tables(tx, values=list(next_due.items()), now=now)
    return sum(map(bool, claimed))


def claim_and_insert(tx: Tx, fires: Sequence[Fire], now: datetime) -> list[str | None]:
    """Per fire: its run's id when this transaction claimed it and inserted the run, ``""``
    when the identity was claimed before, None when the run was refused (claim released)."""
    run_ids = uuid7s(now, len(fires))
    rows = [(*f[:3], r) for f, r in zip(fires, run_ids, strict=True)]
    got = ledger.claim_occurrences(tx, claims=rows, now=now)
    mine = [i for i, row in enumerate(rows) if row[:3] in got]
    new_runs = (  # consumed as the statement's rows are built: no NewRun outlives its row
        store_runs.NewRun(
            id=run_ids[i],
            table_id=table_id,
            trigger_id=trigger_id,
            record_id=None if record is None else str(record["id"]),
            source="schedule",
            clock=window is not None,
            payload={} if record is None else row_payload(record),
            definition=None,
            identity=identity,
            scheduled_for=scheduled_for,
            definition_hash=digest,
        )
        for i in mine
        for table_id, trigger_id, identity, digest, scheduled_for, record, window, _ in (fires[i],)
    )
    inserted = store_runs.insert_runs(tx, runs_=new_runs, now=now)
    ledger.release_occurrences(tx, claims=[rows[i] for i in mine if run_ids[i] not in inserted])
    out: list[str | None] = [""] * len(fires)
    for i in mine:
        out[i] = run_ids[i] if run_ids[i] in inserted else None
    return out


__all__ = ["apply_plans", "claim_and_insert"]
