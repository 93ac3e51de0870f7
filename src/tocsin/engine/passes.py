"""The tick's one paging loop over the schedules of every kind (DESIGN §1; SPEC §6, §12–§14).

A tick call pages through every due schedule and every pending event: each kind (the tables'
triggers up to the tick's ``table_limit``, workflow cron schedules, trigger-tree events and due
trees, lanes) is a :class:`Pass`, and :func:`fire_passes` drives them all the same way, in
order, one transaction per page:

1. ``prepare(now)``: what the kind owes before its first page (a sync of its declared rows);
   False: nothing of the kind can be due (no page, no transaction);
2. ``page(tx, now, take)``: one page in the loop's transaction — claim the kind's due rows (at
   most ``take.room`` units when the pass has a ``limit``; only ``take.only`` on a retry), decide
   each (:func:`tocsin.core.schedules.decide.decide`), fire through :func:`tocsin.engine.fire.fire`,
   write the rows' new state — naming in ``take.units`` each unit it claimed as it claims it and
   counting into ``take.counts``; it answers whether more may be due;
3. once the page committed, its counts go into the tick's report (the pass's ``counts`` keys);
4. a page that raises is rolled back whole; then each unit it named gets a page of its own, one
   transaction each (``take.only``): a unit that raises again is logged and skipped, the others
   proceed, and the pass goes on with its next page, which leaves out ``take.skip``: every unit
   the call named already (none is taken twice in one call), or, for a pass whose pages move
   each unit they claim past ``now`` (``Pass.moves``: a schedule's next fire), only the units of
   its pages that failed (one may still be due; the others are due no more). A
   page that named no unit (it failed before its claim) ends its pass for this call, logged;
   the other passes proceed. A database that takes no writes (down, or full) fails the whole
   call (:func:`tocsin.engine.sweeps.raise_outage`).

Every pass names its units, so one broken schedule holds back no other of its kind: the tables
(table ids, :func:`tocsin.engine.tick.table_pass`), the workflow cron schedules and the due
trigger trees (schedule ids, :func:`tocsin.engine.schedules.schedule_pass`,
:func:`tocsin.engine.trees.tree_passes`), the trees' event pages (their batch of events, not split
by tree: :func:`tocsin.engine.trees.tree_passes` says why) and the lanes (a lane at the instant
it is due from, :func:`tocsin.engine.lanes.lane_pass`). Each claim takes ``only`` and ``skip`` as
filters of its statement, which still reads its due index, and names each row it returns before
anything that may raise.

The loop ends a pass when its page says none is left, or once it took ``limit`` units. A page
moves every row it claimed past ``now`` (or holds it for a later decision, or, for the tables,
leaves it to the next call's rotation), so no row is decided twice at one ``now`` and the loop
ends.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from tocsin.engine.sweeps import raise_outage
from tocsin.store.tx import Store, Tx

log = logging.getLogger(__name__)


@dataclass(slots=True)
class Take:
    """One page's terms and tally (module docstring): it claims at most ``room`` units (None: no
    bound) and none of ``skip`` (the units a later page must not take again), or only the unit
    ``only`` (a
    failed page's, again by itself); it names in ``units`` each unit it claimed, as it claims
    it, and counts into ``counts`` (added to the report once the page committed)."""

    room: int | None = None
    skip: Sequence[str] = ()
    only: str | None = None
    units: list[str] = field(default_factory=list)
    counts: Counter[str] = field(default_factory=Counter)


Page = Callable[[Tx, datetime, Take], bool]
"""One page in the caller's transaction, its terms and tally in the :class:`Take`: whether more
may be due."""


def _always(now: datetime) -> bool:
    return True


@dataclass(frozen=True, slots=True)
class Pass:
    """One kind's pages: the report keys its pages count into, its page, what it owes before its
    first page, the most units one call takes (None: until none is left), and whether its pages
    move each unit they claim past ``now`` (then a later page leaves out only the units of a
    failed page, not every unit the call took: a drain of 10,000 schedules would send 9,000
    ids with its last page) (module docstring)."""

    counts: tuple[str, ...]
    page: Page
    prepare: Callable[[datetime], bool] = _always
    limit: int | None = None
    moves: bool = False


def fire_passes(store: Store, passes: Sequence[Pass], *, now: datetime) -> dict[str, int]:
    """Every pass's pages at ``now``, in order, each page its own transaction, until the pass
    says none is left or took its ``limit``; the counts per key (0 when none)."""
    report = dict.fromkeys((key for each in passes for key in each.counts), 0)
    for each in passes:
        taken: list[str] = []  # the units the pass named this call
        failed: list[str] = []  # those of its pages that failed
        more = each.prepare(now)
        while more and (each.limit is None or len(taken) < each.limit):
            room = None if each.limit is None else each.limit - len(taken)
            take = Take(room=room, skip=tuple(failed if each.moves else taken))
            more, committed = _page(store, each, now, take, report)
            taken += take.units
            if not committed:
                failed += take.units
    return report


def _page(
    store: Store, each: Pass, now: datetime, take: Take, report: dict[str, int]
) -> tuple[bool, bool]:
    """One page of ``each``, counted into ``report`` once committed; when it raises, each unit
    it named again in a page of its own (module docstring). Whether more may be due, and
    whether the page committed."""
    try:
        with store.begin() as tx:
            more = each.page(tx, now, take)
    except Exception as exc:
        raise_outage(exc)
        kind, count = "/".join(each.counts), len(take.units)
        log.exception("tick: a page of %s failed; its %d units again, one at a time", kind, count)
        for unit in take.units:
            alone = Take(only=unit)
            try:
                with store.begin() as tx:
                    each.page(tx, now, alone)
            except Exception as unit_exc:
                raise_outage(unit_exc)
                log.exception("tick: %s skipped", unit)
            else:
                _count(report, alone.counts)
        return bool(take.units), False
    _count(report, take.counts)
    return more, True


def _count(report: dict[str, int], counts: Counter[str]) -> None:
    for key, n in counts.items():
        report[key] = report.get(key, 0) + n


__all__ = ["Page", "Pass", "Take", "fire_passes"]
