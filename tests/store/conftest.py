"""Store-test fixtures (the backend matrix itself is in tests/conftest.py)."""

from __future__ import annotations

from typing import Any

import pytest

from tocsin.store import Store

from .helpers import make_table


@pytest.fixture
def table(store: Store) -> dict[str, Any]:
    """One live table without triggers."""
    return make_table(store)
