"""Every command's ``--help`` reads as plain text: no reStructuredText markup (``--app``) leaks
from the docstrings it is made of."""

from __future__ import annotations

import pytest
import typer
from typer.testing import CliRunner

from tocsin.cli import app

runner = CliRunner()


def command_paths() -> list[tuple[str, ...]]:
    root = typer.main.get_command(app)
    out: list[tuple[str, ...]] = []

    def walk(command: object, path: tuple[str, ...]) -> None:
        out.append(path)
        for name, sub in getattr(command, "commands", {}).items():
            walk(sub, (*path, name))

    walk(root, ())
    return out


@pytest.mark.parametrize("path", command_paths(), ids=lambda p: " ".join(p) or "tocsin")
def test_help_has_no_rst_literals(path: tuple[str, ...]) -> None:
    result = runner.invoke(app, [*path, "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "``" not in result.output, result.output
