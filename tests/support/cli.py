"""The CLI in-process: Typer's runner on ``tocsin.cli.app``."""

from __future__ import annotations

from click.testing import Result
from typer.testing import CliRunner

from tocsin.cli import app

runner = CliRunner()


def invoke(*args: str, stdin: str | None = None) -> Result:
    """``tocsin <args>`` in this process (``stdin`` its input); an exception propagates."""
    return runner.invoke(app, list(args), input=stdin, catch_exceptions=False)
