"""The tick's one paging loop over the schedules of every kind (DESIGN §1; SPEC §6, §12–§14).

A tick call takes the tables up to its ``table_limit`` (:func:`tocsin.engine.tick.run_due_triggers`)
and then pages through every due schedule and every pending event until none is left: each kind
(workflow cron schedules, trigger-tree events and due trees, lanes) is a :class:`Pass`, and
:func:`fire_passes` drives them all the same way, in order, one transaction per page:

1. ``prepare(now)``: what the kind owes before its first page (a sync of its declared rows);
   False: nothing of the kind can be due (no page, no transaction);
2. ``page(tx, now)``: one page in the loop's transaction — claim the kind's due rows, decide each
   (:func:`tocsin.core.schedules.decide.decide`), fire through :func:`tocsin.engine.fire.fire`,
   write the rows' new state — answering ``(fires recorded, whether more may be due)``;
3. the fires count into the tick's report under the pass's ``counts`` key.

A page moves every row it claimed past ``now`` (or holds it for a later decision), so no row is
decided twice at one ``now`` and the loop ends.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime

from tocsin.store.tx import Store, Tx

Page = Callable[[Tx, datetime], tuple[int, bool]]
"""One page in the caller's transaction: ``(fires recorded, whether more may be due)``."""


def _always(now: datetime) -> bool:
    return True


@dataclass(frozen=True, slots=True)
class Pass:
    """One kind's pages: the report key its fires count into, its page, and what it owes
    before its first page (module docstring)."""

    counts: str
    page: Page
    prepare: Callable[[datetime], bool] = _always


def fire_passes(store: Store, passes: Sequence[Pass], *, now: datetime) -> dict[str, int]:
    """Every pass's pages at ``now``, in order, each page its own transaction, until the pass
    says none is left; the fires per ``counts`` key."""
    counts = dict.fromkeys((p.counts for p in passes), 0)
    for each in passes:
        more = each.prepare(now)
        while more:
            with store.begin() as tx:
                fired, more = each.page(tx, now)
            counts[each.counts] += fired
    return counts


__all__ = ["Page", "Pass", "fire_passes"]
