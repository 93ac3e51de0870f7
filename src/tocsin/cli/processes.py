"""Long-running and one-shot processes: ``serve``, ``worker``, ``tick`` (SPEC §6, §16)."""

from __future__ import annotations

import json
import logging
import signal
import threading
from types import FrameType
from typing import Annotated

import typer
import uvicorn

from tocsin.runs.worker import serve_worker
from tocsin.service import Tocsin
from tocsin.settings import Settings

from .logs import configure_logging

log = logging.getLogger("tocsin.cli")

SERVED_APP = "tocsin.api.app:create_served_app"
WORKER_POLL_S = 0.5

Host = Annotated[str, typer.Option(help="Interface to bind.")]
Port = Annotated[int, typer.Option(help="TCP port.", min=0, max=65535)]


def open_tocsin() -> Tocsin:
    """The facade on ``TOCSIN_DATABASE_URL`` (migrated to head)."""
    return Tocsin.open(settings=Settings.from_environ())


def _after_shutdown(signum: int, _frame: FrameType | None) -> None:
    """uvicorn re-raises the signal that stopped it once shutdown is complete; by then the
    lifespan has stopped the ticker and the worker, so the process exits 0 instead of dying."""
    log.info("stopped", extra={"signal": signal.Signals(signum).name})


def run_server(app_factory: str, host: str, port: int) -> None:
    """uvicorn with JSON logs; SIGTERM/SIGINT shut down gracefully through the lifespan."""
    configure_logging()
    signal.signal(signal.SIGTERM, _after_shutdown)
    signal.signal(signal.SIGINT, _after_shutdown)
    uvicorn.run(app_factory, factory=True, host=host, port=port, log_config=None)


def serve(host: Host = "127.0.0.1", port: Port = 8000) -> None:
    """Serve the API with the embedded ticker and an in-process worker."""
    run_server(SERVED_APP, host, port)


def _stop_on_signals(stop: threading.Event) -> None:
    def handler(signum: int, _frame: FrameType | None) -> None:
        log.info("stopping", extra={"signal": signal.Signals(signum).name})
        stop.set()

    signal.signal(signal.SIGTERM, handler)
    signal.signal(signal.SIGINT, handler)


def worker() -> None:
    """Execute pending runs until SIGTERM/SIGINT (the current action finishes first)."""
    configure_logging()
    tocsin = open_tocsin()
    stop = threading.Event()
    _stop_on_signals(stop)
    try:
        serve_worker(tocsin, stop_event=stop, poll_interval=WORKER_POLL_S)
    finally:
        tocsin.close()


def tick(
    table_limit: Annotated[int, typer.Option(min=1, max=2000)] = 200,
    record_limit: Annotated[int, typer.Option(min=1, max=10000)] = 1000,
) -> None:
    """Run one tick now and print its counts as JSON."""
    tocsin = open_tocsin()
    try:
        counts = tocsin.tick(table_limit=table_limit, record_limit=record_limit)
    finally:
        tocsin.close()
    typer.echo(json.dumps(counts))


def register(app: typer.Typer) -> None:
    app.command()(serve)
    app.command()(worker)
    app.command()(tick)
