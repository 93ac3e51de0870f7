"""``tocsin`` as a real process: its executable, its environment, ``tocsin serve`` on a free port,
stopping it, and a token on its database.

``serving`` starts ``tocsin serve`` as a process forked from the tests' fork server
(``support.forkserver``): the ``tocsin`` console script's own ``main`` with the given argv,
environment, working directory and output, in an OS process of its own that is signalled,
killed and reaped like the executable (``ServedProcess``), without paying ~2 s of interpreter
start and imports per test. What the executable itself does (``--help``, exit codes, the entry
point) is tested by running it (tests/cli, tests/e2e/test_e2e_readme.py)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from multiprocessing.process import BaseProcess
from pathlib import Path

import httpx

from support.forkserver import FORKSERVER
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


def _serve_main(argv: list[str], env: dict[str, str], cwd: str | None, log_path: str) -> None:
    """In the forked process: what ``subprocess.Popen([TOCSIN, *argv], env=env, cwd=cwd,
    stdout=log, stderr=STDOUT)`` would set up, then the console script's ``main``."""
    os.environ.clear()
    os.environ.update(env)
    path = [entry for entry in env.get("PYTHONPATH", "").split(os.pathsep) if entry]
    sys.path[:0] = [entry for entry in path if entry not in sys.path]
    if cwd is not None:
        os.chdir(cwd)
    log = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(log, 1)
    os.dup2(log, 2)
    os.close(log)
    sys.argv = [TOCSIN, *argv]
    from tocsin.cli import main

    main()


class ServedProcess:
    """A forked ``tocsin serve`` with what the tests use of a ``subprocess.Popen``."""

    def __init__(self, process: BaseProcess) -> None:
        self._process = process

    @property
    def pid(self) -> int:
        assert self._process.pid is not None
        return self._process.pid

    @property
    def returncode(self) -> int | None:
        return self._process.exitcode

    def poll(self) -> int | None:
        return self._process.exitcode

    def wait(self, timeout: float | None = None) -> int:
        self._process.join(timeout)
        code = self._process.exitcode
        if code is None:
            raise subprocess.TimeoutExpired(TOCSIN, timeout or 0.0)
        return code

    def send_signal(self, signum: int) -> None:
        if self._process.exitcode is None:
            os.kill(self.pid, signum)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


def stop(proc: ServedProcess, signum: signal.Signals = signal.SIGTERM) -> int:
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
) -> Iterator[tuple[ServedProcess, str]]:
    """``tocsin serve`` on a free port (``--app app`` when given), logging to
    ``log_dir/serve.log``; yields the process and its base URL once ``/healthz`` answers 200.
    Afterwards a process still running gets ``then`` (SIGTERM: a clean stop; SIGKILL: none), and
    the log's tail is printed (pytest shows it when the test fails)."""
    port = free_port()
    args = [TOCSIN, "serve", "--port", str(port)]
    if app is not None:
        args += ["--app", app]
    log_path = log_dir / "serve.log"
    directory = None if cwd is None else str(cwd)
    process = FORKSERVER.Process(target=_serve_main, args=(args[1:], env, directory, str(log_path)))
    process.start()
    proc = ServedProcess(process)
    base = f"http://{LOCALHOST}:{port}"
    try:
        wait_for("the server", lambda: httpx.get(f"{base}/healthz").status_code == 200, every=0.05)
        yield proc, base
    finally:
        try:
            if proc.poll() is None:
                stop(proc, then)
        finally:
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
