"""``tocsin demo`` (``make run``): a newcomer's first minute.

Creates a fresh SQLite database, seeds one chatroom with a table of cases and four schedule
triggers (a due-date reminder, an interval webhook to tocsin's own ``/demo/echo``, a daily and
a cron trigger) and registers the demo workflow (``tocsin.workflows.demo``: two code-declared
schedules, one every minute), prints the URL and three tokens, writes them to
``tocsin-demo.env`` for the README's curl examples, and serves with a 5-second tick so runs,
schedule fires and workflow runs appear within a minute.

While it runs, a demo holds an exclusive lock on ``tocsin-demo.lock`` (``flock``, released when
the process ends, however it ends): a second demo in the same directory, on any port, refuses to
start instead of deleting the first one's database and overwriting its env file.
"""

from __future__ import annotations

import errno
import fcntl
import os
import secrets
import socket
from dataclasses import replace
from pathlib import Path
from typing import IO, Any

import typer

from tocsin import messages
from tocsin.service import Tocsin
from tocsin.settings import Settings

from .processes import Host, Port, run_server

DEMO_APP = "tocsin.api.app:create_demo_app"
DEMO_DB = Path("tocsin-demo.db")
ENV_FILE = Path("tocsin-demo.env")
LOCK_FILE = Path("tocsin-demo.lock")
DEMO_CHATROOM = "6f1c2a9e-0b7d-4c1e-9a53-2f0e8d7c4b11"
DEMO_TICK_EVERY_S = 5.0
DEMO_WORKFLOWS = "tocsin.workflows.demo:WORKFLOWS"

# fixed dates, so the demo needs no clock: one overdue (fires at the first tick), one far ahead
CASES = [
    {"Title": "Renew the office lease", "Due": "2020-01-15", "Status": "Open"},
    {"Title": "Send the quarterly report", "Due": "2099-03-31", "Status": "Open"},
    {"Title": "Archive 2019 invoices", "Due": "2020-02-01", "Status": "Done"},
]
COLUMNS = {"Title": "text", "Due": "date", "Status": "text"}


def demo_triggers(base_url: str) -> list[dict[str, Any]]:
    """The four schedule kinds of SPEC §4, each with a harmless action."""
    remind = {"type": "notify", "message": "Reminder: '$row.Title' is due $row.Due"}
    return [
        {
            "name": "Remind a day before the due date",
            "on": "schedule",
            "when": [{"column": "Status", "op": "neq", "value": "Done"}],
            "schedule": {"type": "date_column_reached", "column": "Due", "offset_minutes": -1440},
            "actions": [remind],
        },
        {
            "name": "Ping the echo endpoint every minute",
            "on": "schedule",
            "schedule": {"type": "interval", "every_seconds": 60},
            "actions": [{"type": "webhook", "url": f"{base_url}/demo/echo"}],
        },
        {
            "name": "Daily digest at midnight UTC",
            "on": "schedule",
            "schedule": {"type": "daily", "at": "00:00"},
            "actions": [{"type": "notify", "message": "Daily digest ($run.scheduled_for)"}],
        },
        {
            "name": "Every minute on weekdays and weekends",
            "on": "schedule",
            "schedule": {"type": "cron", "expression": "* * * * *"},
            "actions": [{"type": "notify", "message": "Cron says hi ($run.scheduled_for)"}],
        },
    ]


def demo_settings() -> Settings:
    """Environment settings, overridden for the demo (fresh SQLite file, short tick)."""
    env = Settings.from_environ()
    return replace(
        env,
        database_url=f"sqlite:///{DEMO_DB}",
        admin_token=env.admin_token or secrets.token_urlsafe(24),
        outbound_allow=(*env.outbound_allow, "127.0.0.1"),
        tick_every_s=DEMO_TICK_EVERY_S,
    )


def fresh_database() -> None:
    for suffix in ("", "-wal", "-shm"):
        Path(f"{DEMO_DB}{suffix}").unlink(missing_ok=True)


