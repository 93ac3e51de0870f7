"""``/docs`` (Swagger UI) and ``/redoc`` served from local assets, so they work offline.

The assets come from the ``fastapi-offline`` package (MIT; it ships Swagger UI's bundle and
stylesheet and ReDoc's standalone script); they are mounted at ``/docs-assets`` and the pages
point there instead of a CDN (FastAPI's "Custom Docs UI Static Assets (Self-Hosting)"). ReDoc
is told not to load Google Fonts, and Swagger UI not to call the online validator. ReDoc's
script names one more remote file, the "API docs by Redocly" logo: its script is served with
that URL pointing at the local favicon instead.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

from fastapi import FastAPI
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
from fastapi.responses import HTMLResponse, Response
from fastapi.staticfiles import StaticFiles

ASSETS = "/docs-assets"
REDOC_REMOTE_LOGO = "https://cdn.redoc.ly/redoc/logo-mini.svg"


def assets_dir() -> Path:
    """The directory of the packaged Swagger UI and ReDoc files."""
    return Path(str(files("fastapi_offline") / "static"))


def install_docs(app: FastAPI) -> None:
    """Mount the assets and add ``/docs`` and ``/redoc``."""
    redoc_js = (assets_dir() / "redoc.standalone.js").read_text(encoding="utf-8")
    redoc_js = redoc_js.replace(REDOC_REMOTE_LOGO, f"{ASSETS}/favicon.png")

    @app.get(f"{ASSETS}/redoc.standalone.js", include_in_schema=False)
    def redoc_script() -> Response:  # before the mount, which would serve the original
        return Response(redoc_js, media_type="text/javascript; charset=utf-8")

    app.mount(ASSETS, StaticFiles(directory=assets_dir()), name="docs-assets")
    openapi_url = app.openapi_url or "/openapi.json"
    title = f"{app.title} API"

    @app.get("/docs", include_in_schema=False)
    def swagger_ui() -> HTMLResponse:
        return get_swagger_ui_html(
            openapi_url=openapi_url,
            title=title,
            swagger_js_url=f"{ASSETS}/swagger-ui-bundle.js",
            swagger_css_url=f"{ASSETS}/swagger-ui.css",
            swagger_favicon_url=f"{ASSETS}/favicon.png",
            swagger_ui_parameters={"validatorUrl": None},
        )

    @app.get("/redoc", include_in_schema=False)
    def redoc() -> HTMLResponse:
        return get_redoc_html(
            openapi_url=openapi_url,
            title=title,
            redoc_js_url=f"{ASSETS}/redoc.standalone.js",
            redoc_favicon_url=f"{ASSETS}/favicon.png",
            with_google_fonts=False,
        )


__all__ = ["ASSETS", "install_docs"]
