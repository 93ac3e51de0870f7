"""A bounded pool of run threads for one worker process, so that no tenant stalls another.

A worker process executes up to ``size`` runs at once, each on its own daemon thread; a run's
actions still go one after the other on that thread. The claimer (``runs.drain.drain`` with a
pool) claims only as many runs as there are free slots, so a claimed run starts at once instead
of waiting behind a slow one, and a receiver that takes its whole deadline costs its own run
that deadline, not everyone's.

No scope takes every slot: each job is submitted under its scope (a table run: its table's
``scope:scope_id``; the app's workflow runs: :data:`APP_SCOPE`) and this process runs at most
``per_scope`` jobs of one scope at once (``TOCSIN_MAX_RUNNING_PER_SCOPE``, counted here, in the
process: :meth:`RunPool.held` is what the table runs' claim leaves out), so another scope's ready
run finds a free slot. The pool also keeps the claim's turn among scopes (:attr:`RunPool.after`)
from one pass to the next.

Runs of one scope claimed together wait in a :class:`SlotQueue` that the pool's slots of that
scope share (``runs.drain``): while it holds runs, the claim gives that scope nothing more
(:meth:`RunPool.queued`), and the claimer waiting for work learns when it empties
(:meth:`RunPool.wait_for_change`).

Threads are daemons: a run wedged in code tocsin cannot interrupt (a registered command that
never returns) does not keep the process alive after its stop gave up waiting
(:meth:`RunPool.wait_idle` answers False, and the process exits non-zero).
"""

from __future__ import annotations

import contextvars
import itertools
import logging
import threading
import time
from collections import Counter, deque
from collections.abc import Callable, Iterable
from functools import partial
from typing import Any, Generic, TypeVar

from tocsin import messages
from tocsin.runs.leases import Leases
from tocsin.store.outage import OutageLog

log = logging.getLogger(__name__)

_NAMES = itertools.count(1)

T = TypeVar("T")

APP_SCOPE = "app"
"""The scope of the app's own runs (workflow runs) in a pool shared with table runs."""


