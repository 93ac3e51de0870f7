"""The shared fixtures of tests/conftest.py do what they promise (DESIGN §6)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from sqlalchemy import func, select

from tocsin.service import Tocsin
from tocsin.store.migrate import current_revision, head_revision
from tocsin.store.schema import tables


def test_store_url_carries_everything_for_the_facade(tocsin: Tocsin, store_url: str) -> None:
    """``Tocsin.open(store_url)`` lands in the test's own database/schema, migrated."""
    assert current_revision(tocsin.store) == head_revision()
    assert tocsin.settings.database_url == store_url
    with tocsin.store.read() as tx:
        assert tx.conn.execute(select(func.count()).select_from(tables)).scalar_one() == 0


def test_missing_pg_url_skips_locally_and_fails_under_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    # loaded by path: "conftest" as a module name is ambiguous (tests/api has one too)
    spec = importlib.util.spec_from_file_location(
        "tocsin_root_conftest", Path(__file__).parents[1] / "conftest.py"
    )
    assert spec is not None and spec.loader is not None
    root_conftest = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(root_conftest)
    PG_ENV, pg_base_url = root_conftest.PG_ENV, root_conftest.pg_base_url

    monkeypatch.delenv(PG_ENV, raising=False)
    monkeypatch.setenv("CI", "false")
    with pytest.raises(pytest.skip.Exception):
        pg_base_url()
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="CI=true"):
        pg_base_url()
    monkeypatch.setenv(PG_ENV, "postgresql://example/test")
    assert pg_base_url() == "postgresql://example/test"
