"""Long-running and one-shot processes: ``serve``, ``scheduler``, ``worker``, ``tick`` (§6, §16).

``--app module:attr`` (or ``TOCSIN_APP``) imports the user's workflows; every process that is
given one syncs their declared schedules on start (SPEC §12), once.

:func:`open_tocsin` is how every command opens the database. With ``TOCSIN_DATABASE_URL`` unset
and no ``./tocsin.db`` a command would silently create an empty database there (and then answer
"0 schedule(s)" or "table not found"); every command but ``serve`` and ``demo`` says so instead,
unless given ``--create``.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import sys
import threading
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from types import FrameType
from typing import Annotated, NoReturn, TypeVar
from urllib.parse import urlsplit, urlunsplit

import typer
import uvicorn
from uvicorn.importer import import_from_string

from tocsin import messages
from tocsin.engine.ticker import Ticker
from tocsin.errors import StoreUnavailable, TocsinError
from tocsin.runs.worker import STOP_GRACE_S, serve_worker
from tocsin.service import Tocsin
from tocsin.service.apps import open_with_app, sync_and_log
from tocsin.settings import Settings
from tocsin.store.notify import WorkListener

from .logs import configure_logging

log = logging.getLogger("tocsin.cli")

SERVED_APP = "tocsin.api.app:create_served_app"
WORKER_POLL_S = 0.5
DEFAULT_DATABASE = "tocsin.db"  # where Settings puts the database when TOCSIN_DATABASE_URL is unset
T = TypeVar("T")

Host = Annotated[str, typer.Option(help="Interface to bind.")]
Port = Annotated[int, typer.Option(help="TCP port.", min=0, max=65535)]
AppOpt = Annotated[
    str | None,
    typer.Option("--app", help="module:attr of a Tocsin or a list of workflows (TOCSIN_APP)."),
]
CreateOpt = Annotated[
    bool,
    typer.Option(
        "--create",
        help="Allow creating ./tocsin.db when TOCSIN_DATABASE_URL is unset and it does not exist.",
    ),
]


def redacted(url: str) -> str:
    """``url`` with its password, if any, replaced by ``***`` (safe to print)."""
    parts = urlsplit(url)
    if not parts.password:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@", 1)
    return urlunsplit(parts._replace(netloc=netloc))


def require_database(create: bool) -> None:
    """Exit 1 with a clear message when ``TOCSIN_DATABASE_URL`` is unset and ``./tocsin.db``
    does not exist, unless ``create``: opening would create an empty database by accident."""
    unset = "TOCSIN_DATABASE_URL" not in os.environ
    if unset and not create and not Path(DEFAULT_DATABASE).exists():
        typer.echo(f"error: {messages.no_database(DEFAULT_DATABASE)}", err=True)
        raise typer.Exit(1)


def open_tocsin(app: str | None = None, *, sync: bool = False, create: bool = False) -> Tocsin:
    """The facade on ``TOCSIN_DATABASE_URL`` (migrated to head), with the workflows of ``app``
    (or ``TOCSIN_APP``) registered, and synced with ``sync`` (only ``worker`` and ``scheduler``
    sync here; ``serve`` syncs in its app factory). No database yet and not ``create``: refused
    (:func:`require_database`). A database that cannot be opened (a malformed URL, a server that
    does not answer) is one line on stderr and exit code 1; a bad ``--app`` (or a workflow
    definition it refuses) one line and exit code 2."""
    settings = Settings.from_environ()  # a malformed setting first: it is the likelier mistake
    require_database(create)
    if app is not None:
        settings = replace(settings, app=app)
    return or_exit(settings.database_url, lambda: open_with_app(settings, sync=sync))


def or_exit(url: str, opening: Callable[[], T], *, any_error: bool = True) -> T:
    """``opening()``, its failures as one line: a database error exit 1 (why it did not open),
    a refusal of the app (``TocsinError``) exit 2; with ``any_error`` any other exception too
    is taken for the database's (exit 1)."""
    try:
        return opening()
    except StoreUnavailable as exc:  # a database error, not the app's: say why it did not open
        failure: BaseException = exc.__cause__ or exc
    except TocsinError as exc:
        typer.echo(f"error: {exc.detail}", err=True)
        raise typer.Exit(2) from None
    except Exception as exc:
        if not any_error:
            raise
        failure = exc
    _cannot_open(url, failure)


def _cannot_open(url: str, exc: BaseException) -> NoReturn:
    """One line on stderr (the password masked) and exit code 1."""
    reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    password = urlsplit(url).password
    if password:
        reason = reason.replace(password, "***")
    typer.echo(f"error: {messages.database_unopenable(redacted(url), reason)}", err=True)
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
    factory = import_from_string(app_factory)  # by name: the CLI does not import the API layer
    url = Settings.from_environ().database_url
    app = or_exit(url, factory, any_error=False)  # it syncs --app's schedules: one line if not
    uvicorn.run(app, host=host, port=port, log_config=None)
    if getattr(app.state, "stopped_cleanly", None) is False:
        raise typer.Exit(1)


