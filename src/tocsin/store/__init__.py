"""tocsin.store: the only package that speaks SQL (DESIGN §2, §5)."""

from __future__ import annotations

from tocsin.store.engine import create_store_engine
from tocsin.store.tx import Store, Tx


def open_store(url: str, sqlite_max_bytes: int | None = None) -> Store:
    """An Engine for ``url`` (``create_store_engine``), migrated to head."""
    from tocsin.store.migrate import upgrade_to_head

    store = Store(create_store_engine(url, sqlite_max_bytes=sqlite_max_bytes))
    upgrade_to_head(store)
    return store


__all__ = ["Store", "Tx", "open_store"]
