"""The CLI tests' ``env``: the in-process CLI (``support.cli.invoke``) on the test's database."""

from __future__ import annotations

import pytest


@pytest.fixture
def env(store_url: str, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """``TOCSIN_DATABASE_URL`` is the test's database and ``TOCSIN_APP`` unset (monkeypatch puts
    both back after the test); returns ``{"TOCSIN_DATABASE_URL": store_url}``."""
    monkeypatch.setenv("TOCSIN_DATABASE_URL", store_url)
    monkeypatch.delenv("TOCSIN_APP", raising=False)
    return {"TOCSIN_DATABASE_URL": store_url}
