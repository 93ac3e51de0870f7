"""Store-test fixtures (the backend matrix itself is in tests/conftest.py)."""

from __future__ import annotations

import pytest

from tocsin.core.model import Table
from tocsin.store import Store

from .helpers import make_table


@pytest.fixture
def table(store: Store) -> Table:
    """One live table without triggers."""
    return make_table(store)
