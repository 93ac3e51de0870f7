"""``tocsin demo`` (``make run``) refuses a busy port, or a directory another demo serves from,
before it touches anything."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from support.net import free_port
from support.processes import TOCSIN
from support.waiting import wait_for
from tocsin.cli import app
from tocsin.cli import demo as demo_module
from tocsin.cli.demo import demo_triggers, local_url

# ``tocsin demo`` exports these for its uvicorn factory (os.environ.update): run in-process, the
# demo would leak them into every later test's subprocesses
DEMO_EXPORTS = (
    "TOCSIN_DATABASE_URL",
    "TOCSIN_ADMIN_TOKEN",
    "TOCSIN_OUTBOUND_ALLOW",
    "TOCSIN_TICK_EVERY_S",
    "TOCSIN_APP",
)


@pytest.fixture(autouse=True)
def _restore_demo_exports(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in DEMO_EXPORTS:  # monkeypatch puts back what was there (or nothing) after the test
        monkeypatch.delenv(name, raising=False)


runner = CliRunner()


def test_a_busy_port_is_one_error_line_before_the_database_is_recreated(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Otherwise the demo would delete the database of the server on that port (another demo),
    print tokens that server does not know, and only then fail to bind."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "tocsin-demo.db").write_bytes(b"another demo's database")
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        result = runner.invoke(app, ["demo", "--port", str(port)])
    assert result.exit_code == 1
    assert f"127.0.0.1:{port} is already in use" in result.output
    assert f"make run PORT={port + 1}" in result.output
    assert (tmp_path / "tocsin-demo.db").read_bytes() == b"another demo's database"
    assert not (tmp_path / "tocsin-demo.env").exists()


def test_a_wildcard_bind_is_reached_on_loopback() -> None:
    """The demo's webhook and the printed URLs must point somewhere the allow-list admits."""
    assert local_url("0.0.0.0", 8001) == "http://127.0.0.1:8001"
    assert local_url("127.0.0.1", 8000) == "http://127.0.0.1:8000"
    (_, webhook, _, _) = demo_triggers(local_url("0.0.0.0", 8001))
    assert webhook["actions"][0]["url"] == "http://127.0.0.1:8001/demo/echo"


def test_a_second_demo_refuses_while_the_first_one_serves(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``make run PORT=8001`` next to a running demo (as the port error advised) used
    to delete the first demo's ``tocsin-demo.db*`` and overwrite its ``tocsin-demo.env``."""
    first_port = free_port()
    env = {**os.environ, "TOCSIN_ADMIN_TOKEN": "demo-admin-token-0123456789abcdef"}
    env.pop("TOCSIN_DATABASE_URL", None)
    log = (tmp_path / "demo.log").open("wb")
    first = subprocess.Popen(
        [TOCSIN, "demo", "--port", str(first_port)],
        env=env,
        cwd=tmp_path,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        base = f"http://127.0.0.1:{first_port}"
        wait_for("the first demo", lambda: httpx.get(f"{base}/healthz").status_code == 200)
        env_file = (tmp_path / "tocsin-demo.env").read_text()
        token = re.search(r"export TOKEN='([^']+)'", env_file).group(1)  # type: ignore[union-attr]
        table = re.search(r"export TABLE='([^']+)'", env_file).group(1)  # type: ignore[union-attr]
        prefix = re.search(r"export P='([^']+)'", env_file).group(1)  # type: ignore[union-attr]
        database = (tmp_path / "tocsin-demo.db").stat().st_ino

        monkeypatch.chdir(tmp_path)
        served: list[int] = []
        monkeypatch.setattr(demo_module, "run_server", lambda app, host, port: served.append(port))
        second = runner.invoke(app, ["demo", "--port", str(free_port())])
        assert second.exit_code == 1, second.output
        assert "another tocsin demo is serving ./tocsin-demo.db" in second.output
        assert f"pid {first.pid}, {base}" in second.output
        assert served == []
        assert (tmp_path / "tocsin-demo.env").read_text() == env_file
        assert (tmp_path / "tocsin-demo.db").stat().st_ino == database
        runs = httpx.get(
            f"{prefix}/tables/{table}/trigger-runs", headers={"Authorization": f"Bearer {token}"}
        )
        assert runs.status_code == 200, runs.text  # the first demo still knows its token
    finally:
        first.send_signal(signal.SIGINT)
        assert first.wait(timeout=30) == 0
        log.close()
        print((tmp_path / "demo.log").read_text()[-3000:])
    # the first demo has stopped: its lock went with it, a new demo may start
    again = runner.invoke(app, ["demo", "--port", str(free_port())])
    assert again.exit_code == 0, again.output
    assert served != []
    assert (tmp_path / "tocsin-demo.env").read_text() != env_file