class RunPool:
    """At most ``size`` callables running at once, each on a daemon thread, and at most
    ``per_scope`` of one scope (None: no cap but ``size``)."""

    def __init__(
        self, size: int, *, per_scope: int | None = None, outage: OutageLog | None = None
    ) -> None:
        if size < 1:
            raise ValueError(messages.run_pool_size_invalid(size))
        self.size = size
        self.per_scope = None if per_scope is None else max(1, per_scope)
        self._scoped: Counter[str] = Counter()  # jobs running per scope (those given one)
        self.after = ""  # the table-run claim's turn: the last scope it took (store.runs)
        self._outage = outage or OutageLog(log)  # a beat that meets a database outage says so there
        self._active = 0
        self._changed = threading.Condition()
        self._beats: dict[object, Callable[[], object]] = {}
        self._over: Callable[[], bool] | None = None
        self._queued: Counter[str] = Counter()  # queues holding runs, per scope
        self._open: set[SlotQueue[Any]] = set()  # those queues
        self._changes = 0  # slots ended and queues emptied so far (wait_for_change)
        self.leases = Leases()  # the claimed runs its slots hold (renewed by the claimer)

    @property
    def active(self) -> int:
        with self._changed:
            return self._active

    def held(self) -> dict[str, int]:
        """The jobs running now per scope (of those submitted with one)."""
        with self._changed:
            return dict(self._scoped)

    def queued(self) -> set[str]:
        """The scopes a :class:`SlotQueue` of this pool still holds runs of."""
        with self._changed:
            return set(self._queued)

    def changes(self) -> int:
        """A count of the slots ended and queues emptied so far (:meth:`wait_for_change`)."""
        with self._changed:
            return self._changes

    def spreadable(self) -> bool:
        """Whether a queue holding runs could take another slot (its scope may take one)."""
        with self._changed:
            return any(self._free(queue.scope) > 0 for queue in self._open)

    def stalled(self, look_s: float) -> list[SlotQueue[Any]]:
        """The queues holding runs that no slot took one from for ``look_s`` seconds (their
        slots are in runs that take a while) and whose scope may take another slot."""
        at = time.monotonic()
        with self._changed:
            return [
                queue
                for queue in self._open
                if at - queue.taken_at >= look_s and self._free(queue.scope) > 0
            ]

    def wait_for_change(self, seen: int, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for a slot to end or a queue to empty after
        :meth:`changes` answered ``seen``; whether one did."""
        with self._changed:
            return self._changed.wait_for(lambda: self._changes != seen, timeout)

    def free(self, scope: str | None = None) -> int:
        """Slots not taken right now (with ``scope``: that a job of that scope may take)."""
        with self._changed:
            return self._free(scope)

    def _free(self, scope: str | None) -> int:
        free = self.size - self._active
        if scope is None or self.per_scope is None:
            return free
        return min(free, self.per_scope - self._scoped[scope])

    def submit(self, job: Callable[[], object], *, scope: str | None = None) -> None:
        """Start ``job`` on a thread of its own; the caller checked that a slot is free (for
        ``scope``, when given: the job counts toward that scope's share)."""
        with self._changed:
            if self._free(scope) < 1:
                raise RuntimeError(messages.RUN_POOL_FULL)
            self._active += 1
            if scope is not None:
                self._scoped[scope] += 1
        name = f"tocsin-run-{next(_NAMES)}"
        # in the submitter's context: the run takes the worker's pool (``store.pools.bound``)
        run = partial(contextvars.copy_context().run, self._run, job, scope)
        try:
            threading.Thread(target=run, name=name, daemon=True).start()
        except BaseException:
            self._done(scope)
            raise

    def _run(self, job: Callable[[], object], scope: str | None) -> None:
        try:
            job()
        except Exception:  # a run's own errors are handled by the worker; this is a last guard
            log.exception("run thread failed")
        finally:
            self._done(scope)

    def _done(self, scope: str | None) -> None:
        with self._changed:
            self._active -= 1
            if scope is not None:
                self._scoped[scope] -= 1
                if not self._scoped[scope]:
                    del self._scoped[scope]  # a process meets many scopes: keep the busy ones
            self._changes += 1
            self._changed.notify_all()

    def on_busy(self, key: object, beat: Callable[[], object]) -> None:
        """Call ``beat`` (one per ``key``, the latest kept) in the claimer's thread each time
        :meth:`wait_for_slot` finds every slot still busy: whatever the running jobs hold can
        be kept alive (``runs.leases.Leases``) while no claimer gets past its wait."""
        with self._changed:
            self._beats[key] = beat

    def wait_for_slot(self, timeout: float, *, scope: str | None = None) -> bool:
        """Wait up to ``timeout`` seconds for a free slot (one ``scope`` may take, when given);
        whether one is free (when not, the :meth:`on_busy` beats run first)."""
        with self._changed:
            free = self._changed.wait_for(lambda: self._free(scope) > 0, timeout)
            beats = [] if free else list(self._beats.values())
        for beat in beats:
            try:
                beat()
            except Exception as exc:  # a beat's failure never stops the claimer
                if not self._outage.failed("pool heartbeat", exc):
                    log.exception("pool heartbeat failed")
            else:
                self._outage.recovered("pool heartbeat")
        return free

    def start_pass(self, over: Callable[[], bool]) -> None:
        """A claimer's pass begins (``runs.worker.serve_worker``, before each ``work``):
        :meth:`pass_over` answers ``over()`` until the next pass."""
        self._over = over

    def in_pass(self) -> bool:
        """Whether a claimer's pass was begun (:meth:`start_pass`)."""
        return self._over is not None

    def pass_over(self) -> bool:
        """Whether the pass begun by :meth:`start_pass` used its time: each claimer of the pass
        (table runs, workflow runs) then claims nothing more after its first claim, and the pass
        ends once what they claimed has started; never True when no pass was begun."""
        return self._over is not None and self._over()

    def wait_idle(self, timeout: float | None) -> bool:
        """Wait up to ``timeout`` seconds until no job runs; whether none does."""
        with self._changed:
            return self._changed.wait_for(lambda: self._active == 0, timeout)


class SlotQueue(Generic[T]):
    """The runs of one ``scope`` a claim took, oldest first, for the slots of ``pool`` that
    share it: each takes the next one (:meth:`take`) until none is left. While it holds runs,
    its scope is in :meth:`RunPool.queued`."""

    def __init__(self, pool: RunPool, scope: str, items: Iterable[T]) -> None:
        self.pool, self.scope = pool, scope
        self._items = deque(items)
        self.taken_at = time.monotonic()  # when a slot last took a run (or a slot was added)
        if self._items:
            with pool._changed:
                pool._queued[scope] += 1
                pool._open.add(self)

    def __len__(self) -> int:
        return len(self._items)

    def looked(self) -> None:
        """A slot was added to it: the next look at it counts from now."""
        self.taken_at = time.monotonic()

    def take(self) -> T | None:
        """The oldest item left, or None; taking the last one tells the pool."""
        pool = self.pool
        with pool._changed:
            if not self._items:
                return None
            item = self._items.popleft()
            self.taken_at = time.monotonic()
            if not self._items:
                pool._open.discard(self)
                pool._queued[self.scope] -= 1
                if not pool._queued[self.scope]:
                    del pool._queued[self.scope]
                pool._changes += 1
                pool._changed.notify_all()
            return item
