"""Riding out a database that takes no writes: how a loop waits, and what it logs.

An outage is the database not answering (``StoreUnavailable``) or having no room
(``StorageFull``). Every participant that meets one (the worker's loop, a run's writes, the
ticker, the work listener) reports to the store's :class:`OutageLog`, which logs it as one line
with the first failure's traceback when it starts ("database unavailable (…)") and one line when
every participant that failed has succeeded again ("database back after 42 s"): two lines and
one traceback per outage, however many loops and threads retry meanwhile (a full traceback
every half second was 100 MB of log an hour). Each participant waits between tries a
:class:`Backoff`: its own period, doubled at each failure up to ``TOCSIN_DB_BACKOFF_MAX_S``.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from tocsin import messages
from tocsin.errors import StorageFull, StoreUnavailable, TocsinError
from tocsin.store.errors import is_storage_full, is_unavailable

log = logging.getLogger("tocsin.store")

DEFAULT_CAP_S = 30.0  # TOCSIN_DB_BACKOFF_MAX_S's default
FIRST_PAUSE_S = 0.5  # a run's write that met an outage is tried again after this, then doubling
T = TypeVar("T")


def is_outage(exc: BaseException) -> bool:
    """Whether ``exc`` says the database takes no writes now (down, or full)."""
    return (
        isinstance(exc, StoreUnavailable | StorageFull)
        or is_unavailable(exc)
        or (is_storage_full(exc))
    )


def _reason(exc: BaseException) -> str:
    """What the outage line says went wrong: the driver's first line for a database that does
    not answer, the 507 text for a full one."""
    cause = exc.__cause__ if isinstance(exc, StoreUnavailable) and exc.__cause__ else exc
    if isinstance(cause, TocsinError) and not isinstance(cause, StoreUnavailable):
        return cause.detail
    text = str(cause).strip()
    return text.splitlines()[0] if text else type(cause).__name__


@dataclass(slots=True)
class Backoff:
    """Capped exponential pauses: ``first_s``, twice that, … at most ``cap_s``."""

    first_s: float
    cap_s: float
    _next: float | None = None

    def next(self) -> float:
        """The pause before the next try (doubling from ``first_s`` up to ``cap_s``)."""
        pause = min(self.first_s if self._next is None else self._next, self.cap_s)
        self._next = min(pause * 2, self.cap_s)
        return pause

    def reset(self) -> None:
        """A try succeeded: the next failure pauses ``first_s`` again."""
        self._next = None


class OutageLog:
    """The outage state of one store, shared by whatever retries against it (thread-safe)."""

    def __init__(
        self, logger: logging.Logger = log, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._log = logger
        self._clock = clock
        self._lock = threading.Lock()
        self._since: float | None = None
        self._failing: set[object] = set()

    @property
    def ongoing(self) -> bool:
        with self._lock:
            return self._since is not None

    def failed(self, who: object, exc: BaseException, *, holds: bool = True) -> bool:
        """``who`` met ``exc``: False (nothing logged) unless it is an outage; the first
        failure of an outage logs its line with the traceback. A participant that ``holds``
        keeps the outage open until it gets through (:meth:`recovered`); one that does not (the
        work listener, which only shortens waits) ends with the next participant that does."""
        if not is_outage(exc):
            return False
        with self._lock:
            if holds:
                self._failing.add(who)
            if self._since is not None:
                return True
            self._since = self._clock()
        self._log.error(messages.database_unavailable(_reason(exc)), exc_info=exc)
        return True

    def recovered(self, who: object) -> None:
        """``who`` got through: the outage is over once every participant that failed did."""
        with self._lock:
            self._failing.discard(who)
            if self._since is None or self._failing:
                return
            lasted, self._since = self._clock() - self._since, None
        self._log.warning(messages.database_back(lasted), extra={"outage_s": round(lasted, 3)})


def through_outage(
    write: Callable[[], T],
    *,
    who: object,
    outage: OutageLog,
    pause: Backoff,
    sleep: Callable[[float], object],
    give_up: Callable[[], bool],
) -> T:
    """``write()``, tried again while the database takes no writes (down, or full) after each
    of ``pause``'s growing pauses (``sleep``), until it goes through or ``give_up()`` (then its
    error is raised); reported to ``outage`` as ``who``. Any other error is raised at once."""
    while True:
        try:
            result = write()
        except Exception as exc:
            if not is_outage(exc) or give_up():
                raise
            outage.failed(who, exc)
            sleep(pause.next())
            continue
        outage.recovered(who)
        return result


__all__ = ["DEFAULT_CAP_S", "FIRST_PAUSE_S", "Backoff", "OutageLog", "is_outage", "through_outage"]
