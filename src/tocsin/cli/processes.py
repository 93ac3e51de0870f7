"""Long-running and one-shot processes: ``serve``, ``worker``, ``tick`` (SPEC §6, §16)."""

from __future__ import annotations

import json
import logging
import signal
import threading
from types import FrameType
from typing import Annotated
from urllib.parse import urlsplit, urlunsplit

import typer
import uvicorn
from uvicorn.importer import import_from_string

from tocsin.errors import TocsinError
from tocsin.runs.worker import STOP_GRACE_S, serve_worker
from tocsin.service import Tocsin
from tocsin.settings import Settings

from .logs import configure_logging

log = logging.getLogger("tocsin.cli")

SERVED_APP = "tocsin.api.app:create_served_app"
WORKER_POLL_S = 0.5

Host = Annotated[str, typer.Option(help="Interface to bind.")]
Port = Annotated[int, typer.Option(help="TCP port.", min=0, max=65535)]


def redacted(url: str) -> str:
    """``url`` with its password, if any, replaced by ``***`` (safe to print)."""
    parts = urlsplit(url)
    if not parts.password:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@", 1)
    return urlunsplit(parts._replace(netloc=netloc))


def open_tocsin() -> Tocsin:
    """The facade on ``TOCSIN_DATABASE_URL`` (migrated to head); a database that cannot be opened
    (a malformed URL, a server that does not answer) is one line on stderr and exit code 1."""
    settings = Settings.from_environ()
    try:
        return Tocsin.open(settings=settings)
    except Exception as exc:
        url = settings.database_url
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        password = urlsplit(url).password
        if password:
            reason = reason.replace(password, "***")
        typer.echo(f"error: cannot open the database {redacted(url)}: {reason}", err=True)
        raise typer.Exit(1) from None


def _after_shutdown(signum: int, _frame: FrameType | None) -> None:
    """uvicorn re-raises the signal that stopped it once shutdown is complete; by then the
    lifespan has stopped the ticker and the worker, so the process exits 0 instead of dying."""
    log.info("stopped", extra={"signal": signal.Signals(signum).name})


def run_server(app_factory: str, host: str, port: int) -> None:
    """uvicorn with JSON logs; SIGTERM/SIGINT shut down gracefully through the lifespan.

    Exits 1 when the lifespan reports that its background did not stop cleanly (a run may be
    left ``running``): a supervisor must not take that for a clean stop.
    """
    configure_logging()
    signal.signal(signal.SIGTERM, _after_shutdown)
    signal.signal(signal.SIGINT, _after_shutdown)
    app = import_from_string(app_factory)()  # by name: the CLI does not import the API layer
    uvicorn.run(app, host=host, port=port, log_config=None)
    if getattr(app.state, "stopped_cleanly", None) is False:
        raise typer.Exit(1)


def serve(host: Host = "127.0.0.1", port: Port = 8000) -> None:
    """Serve the API with the embedded ticker and an in-process worker."""
    Settings.from_environ().check_servable()  # a short admin token: one line, exit code 2
    open_tocsin().close()  # migrate, and fail as one line (not a traceback) if it cannot open
    run_server(SERVED_APP, host, port)


def _stop_on_signals(stop: threading.Event) -> None:
    def handler(signum: int, _frame: FrameType | None) -> None:
        log.info("stopping", extra={"signal": signal.Signals(signum).name})
        stop.set()

    signal.signal(signal.SIGTERM, handler)
    signal.signal(signal.SIGINT, handler)


def worker() -> None:
    """Execute pending runs until SIGTERM/SIGINT (each run's current action ends first, an
    outbound one by its deadline; the run goes back to pending). Exits 1 if a run could not."""
    configure_logging()
    tocsin = open_tocsin()
    stop = threading.Event()
    _stop_on_signals(stop)
    settings = tocsin.settings
    try:
        clean = serve_worker(
            tocsin,
            stop_event=stop,
            poll_interval=WORKER_POLL_S,
            concurrency=settings.worker_concurrency,
            stop_timeout_s=settings.action_timeout_max_s + STOP_GRACE_S,
        )
    finally:
        tocsin.close()
    if not clean:  # a run may be left running: the stale sweep requeues it later
        raise typer.Exit(1)


def tick(
    table_limit: Annotated[int, typer.Option(min=1, max=2000)] = 200,
    record_limit: Annotated[int, typer.Option(min=1, max=10000)] = 1000,
) -> None:
    """Run one tick now and print its counts as JSON."""
    tocsin = open_tocsin()
    try:
        counts = tocsin.tick(table_limit=table_limit, record_limit=record_limit)
    except TocsinError as exc:  # e.g. a lock conflict that outlived its retries (503)
        typer.echo(f"error ({exc.status}): {exc.detail}", err=True)
        raise typer.Exit(1) from None
    finally:
        tocsin.close()
    typer.echo(json.dumps(counts))


def register(app: typer.Typer) -> None:
    app.command()(serve)
    app.command()(worker)
    app.command()(tick)
