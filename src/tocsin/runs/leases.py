"""The runs a worker process holds, kept alive for the stale-run sweep (SPEC §9.7, §12).

A claimed run is ``running`` with its claim's stamp in ``updated_at``; the tick's sweep hands a
run whose stamp is older than ``TOCSIN_STUCK_AFTER_S`` back to pending, for another worker. A
run of any kind in a step or action longer than that (or run, and waiting behind such a one for
its group's finish) would be handed over while it progresses, and run twice. So the claimer of a
:class:`~tocsin.runs.pool.RunPool` (``runs.drain``) leases what it claims here, the slots let go
of what they finished or sent back, and the claimer stamps what is still held every quarter of
the stale window (:meth:`Leases.renew`): between its claims, and while it waits for a slot
(``RunPool.on_busy``). Without a pool (``Tocsin.work`` in one thread) nothing renews: a step
must end within the stale window, or ``tocsin worker`` run it.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from datetime import datetime

from tocsin.core.model import Run
from tocsin.store.runs import renew_runs
from tocsin.store.tx import Store


class Leases:
    """The claimed runs a pool's slots hold, by id, with the attempts of their claim (the fence
    every write of theirs is under)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._held: dict[str, int] = {}
        self._renewed: datetime | None = None

    def __len__(self) -> int:
        with self._lock:
            return len(self._held)

    def add(self, runs: Iterable[Run], at: datetime) -> None:
        """Runs claimed ``at`` (the claim stamped them)."""
        with self._lock:
            if not self._held:
                self._renewed = at  # the next renewal is due from the claim's stamp
            self._held.update((run.id, run.attempts) for run in runs)

    def drop(self, run_ids: Iterable[str]) -> None:
        """Runs finished, sent back to pending, or left to the stale sweep."""
        with self._lock:
            for run_id in run_ids:
                self._held.pop(run_id, None)

    def renew(self, store: Store, at: datetime, every_s: float) -> None:
        """Stamp the held runs ``at`` once ``every_s`` passed since the last stamp (a failed
        renewal raises, and is tried again at the next chance)."""
        with self._lock:
            last = self._renewed
            if not self._held or (last is not None and (at - last).total_seconds() < every_s):
                return
            held = list(self._held.items())
        with store.begin() as tx:
            renew_runs(tx, runs_=held, now=at)
        with self._lock:
            self._renewed = at


__all__ = ["Leases"]