def serve(host: Host = "127.0.0.1", port: Port = 8000, app: AppOpt = None) -> None:
    """Serve the API with the embedded ticker and an in-process worker."""
    Settings.from_environ().check_servable()  # a short admin token: one line, exit code 2
    # migrate and import --app, failing as one line if it cannot; the app factory syncs the
    # schedules (once: a second sync here reported the ones it just created as unchanged)
    open_tocsin(app, create=True).close()
    if app is not None:
        os.environ["TOCSIN_APP"] = app  # the uvicorn factory reads it (Settings.app)
    run_server(SERVED_APP, host, port)


def _stop_on_signals(stop: threading.Event) -> None:
    def handler(signum: int, _frame: FrameType | None) -> None:
        log.info("stopping", extra={"signal": signal.Signals(signum).name})
        stop.set()

    signal.signal(signal.SIGTERM, handler)
    signal.signal(signal.SIGINT, handler)


def worker(app: AppOpt = None, create: CreateOpt = False) -> None:
    """Execute pending runs (table runs, and the runs of --app's workflows) until
    SIGTERM/SIGINT (each run's current action or step ends first, an outbound one by its
    deadline; the run goes back to pending). Exits 1 if a run could not."""
    configure_logging()
    tocsin = open_tocsin(app, sync=True, create=create)
    stop = threading.Event()
    _stop_on_signals(stop)
    settings = tocsin.settings
    listener = WorkListener(tocsin.store, stop)  # runs another process makes wake it
    try:
        clean = serve_worker(
            tocsin,
            stop_event=stop,
            poll_interval=WORKER_POLL_S,
            concurrency=settings.worker_concurrency,
            per_scope=settings.per_scope_cap,
            stop_timeout_s=settings.action_timeout_max_s + STOP_GRACE_S,
            idle=listener.wait,
            outage=tocsin.store.outage,
            backoff_max_s=settings.db_backoff_max_s,
        )
    finally:
        listener.close()
        tocsin.close()
    if not clean:  # a run may be left running: the stale sweep requeues it later
        raise typer.Exit(1)


def tick(
    table_limit: Annotated[int, typer.Option(min=1, max=2000)] = 200,
    record_limit: Annotated[int, typer.Option(min=1, max=10000)] = 1000,
    create: CreateOpt = False,
) -> None:
    """Run one tick now and print its counts as JSON."""
    tocsin = open_tocsin(create=create)
    try:
        counts = tocsin.tick(table_limit=table_limit, record_limit=record_limit)
    except TocsinError as exc:  # e.g. a lock conflict that outlived its retries (503)
        typer.echo(messages.cli_error(exc.status, exc.detail), err=True)
        raise typer.Exit(1) from None
    finally:
        tocsin.close()
    typer.echo(json.dumps(counts))


def scheduler(
    app: AppOpt = None,
    every: Annotated[float | None, typer.Option(min=0.01, help="Seconds between ticks.")] = None,
    clock_stdin: Annotated[
        bool,
        typer.Option(
            "--clock-stdin",
            hidden=True,
            help="Tick at each ISO instant read from stdin; print each tick's counts as JSON.",
        ),
    ] = False,
    create: CreateOpt = False,
) -> None:
    """Tick only (table triggers and workflow schedules) until SIGTERM/SIGINT; several
    schedulers on one PostgreSQL never fire an occurrence twice."""
    configure_logging()
    tocsin = open_tocsin(app, sync=not clock_stdin, create=create)
    try:
        if clock_stdin:
            _tick_from_stdin(tocsin, sync=tocsin.settings.app is not None)
            return
        stop = threading.Event()
        _stop_on_signals(stop)
        period = every or tocsin.settings.tick_every_s
        Ticker(
            tick=lambda now: tocsin.tick(now=now),
            every_s=period,
            outage=tocsin.store.outage,
            backoff_max_s=tocsin.settings.db_backoff_max_s,
        ).run(stop)
    finally:
        tocsin.close()


def _tick_from_stdin(tocsin: Tocsin, *, sync: bool) -> None:
    """Simulated time for tests and replays: one tick per line, never a sleep; the schedules of
    ``--app`` are synced at the first instant read."""
    for line in sys.stdin:
        text = line.strip()
        if not text:
            continue
        now = datetime.fromisoformat(text)
        now = now if now.tzinfo is not None else now.replace(tzinfo=UTC)
        if sync:
            sync_and_log(tocsin, now)
            sync = False
        try:
            counts: dict[str, object] = dict(tocsin.tick(now=now))
        except TocsinError as exc:
            counts = {"error": exc.detail}
        sys.stdout.write(json.dumps(counts) + "\n")
        sys.stdout.flush()


def register(app: typer.Typer) -> None:
    app.command()(serve)
    app.command()(scheduler)
    app.command()(worker)
    app.command()(tick)
