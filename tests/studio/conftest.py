"""Studio browser fixtures: a real ``tocsin serve`` process, the system Chromium, a world.

- ``chromium``: Playwright's sync API driving ``/usr/bin/chromium`` (never ``playwright
  install``). Missing: the tests skip with the reason, and FAIL under ``CI=true``.
- ``served``: ``tocsin serve --app studio.studio_app:APP`` (its workflows and its lane) on a
  free port over the conftest database, with a one-hour tick: nothing fires unless a test
  fires it, with an explicit ``now``, through its own facade (``world.t``) on the same
  database.
- ``world``: that facade, tokens (writer, member) and a table whose cron trigger posts to a
  local webhook receiver the test can make fail or succeed.
- ``page``: a fresh browser context (laptop width) that fails the test on any console error;
  closed before the server stops.

Screenshots go to ``tests/output/studio/<backend>/`` (ignored by git).
"""

from __future__ import annotations

import http.server
import os
import signal
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from studio.studio_app import LANES, WORKFLOWS
from support.net import LOCALHOST
from support.processes import TESTS, serving, tocsin_env
from tocsin.service import Tocsin
from tocsin.settings import Settings

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
OUTPUT = TESTS / "output" / "studio"
APP = "studio.studio_app:APP"
CHAT = "0b5e5a53-7c2e-4d1f-9d8e-3a1c6b7f2e10"
SAVED = datetime(2026, 12, 31, 12, 0, tzinfo=UTC)  # the table trigger's save instant
FIRST = datetime(2027, 1, 1, 0, 0, 5, tzinfo=UTC)  # every yearly schedule is due here
SECOND = datetime(2028, 1, 1, 0, 0, 5, tzinfo=UTC)


@pytest.fixture(scope="session")
def chromium() -> Iterator[Any]:
    if not CHROMIUM.exists():
        reason = f"Studio browser tests need the system Chromium at {CHROMIUM}"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"CI=true: {reason}", pytrace=False)
        pytest.skip(reason)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


class Receiver(http.server.BaseHTTPRequestHandler):
    """The table trigger's webhook target: answers ``server.code``."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.send_response(self.server.code)  # type: ignore[attr-defined]
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def receiver() -> Iterator[http.server.ThreadingHTTPServer]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
    server.code = 500  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def env(store_url: str, at_head: None) -> dict[str, str]:
    return tocsin_env(
        store_url, tick_every_s="3600", outbound_allow=LOCALHOST, tests_importable=True
    )


@pytest.fixture
def served(env: dict[str, str], tmp_path: Path) -> Iterator[str]:
    """Killed after the test (no test here checks a clean stop; the database is thrown away)."""
    with serving(env, tmp_path, app=APP, cwd=TESTS, then=signal.SIGKILL) as (_, base):
        yield base


@dataclass
class World:
    t: Tocsin
    base: str
    writer: str
    member: str
    table_id: str
    receiver: http.server.ThreadingHTTPServer
    shots: Path
    extra: dict[str, Any] = field(default_factory=dict)

    def url(self, path: str) -> str:
        return self.base + path


@pytest.fixture
def world(
    served: str,
    env: dict[str, str],
    backend: str,
    receiver: http.server.ThreadingHTTPServer,
) -> Iterator[World]:
    settings = Settings.from_environ(env)
    t = Tocsin.open(settings=settings, workflows=WORKFLOWS, lanes=LANES)  # the server synced
    try:
        writer = t.create_token(
            scope="chatroom", scope_id=CHAT, role="moderator", permissions=["schedules:write"]
        )
        member = t.create_token(
            scope="chatroom", scope_id=CHAT, role="member", permissions=["schedules:read"]
        )
        table = t.create_table(
            scope="chatroom", scope_id=CHAT, name="Invoices", columns={"Due": "date"}, now=SAVED
        )
        hook = f"http://127.0.0.1:{receiver.server_address[1]}/hook"
        trigger = {
            "name": "Post the yearly summary",
            "on": "schedule",
            "schedule": {"type": "cron", "expression": "0 0 1 1 *"},
            "actions": [{"type": "webhook", "url": hook}],
        }
        t.set_triggers(table["id"], [trigger], now=SAVED)
        shots = OUTPUT / backend
        shots.mkdir(parents=True, exist_ok=True)
        yield World(t, served, writer, member, table["id"], receiver, shots)
    finally:
        t.close()


@pytest.fixture
def page(chromium: Any, served: str) -> Iterator[Any]:
    """Set up after ``served``, so torn down before it: a page left polling (a live fire panel,
    a running run's graph) is closed before its server stops, never asking a stopped server."""
    context = chromium.new_context(viewport={"width": 1280, "height": 900})
    tab = context.new_page()
    errors: list[str] = []
    tab.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    tab.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        yield tab
    finally:
        context.close()
    assert errors == [], f"console errors: {errors}"
