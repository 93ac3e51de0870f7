"""tocsin.studio: the server-rendered web UI (SPEC §16, issue 13).

Jinja2 pages over the facade (DESIGN §2: an edge, "parse/authorise → facade call → render"),
a little vanilla JS from ``static/`` (no build step, nothing from a CDN). :func:`install` adds
the pages, ``/studio/static`` and the sign-in sessions to an app that serves
``app.state.tocsin`` (``tocsin.api.app.create_app`` calls it).
"""

from __future__ import annotations

from fastapi import FastAPI, Request, Response
from fastapi.staticfiles import StaticFiles

from . import auth_pages, lane_pages, schedule_pages, table_pages, workflow_pages
from .sessions import Sessions
from .web import HERE, SignInRequired, sign_in_redirect

ROUTERS = (auth_pages, schedule_pages, workflow_pages, table_pages, lane_pages)


def install(app: FastAPI) -> None:
    """Mount Studio on ``app`` (its pages, static files and session store)."""
    app.state.studio_sessions = Sessions()
    for module in ROUTERS:
        app.include_router(module.router)
    app.mount("/studio/static", StaticFiles(directory=HERE / "static"), name="studio-static")

    @app.exception_handler(SignInRequired)
    def sign_in(request: Request, _exc: SignInRequired) -> Response:
        return sign_in_redirect(request)


__all__ = ["install"]