def seed(tocsin: Tocsin, base_url: str) -> dict[str, str]:
    """Create the demo table, its records and triggers, and a moderator token."""
    table = tocsin.create_table(
        scope="chatroom", scope_id=DEMO_CHATROOM, name="Cases", columns=COLUMNS
    )
    for case in CASES:
        tocsin.insert_record(table["id"], case)
    tocsin.set_triggers(table["id"], demo_triggers(base_url))
    token = tocsin.create_token(scope="chatroom", scope_id=DEMO_CHATROOM, role="moderator")
    schedules = tocsin.create_token(permissions=["schedules:write"])
    studio = tocsin.create_token(  # Studio's one-click sign-in: the tables and the schedules
        scope="chatroom", scope_id=DEMO_CHATROOM, role="moderator", permissions=["schedules:write"]
    )
    return {
        "TABLE": table["id"],
        "TOKEN": token,
        "SCHEDULES_TOKEN": schedules,
        "STUDIO": f"{base_url}/login?token={studio}",
    }


def environment(settings: Settings, base_url: str, seeded: dict[str, str]) -> dict[str, str]:
    """The shell variables the README's curl examples use."""
    return {
        "TOCSIN": base_url,
        "ADMIN": settings.admin_token or "",
        "CHAT": DEMO_CHATROOM,
        "P": f"{base_url}/private/module/custom_tables/chatroom/{DEMO_CHATROOM}",
        **seeded,
    }


def announce(env: dict[str, str]) -> None:
    lines = [f"export {key}='{value}'" for key, value in env.items()]
    ENV_FILE.write_text("\n".join(lines) + "\n", encoding="utf-8")
    for line in messages.demo_lines(env, str(ENV_FILE)):
        typer.echo(line)


def hold_demo_lock(base_url: str) -> IO[str] | None:
    """The open, exclusively locked ``tocsin-demo.lock`` (keep it open while serving), or None
    when another live demo holds it. The file says who holds it (pid and URL)."""
    handle = LOCK_FILE.open("a+", encoding="utf-8")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        handle.close()
        return None
    handle.seek(0)
    handle.truncate()
    handle.write(f"{os.getpid()} {base_url}\n")
    handle.flush()
    return handle


def lock_holder() -> str:
    """``pid N, <url>`` of the demo holding the lock, as it wrote it."""
    try:
        pid, _, url = LOCK_FILE.read_text(encoding="utf-8").strip().partition(" ")
    except OSError:
        return "unknown"
    return f"pid {pid}, {url}" if url else f"pid {pid}"


def port_in_use(host: str, port: int) -> bool:
    """True when something already listens on ``host:port`` (probed as uvicorn binds)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError as exc:
            return exc.errno == errno.EADDRINUSE
    return False


def local_url(host: str, port: int) -> str:
    """The URL this machine reaches the demo at; a wildcard bind (``--host 0.0.0.0``) is reached
    on 127.0.0.1, the one address the demo allow-lists for its webhook."""
    reachable = "127.0.0.1" if host in ("", "0.0.0.0") else host
    return f"http://{reachable}:{port}"


def demo(host: Host = "127.0.0.1", port: Port = 8000) -> None:
    """Seed a fresh demo database and serve it with a 5-second tick."""
    Settings.from_environ().check_servable()  # a short TOCSIN_ADMIN_TOKEN: one line, exit 2
    base_url = local_url(host, port)
    lock = hold_demo_lock(base_url)  # before touching the database another demo may be serving
    if lock is None:
        typer.echo(messages.demo_running(str(DEMO_DB), lock_holder(), str(ENV_FILE)), err=True)
        raise typer.Exit(1)
    with lock:
        if port_in_use(host, port):
            typer.echo(messages.demo_port_in_use(host, port), err=True)
            raise typer.Exit(1)
        _seed_and_serve(host, port, base_url)


def _seed_and_serve(host: str, port: int, base_url: str) -> None:
    settings = demo_settings()
    fresh_database()
    tocsin = Tocsin.open(settings=settings)
    try:
        env = environment(settings, base_url, seed(tocsin, base_url))
    finally:
        tocsin.close()
    announce(env)
    os.environ.update(
        TOCSIN_DATABASE_URL=settings.database_url,
        TOCSIN_ADMIN_TOKEN=env["ADMIN"],
        TOCSIN_OUTBOUND_ALLOW=",".join(settings.outbound_allow),
        TOCSIN_TICK_EVERY_S=str(settings.tick_every_s),
        TOCSIN_APP=DEMO_WORKFLOWS,
    )
    run_server(DEMO_APP, host, port)


def register(app: typer.Typer) -> None:
    app.command()(demo)
