"""Store-test helpers: a fixed ``NOW`` and table/record builders (SPEC §2)."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

import pytest

from tocsin.store import Store
from tocsin.store.records import insert_table

NOW = datetime(2026, 8, 27, 5, 2, 13, tzinfo=UTC)

# run a test on PostgreSQL only (overrides the ``backend`` matrix of tests/conftest.py)
PG_ONLY = pytest.mark.parametrize(
    "backend", [pytest.param("postgresql", marks=pytest.mark.pg)], indirect=True
)
SQLITE_ONLY = pytest.mark.parametrize("backend", ["sqlite"], indirect=True)


def new_id() -> str:
    return str(uuid.uuid4())


def make_table(store: Store, **overrides: Any) -> dict[str, Any]:
    """Insert a live table (scope chatroom, columns Due/Status) and return its dict."""
    fields: dict[str, Any] = {
        "id": new_id(),
        "scope": "chatroom",
        "scope_id": new_id(),
        "name": "Cases",
        "columns": {"Due": "datetime", "Status": "text"},
        "now": NOW,
    }
    fields.update(overrides)
    with store.begin() as tx:
        return insert_table(tx, **fields)
