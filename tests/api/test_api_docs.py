"""``/docs`` and ``/redoc`` reference only local assets (the browser check that they render
offline is tests/e2e/test_e2e_docs_offline.py)."""

from __future__ import annotations

import re

from api_support import TestClient

from tocsin.api.docs import REDOC_REMOTE_LOGO

REMOTE = re.compile(r"""(?:src|href)=["']?(?:https?:)?//""")


def test_docs_pages_load_their_assets_from_this_server(client: TestClient) -> None:
    for page, assets in (
        ("/docs", ("swagger-ui-bundle.js", "swagger-ui.css")),
        ("/redoc", ("redoc.standalone.js",)),
    ):
        html = client.get(page)
        assert html.status_code == 200
        assert REMOTE.search(html.text) is None, page
        assert "fonts.googleapis.com" not in html.text
        for asset in assets:
            assert f'/docs-assets/{asset}"' in html.text
            served = client.get(f"/docs-assets/{asset}")
            assert served.status_code == 200 and len(served.content) > 10_000
    script = client.get("/docs-assets/redoc.standalone.js").text
    assert REDOC_REMOTE_LOGO not in script and "/docs-assets/favicon.png" in script
