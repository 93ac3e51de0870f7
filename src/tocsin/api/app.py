"""``create_app``: the FastAPI application of tocsin (SPEC §15, DESIGN §4b).

``create_app(settings, tocsin=…)`` serves a facade the caller owns (tests, embedding);
without one it opens ``settings.database_url`` and closes it on shutdown. With
``run_background=True`` the lifespan also runs the embedded ticker and an in-process worker
(``tocsin serve``). :func:`create_served_app` and :func:`create_demo_app` are the uvicorn
factories the CLI starts by name.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager

from fastapi import FastAPI

from tocsin import studio
from tocsin.service import Tocsin
from tocsin.service.apps import open_with_app
from tocsin.settings import Settings

from . import demo
from .background import Background
from .deps import RejectUnexpectedBody, RejectUnknownQuery
from .docs import install_docs
from .errors import install_error_handlers
from .guard import RequestGuard
from .head import HeadAsGet
from .metrics import Metrics, serve_metrics
from .routes import (
    iac,
    lanes,
    messages,
    ops,
    root,
    runs,
    schedules,
    staged,
    tables,
    triggers,
    whynot,
    workflows,
)

log = logging.getLogger("tocsin.api")

DESCRIPTION = """A durable trigger and schedule engine.

Tenant routes take `Authorization: Bearer <token>` (create one with `tocsin tokens create`);
root routes take `X-ADMIN-TOKEN`; `/api/schedules…`, `/api/workflows…` and `/api/lanes…` take a
token with the `schedules:read` / `schedules:write` permission. Errors are JSON `{"detail": …}`."""


def run_counter(tocsin: Tocsin) -> dict[str, int]:
    """Runs per stored status and the stuck count for the metrics gauges (read at scrape time)."""
    return tocsin.run_counts()


def _lifespan(
    background: bool, owned: bool
) -> Callable[[FastAPI], AbstractAsyncContextManager[None]]:
    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        settings: Settings = app.state.settings
        exporter = None
        if settings.metrics_port is not None:  # /metrics on a port of its own
            registry = app.state.metrics.registry
            exporter = serve_metrics(registry, settings.metrics_host, settings.metrics_port)
        tasks = Background(app.state.tocsin, app.state.metrics) if background else None
        if tasks is not None:
            tasks.start()
        try:
            yield
        finally:
            if tasks is not None:  # off the event loop: the stop may wait for an action deadline
                app.state.stopped_cleanly = await asyncio.to_thread(tasks.stop)
            if exporter is not None:
                exporter.shutdown()
                exporter.server_close()
            if owned:
                app.state.tocsin.close()

    return lifespan


def create_app(
    settings: Settings | None = None,
    *,
    tocsin: Tocsin | None = None,
    run_background: bool = False,
    demo_routes: bool = False,
    close_facade: bool | None = None,
) -> FastAPI:
    """The API over ``tocsin`` (or a facade opened from ``settings``); ``close_facade`` (default:
    only a facade it opened itself) closes it on shutdown."""
    settings = settings or (tocsin.settings if tocsin is not None else Settings.from_environ())
    owned = tocsin is None if close_facade is None else close_facade
    facade = tocsin if tocsin is not None else Tocsin.open(settings=settings)
    app = FastAPI(
        title="tocsin",
        version="0.1.0",
        description=DESCRIPTION,
        docs_url=None,  # served from local assets by install_docs (offline)
        redoc_url=None,
        lifespan=_lifespan(run_background, owned),
    )
    app.state.settings = settings
    app.state.tocsin = facade
    app.state.metrics = Metrics(lambda: run_counter(facade), facade.store.outage)
    app.state.stopped_cleanly = None  # the lifespan's verdict once the background has stopped
    install_error_handlers(app)
    install_docs(app)
    app.add_middleware(RequestGuard, tocsin=facade, settings=settings)
    app.add_middleware(HeadAsGet)  # outermost: a HEAD is a GET from here on
    routers = (
        tables,
        triggers,
        runs,
        staged,
        messages,
        root,
        ops,
        schedules,
        workflows,
        iac,
        lanes,
        whynot,
    )
    for module in routers:
        app.include_router(module.router, dependencies=[RejectUnknownQuery, RejectUnexpectedBody])
    if demo_routes:
        app.include_router(demo.router)
    studio.install(app)  # the web UI (SPEC §16): /login, /workflows…, /tables…
    return app


def create_served_app() -> FastAPI:
    """uvicorn factory of ``tocsin serve``: settings from the environment, background on."""
    settings = Settings.from_environ()
    settings.check_servable()
    facade = open_with_app(settings)
    return create_app(settings, tocsin=facade, run_background=True, close_facade=True)


def create_demo_app() -> FastAPI:
    """uvicorn factory of ``tocsin demo``: as ``serve`` plus the demo echo endpoint."""
    settings = Settings.from_environ()
    settings.check_servable()
    facade = open_with_app(settings)
    return create_app(
        settings, tocsin=facade, run_background=True, demo_routes=True, close_facade=True
    )


__all__ = ["create_app", "create_demo_app", "create_served_app"]
