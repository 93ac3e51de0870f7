"""Connection pools of their own for the API, the worker and the ticker (PostgreSQL).

One process may hold all three (``tocsin serve``): a table another session locks
(``LOCK TABLE records IN ACCESS EXCLUSIVE MODE``) used to stall every route, because the API,
the worker and the ticker waited on one pool without a timeout. Now each :data:`ROLES` has its
own engine (:class:`PoolSpec`: its size, its ``lock_timeout`` and ``statement_timeout``), and a
statement that waits past its timeout fails as a transient conflict (``store.errors``): 503 with
``Retry-After`` for a request, retried in place for a run (SPEC §9.5), a table skipped by a tick
(SPEC §6).

Which pool a transaction takes is the role bound in the current context (:func:`bound`), the
API's when none is: ``Tocsin.tick`` binds the ticker's, ``Tocsin.work`` the worker's, and a run
thread the worker starts inherits it (``runs.pool``). The first binding wins, so a tick an API
request asks for (``POST /root/custom-tables/run-due-triggers``) stays on the API's pool, under
the API's timeouts: its client is waiting.

SQLite has no such locks, so one engine serves every role, unchanged: a writer waits for the
write lock at most ``engine.SQLITE_BUSY_TIMEOUT_MS`` (then ``database is locked``: 503 for a
request, retried in place for a run), and a reader never waits (WAL).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from tocsin import messages

API, WORKER, TICKER = "api", "worker", "ticker"
ROLES = (API, WORKER, TICKER)

_ROLE: ContextVar[str | None] = ContextVar("tocsin_store_role", default=None)


@dataclass(frozen=True, slots=True)
class PoolSpec:
    """A role's pool: at most ``size`` connections; PostgreSQL's ``lock_timeout`` and
    ``statement_timeout`` on each (seconds; 0: none)."""

    size: int
    lock_timeout_s: float
    statement_timeout_s: float


def current_role() -> str:
    """The role bound in this context; the API's when none is."""
    return _ROLE.get() or API


@contextmanager
def bound(role: str) -> Iterator[None]:
    """Transactions opened inside take ``role``'s pool, unless a role is bound already."""
    if role not in ROLES:
        raise ValueError(messages.pool_role_unknown(role))
    token = _ROLE.set(role) if _ROLE.get() is None else None
    try:
        yield
    finally:
        if token is not None:
            _ROLE.reset(token)


__all__ = ["API", "ROLES", "TICKER", "WORKER", "PoolSpec", "bound", "current_role"]
