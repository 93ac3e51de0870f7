"""Pytest fixtures for tests that run ``tocsin serve``; a ``conftest.py`` imports the ones its
directory uses (``from support.fixtures import env, serve_app, served``), and a module overrides
``env`` or ``serve_app`` to change what is served."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from support.processes import TESTS, ServedProcess, e2e_env, serving


@pytest.fixture
def env(store_url: str, at_head: None) -> dict[str, str]:
    """The served process's environment (``support.processes.e2e_env``) on the test's database
    (a SQLite file, or a PostgreSQL schema)."""
    return e2e_env(store_url)


@pytest.fixture
def serve_app() -> str | None:
    """``tocsin serve --app``: none here; a module serving its workflows returns e.g.
    ``"workflows.e2e_app:WORKFLOWS"`` (imported from ``tests/``, which ``env`` must put on the
    path: ``tocsin_env(..., tests_importable=True)``)."""
    return None


@pytest.fixture
def served(
    env: dict[str, str], serve_app: str | None, tmp_path: Path
) -> Iterator[tuple[ServedProcess, str]]:
    """``tocsin serve`` with ``env``: the process and its base URL; killed after the test if it
    is still running (a test that checks the stop stops it itself)."""
    cwd = TESTS if serve_app else None
    with serving(env, tmp_path, app=serve_app, cwd=cwd, then=signal.SIGKILL) as proc_and_base:
        yield proc_and_base
