"""``/docs`` (Swagger UI) and ``/redoc`` render with the network blocked.

A real ``tocsin serve`` process; the system Chromium through Playwright, every request to a host
other than 127.0.0.1 aborted and recorded. The pages must render (Swagger UI lists the API's
operations, ReDoc its title) with no request blocked and none failed: their assets are served by
tocsin itself. Under ``CI=true`` a missing Chromium or Playwright is a failure, not a skip.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from support.processes import serving, tocsin_env

pytestmark = pytest.mark.slow

CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def require_browser() -> None:
    reason = None
    if not Path(CHROMIUM).exists():
        reason = f"the system Chromium ({CHROMIUM}) is missing"
    else:
        try:
            import playwright.sync_api  # noqa: F401
        except ImportError:
            reason = "playwright is not installed"
    if reason is None:
        return
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"CI=true: {reason}", pytrace=False)
    pytest.skip(reason)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[str]:
    env = tocsin_env(
        f"sqlite:///{tmp_path / 'docs.db'}", admin_token="docs-admin-token-of-32-characters"
    )
    with serving(env, tmp_path) as (_, base):
        yield base


def test_docs_and_redoc_render_offline(served: str) -> None:
    require_browser()
    from playwright.sync_api import Route, sync_playwright

    blocked: list[str] = []
    failed: list[str] = []

    def local_only(route: Route) -> None:
        if urlsplit(route.request.url).hostname == "127.0.0.1":
            route.continue_()
        else:
            blocked.append(route.request.url)
            route.abort()

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            page = browser.new_page()
            page.route("**/*", local_only)
            page.on("requestfailed", lambda request: failed.append(request.url))
            page.goto(f"{served}/docs")
            page.wait_for_selector(".swagger-ui .info .title", timeout=30_000)
            assert "tocsin" in page.inner_text(".swagger-ui .info .title")
            page.wait_for_selector(".opblock-summary-path", timeout=30_000)
            paths = page.locator(".opblock-summary-path").all_inner_texts()
            assert any("/triggers/{trigger_id}" in p for p in paths)
            page.goto(f"{served}/redoc")
            page.wait_for_selector("h1", timeout=30_000)
            assert "tocsin" in page.inner_text("h1")
        finally:
            browser.close()
    assert blocked == []
    assert failed == []
