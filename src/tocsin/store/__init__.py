"""tocsin.store: the only package that speaks SQL (DESIGN §2, §5)."""

from __future__ import annotations

from collections.abc import Mapping

from tocsin.store.engine import store_engines
from tocsin.store.pools import PoolSpec
from tocsin.store.tx import Store, Tx


def open_store(
    url: str,
    pools: Mapping[str, PoolSpec] | None = None,
    *,
    sqlite_max_bytes: int | None = None,
) -> Store:
    """A Store for ``url``, migrated to head. On PostgreSQL each role of ``pools``
    (``store.pools.ROLES``) gets an Engine of its own; SQLite has one Engine for all, capped at
    ``sqlite_max_bytes`` (``TOCSIN_SQLITE_MAX_BYTES``)."""
    from tocsin.store.migrate import upgrade_to_head

    store = Store(*store_engines(url, pools, sqlite_max_bytes=sqlite_max_bytes))
    upgrade_to_head(store)
    return store


__all__ = ["Store", "Tx", "open_store"]
