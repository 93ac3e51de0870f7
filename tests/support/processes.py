"""``tocsin`` as a real process: its executable, its environment, ``tocsin serve`` on a free port,
stopping it, and a token on its database."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from support.net import LOCALHOST, free_port
from support.waiting import wait_for
from tocsin.service import Tocsin
from tocsin.settings import Settings

TOCSIN = str(Path(sys.executable).parent / "tocsin")
TESTS = Path(__file__).resolve().parents[1]  # on a served process's path for ``--app`` modules
E2E_ADMIN = "e2e-admin-token-of-32-characters"
LOG_TAIL = 20_000  # characters of a served process's log printed after its test


def tocsin_env(
    store_url: str | None = None, *, tests_importable: bool = False, **settings: str
) -> dict[str, str]:
    """This process's environment for a ``tocsin`` child: ``TOCSIN_DATABASE_URL`` is
    ``store_url`` (when given) and each keyword a setting (``tick_every_s="0.5"`` sets
    ``TOCSIN_TICK_EVERY_S``); ``tests_importable`` puts ``tests/`` first on its ``PYTHONPATH``
    (for ``--app workflows.e2e_app:WORKFLOWS``)."""
    env = dict(os.environ)
    if store_url is not None:
        env["TOCSIN_DATABASE_URL"] = store_url
    env.update({f"TOCSIN_{name.upper()}": value for name, value in settings.items()})
    if tests_importable:
        env["PYTHONPATH"] = os.pathsep.join([str(TESTS), *sys.path])
    return env


def e2e_env(store_url: str) -> dict[str, str]:
    """The usual served process's environment: the test's database, a half-second tick, an admin
    token, and outbound HTTP allowed to 127.0.0.1 (the tests' receivers)."""
    return tocsin_env(
        store_url, tick_every_s="0.5", admin_token=E2E_ADMIN, outbound_allow=LOCALHOST
    )


def stop(proc: subprocess.Popen[bytes], signum: signal.Signals = signal.SIGTERM) -> int:
    """Send ``signum``; the exit code. Killed (and reaped) if it has not exited in 30 s."""
    proc.send_signal(signum)
    try:
        return proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=30)  # reaped: no zombie, no ResourceWarning


@contextmanager
def serving(
    env: dict[str, str],
    log_dir: Path,
    *,
    app: str | None = None,
    cwd: Path | None = None,
    then: signal.Signals = signal.SIGTERM,
) -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    """``tocsin serve`` on a free port (``--app app`` when given), logging to
    ``log_dir/serve.log``; yields the process and its base URL once ``/healthz`` answers 200.
    Afterwards a process still running gets ``then`` (SIGTERM: a clean stop; SIGKILL: none), and
    the log's tail is printed (pytest shows it when the test fails)."""
    port = free_port()
    args = [TOCSIN, "serve", "--port", str(port)]
    if app is not None:
        args += ["--app", app]
    log_path = log_dir / "serve.log"
    log = log_path.open("wb")
    proc = subprocess.Popen(args, env=env, cwd=cwd, stdout=log, stderr=subprocess.STDOUT)
    base = f"http://{LOCALHOST}:{port}"
    try:
        wait_for("the server", lambda: httpx.get(f"{base}/healthz").status_code == 200, every=0.1)
        yield proc, base
    finally:
        try:
            if proc.poll() is None:
                stop(proc, then)
        finally:
            log.close()
            print(log_path.read_text(errors="replace")[-LOG_TAIL:])


def create_token(env: dict[str, str], chatroom: str) -> str:
    """A moderator token of chatroom ``chatroom`` on ``env``'s database, made through the facade
    (what ``tocsin tokens create --scope chatroom:<id> --role moderator`` does, tested in
    tests/cli, without starting a process for it)."""
    tocsin = Tocsin.open(settings=Settings.from_environ(env))
    try:
        return tocsin.create_token(scope="chatroom", scope_id=chatroom, role="moderator")
    finally:
        tocsin.close()
