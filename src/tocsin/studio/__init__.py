"""tocsin.studio: the server-rendered web UI (SPEC §16).

Jinja2 pages over the facade (DESIGN §2: an edge, "parse/authorise → facade call → render"),
a little vanilla JS from ``static/`` (no build step, nothing from a CDN). :func:`install` adds
the pages, ``/studio/static`` and the sign-in sessions to an app that serves
``app.state.tocsin`` (``tocsin.api.app.create_app`` calls it).
"""

from __future__ import annotations

import inspect

from fastapi import FastAPI, Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.staticfiles import StaticFiles

from tocsin import messages

from . import auth_pages, lane_pages, schedule_pages, table_pages, workflow_pages
from .sessions import Sessions, SignInLimiter
from .web import HERE, SignInRequired, render, sign_in_redirect

ROUTERS = (auth_pages, schedule_pages, workflow_pages, table_pages, lane_pages)


def install(app: FastAPI) -> None:
    """Mount Studio on ``app`` (its pages, static files and session store)."""
    settings = app.state.settings
    app.state.studio_sessions = Sessions(per_token=settings.studio_sessions_per_token)
    app.state.studio_sign_ins = SignInLimiter(per_minute=settings.studio_signins_per_minute)
    for module in ROUTERS:
        app.include_router(module.router)
    app.mount("/studio/static", StaticFiles(directory=HERE / "static"), name="studio-static")

    @app.exception_handler(SignInRequired)
    def sign_in(request: Request, _exc: SignInRequired) -> Response:
        return sign_in_redirect(request)

    # a malformed id or query value on a page is an HTML 422 page; the API keeps its JSON 422
    pages = {route.endpoint for module in ROUTERS for route in module.router.routes}
    api_handler = app.exception_handlers.get(RequestValidationError)

    async def malformed(request: Request, exc: Exception) -> Response:
        endpoint = getattr(request.scope.get("route"), "endpoint", None)
        if endpoint not in pages or not isinstance(exc, RequestValidationError):
            if api_handler is None:
                raise exc
            answer = api_handler(request, exc)
            return await answer if inspect.isawaitable(answer) else answer
        first = exc.errors()[0] if exc.errors() else {}
        where = " ".join(str(part) for part in first.get("loc", ()))
        detail = messages.studio_bad_request(where or "request", str(first.get("msg", "")))
        return render(request, "error.html", viewer=None, code=422, detail=detail)

    app.add_exception_handler(RequestValidationError, malformed)


__all__ = ["install"]
