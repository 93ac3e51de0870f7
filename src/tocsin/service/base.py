"""What every service of the facade shares: the :class:`Core` (store, settings, the workflow
registry, the edge clock, ids) and :class:`Service`, the base that hands it to a service."""

from __future__ import annotations

import functools
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, ParamSpec, TypeVar

from tocsin import messages
from tocsin.core.time.instants import MAX_UTC, MIN_UTC
from tocsin.errors import ValidationError
from tocsin.settings import Settings
from tocsin.store import open_store, pools
from tocsin.store.pools import PoolSpec
from tocsin.store.tx import Store

if TYPE_CHECKING:
    from tocsin.workflows.definition import Workflow


def wall_clock() -> datetime:
    """The real clock, read only at the edges (a worker loop without a fixed ``now``)."""
    return datetime.now(UTC)


def edge_now(now: datetime | None) -> datetime:
    """The edge default: the real clock only when the caller passed no ``now``."""
    if now is None:
        return datetime.now(UTC)
    if not isinstance(now, datetime) or now.tzinfo is None:
        raise ValidationError(messages.now_not_aware(now))
    try:
        return now.astimezone(UTC)
    except OverflowError:  # year 1 ahead of UTC, or year 9999 behind it: the edge of time
        return MIN_UTC if now.year == 1 else MAX_UTC


def new_id(prefix: str = "") -> str:
    if prefix:
        return f"{prefix}_{uuid.uuid4().hex[:12]}"
    return str(uuid.uuid4())


P = ParamSpec("P")
R = TypeVar("R")


def pool_specs(settings: Settings) -> dict[str, PoolSpec]:
    """The connection pools ``settings`` gives the API, the worker and the ticker
    (``tocsin.store.pools``; PostgreSQL only)."""
    s = settings
    # the worker's: one connection per run thread, plus its claims and heartbeats
    worker = s.worker_pool_size or s.worker_concurrency + 2
    return {
        pools.API: PoolSpec(s.api_pool_size, s.api_lock_timeout_s, s.api_statement_timeout_s),
        pools.WORKER: PoolSpec(worker, s.worker_lock_timeout_s, s.worker_statement_timeout_s),
        pools.TICKER: PoolSpec(
            s.ticker_pool_size, s.ticker_lock_timeout_s, s.ticker_statement_timeout_s
        ),
    }


def open_configured_store(url: str, settings: Settings) -> Store:
    """The database at ``url`` (migrated to head) with the pools and the SQLite size cap
    ``settings`` give it."""
    return open_store(url, pool_specs(settings), sqlite_max_bytes=settings.sqlite_max_bytes)


def on_pool(role: str) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """A facade method whose transactions take ``role``'s pool (``pools.bound``: unless its
    caller bound one already)."""

    def wrap(method: Callable[P, R]) -> Callable[P, R]:
        @functools.wraps(method)
        def on_role(*args: P.args, **kwargs: P.kwargs) -> R:
            with pools.bound(role):
                return method(*args, **kwargs)

        return on_role

    return wrap


class Core:
    """One facade's shared state: the ``Store``, the ``Settings``, the registry of workflows
    (filled by ``register_workflows``, read by the workflow and IaC services) and the names of
    the commands exposed to tenants (``register_command(..., tenants=True)``)."""

    def __init__(self, store: Store, settings: Settings) -> None:
        self.store = store
        self.settings = settings
        self.workflows: dict[str, Workflow] = {}
        self.tenant_commands: set[str] = set()

    def close(self) -> None:
        self.store.dispose()

    now = staticmethod(edge_now)
    wall_clock = staticmethod(wall_clock)
    new_id = staticmethod(new_id)


class Service:
    """A service over one :class:`Core`: ``self.store``, ``self.settings``, ``self._now`` (the
    edge clock default) and ``self._new_id``. Other services it calls come in explicitly."""

    def __init__(self, core: Core) -> None:
        self.core = core

    @property
    def store(self) -> Store:
        return self.core.store

    @property
    def settings(self) -> Settings:
        return self.core.settings

    _now = staticmethod(edge_now)
    wall_clock = staticmethod(wall_clock)
    _new_id = staticmethod(new_id)


__all__ = [
    "Core",
    "Service",
    "edge_now",
    "new_id",
    "on_pool",
    "pool_specs",
    "wall_clock",
]
