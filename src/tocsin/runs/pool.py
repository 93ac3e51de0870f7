"""A bounded pool of run threads for one worker process, so that no tenant stalls another.

A worker process executes up to ``size`` runs at once, each on its own daemon thread; a run's
actions still go one after the other on that thread. The claimer (``runs.drain.drain`` with a
pool) claims only as many runs as there are free slots, so a claimed run starts at once instead
of waiting behind a slow one, and a receiver that takes its whole deadline costs its own run
that deadline, not everyone's.

Threads are daemons: a run wedged in code tocsin cannot interrupt (a registered command that
never returns) does not keep the process alive after its stop gave up waiting
(:meth:`RunPool.wait_idle` answers False, and the process exits non-zero).
"""

from __future__ import annotations

import contextvars
import itertools
import logging
import threading
from collections.abc import Callable
from functools import partial

from tocsin.store.outage import OutageLog

log = logging.getLogger(__name__)

_NAMES = itertools.count(1)


class RunPool:
    """At most ``size`` callables running at once, each on a daemon thread."""

    def __init__(self, size: int, *, outage: OutageLog | None = None) -> None:
        if size < 1:
            raise ValueError(f"RunPool size must be >= 1, got {size}")
        self.size = size
        self._outage = outage or OutageLog(log)  # a beat that meets a database outage says so there
        self._active = 0
        self._changed = threading.Condition()
        self._beats: dict[object, Callable[[], object]] = {}
        self._over: Callable[[], bool] | None = None

    @property
    def active(self) -> int:
        with self._changed:
            return self._active

    def free(self) -> int:
        """Slots not taken right now."""
        with self._changed:
            return self.size - self._active

    def submit(self, job: Callable[[], object]) -> None:
        """Start ``job`` on a thread of its own; the caller checked that a slot is free."""
        with self._changed:
            if self._active >= self.size:
                raise RuntimeError("RunPool.submit without a free slot")
            self._active += 1
        name = f"tocsin-run-{next(_NAMES)}"
        # in the submitter's context: the run takes the worker's pool (``store.pools.bound``)
        run = partial(contextvars.copy_context().run, self._run, job)
        try:
            threading.Thread(target=run, name=name, daemon=True).start()
        except BaseException:
            self._done()
            raise

    def _run(self, job: Callable[[], object]) -> None:
        try:
            job()
        except Exception:  # a run's own errors are handled by the worker; this is a last guard
            log.exception("run thread failed")
        finally:
            self._done()

    def _done(self) -> None:
        with self._changed:
            self._active -= 1
            self._changed.notify_all()

    def on_busy(self, key: object, beat: Callable[[], object]) -> None:
        """Call ``beat`` (one per ``key``, the latest kept) in the claimer's thread each time
        :meth:`wait_for_slot` finds every slot still busy: whatever the running jobs hold can
        be kept alive (``workflows.runner.Leases``) while no claimer gets past its wait."""
        with self._changed:
            self._beats[key] = beat

    def wait_for_slot(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for a free slot; whether one is free (when not, the
        :meth:`on_busy` beats run first)."""
        with self._changed:
            free = self._changed.wait_for(lambda: self._active < self.size, timeout)
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

    def pass_over(self) -> bool:
        """Whether the pass begun by :meth:`start_pass` used its time: each claimer of the pass
        (table runs, workflow runs) then claims nothing more after its first claim, and the pass
        ends once what they claimed has started; never True when no pass was begun."""
        return self._over is not None and self._over()

    def wait_idle(self, timeout: float | None) -> bool:
        """Wait up to ``timeout`` seconds until no job runs; whether none does."""
        with self._changed:
            return self._changed.wait_for(lambda: self._active == 0, timeout)
