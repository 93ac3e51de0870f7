"""``/docs`` (Swagger UI) and ``/redoc`` render with the network blocked (issue 18).

A real ``tocsin serve`` process; the system Chromium through Playwright, every request to a host
other than 127.0.0.1 aborted and recorded. The pages must render (Swagger UI lists the API's
operations, ReDoc its title) with no request blocked and none failed: their assets are served by
tocsin itself. Under ``CI=true`` a missing Chromium or Playwright is a failure, not a skip.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest

pytestmark = pytest.mark.slow

TOCSIN = str(Path(sys.executable).parent / "tocsin")
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
    from test_e2e_serve import free_port, wait_for

    port = free_port()
    env = {
        **os.environ,
        "TOCSIN_DATABASE_URL": f"sqlite:///{tmp_path / 'docs.db'}",
        "TOCSIN_ADMIN_TOKEN": "docs-admin-token-of-32-characters",
    }
    log = (tmp_path / "serve.log").open("wb")
    proc = subprocess.Popen(
        [TOCSIN, "serve", "--port", str(port)], env=env, stdout=log, stderr=subprocess.STDOUT
    )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_for("the server", lambda: httpx.get(f"{base}/healthz").status_code == 200)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait(timeout=30)
        log.close()
        print((tmp_path / "serve.log").read_text())


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
