"""``tocsin demo`` (``make run``) refuses a busy port before it touches anything."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tocsin.cli import app
from tocsin.cli.demo import demo_triggers, local_url

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
