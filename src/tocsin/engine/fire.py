"""The one fire path (DESIGN §1): firings decided elsewhere become the ledger claim, their runs
and fire rows, and the skip ranges, in the caller's transaction (one per page).

Every kind fires through :func:`fire`: a table trigger's tick, run-now and paused date values
(``engine``), a workflow's cron and tree schedules and its backfill (``workflows``), a lane's
scheduled windows (``lanes``). It is the only caller of the ledger claim
(``store.ledger.claim_occurrences``; a test holds it so). The kind's rows differ (a table
trigger's ``runs`` row, a workflow run and its schedule fire, a lane run and its attempt), so
each caller passes its own :data:`Writer`; the path decides nothing about them:

1. claim every firing's identity at once (``INSERT … ON CONFLICT DO NOTHING``): a firing not
   claimed was fired before, by this host or another, and writes nothing;
2. the writer writes the rows of the claimed ones (once per call, even with none claimed: a
   kind may have rows that need no claim, such as a workflow schedule's failed fire);
3. the claims of the runs the writer refused are released (no identity without its run);
4. the skip ranges are recorded.

Namespaces: a table trigger claims under its table id (identities: windows, ``record|date``
values, ``manual:<run id>``); workflow schedules under ``"workflow"``, their backfill under
``"backfill"``, lanes under ``"lane"``, each with its schedule or lane id as the key.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from datetime import datetime

from tocsin.core.schedules.skips import SkipRange
from tocsin.store import ledger
from tocsin.store import skips as store_skips
from tocsin.store.tx import Tx

Firing = tuple[str, str, str, str]
"""``(namespace, key, identity, run_id)``: one occurrence to claim, and the run it starts."""

Writer = Callable[[list[int]], Collection[str]]
"""Writes the rows of the firings at the given indices (the ones this transaction claimed, in
order) and returns the run ids it refused (a clock run held back by an active one): their
claims are released. A claimed firing it neither writes nor refuses keeps its ledger row without
a run (a date value fallen due inside a pause: consumed, never fired)."""

CLAIMED_BEFORE = ""


def fire(
    tx: Tx,
    firings: Sequence[Firing],
    write: Writer,
    *,
    skips: Sequence[SkipRange] = (),
    now: datetime,
) -> list[str | None]:
    """Claim, write, release and record skips (module docstring) at ``now``. Per firing: its
    run id when this transaction claimed it and the writer kept it, :data:`CLAIMED_BEFORE`
    when the ledger held it already, None when the writer refused it."""
    got = ledger.claim_occurrences(tx, claims=firings, now=now) if firings else set()
    claimed = [i for i, f in enumerate(firings) if f[:3] in got]
    refused = set(write(claimed))
    if refused:
        ledger.release_occurrences(
            tx, claims=[firings[i] for i in claimed if firings[i][3] in refused]
        )
    record_skips(tx, ranges=skips, now=now)
    out: list[str | None] = [CLAIMED_BEFORE] * len(firings)
    for i in claimed:
        run_id = firings[i][3]
        out[i] = None if run_id in refused else run_id
    return out


def record_skips(tx: Tx, *, ranges: Sequence[SkipRange], now: datetime) -> None:
    """Record skip ranges decided from a claim's outcome (the tick's paused date values)."""
    if ranges:
        store_skips.record_skips(tx, ranges=ranges, now=now)


__all__ = ["CLAIMED_BEFORE", "Firing", "Writer", "fire", "record_skips"]
