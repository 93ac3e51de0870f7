"""The ``tocsin`` command (SPEC §16, DESIGN §4b): a Typer app; every command reads Settings.

- ``tocsin serve``: API + embedded ticker + in-process worker (``--app`` for workflows)
- ``tocsin scheduler`` / ``tocsin worker`` / ``tocsin tick``: the parts, separately
- ``tocsin schedules …`` / ``tocsin workflows …``: workflow schedules and runs (SPEC §12)
- ``tocsin lanes list|contracts|verify``: lanes and their run contracts (SPEC §14)
- ``tocsin runs list|retry``, ``tocsin preview``: operate on one table
- ``tocsin tables list|show|create``, ``tocsin triggers list|show|set|pause|resume``,
  ``tocsin messages``: the data plane (refuse to create a database by accident: ``--create``)
- ``tocsin export|plan|apply``: trigger documents as code (SPEC §11)
- ``tocsin tokens create``: a bearer token for one scope and role
- ``tocsin secrets rotate``: a scope's webhook signing secret
- ``tocsin demo``: seed a demo database and serve it (``make run``)
- ``tocsin --version``: the installed package's version

Every command but ``serve`` and ``demo`` opens an existing database only: with
``TOCSIN_DATABASE_URL`` unset and no ``./tocsin.db`` it says so (``--create`` to create one).
"""

from __future__ import annotations

from importlib.metadata import version
from typing import Annotated

import typer

from tocsin.errors import SettingsError

from . import data, demo, iac, lanes, processes, secrets, tables, tokens, whynot, workflows

app = typer.Typer(
    name="tocsin",
    help="A durable trigger & schedule engine: every occurrence fires at most once.",
    no_args_is_help=True,
    add_completion=False,
)


def _print_version(wanted: bool) -> None:
    if wanted:
        typer.echo(f"tocsin {version('tocsin')}")
        raise typer.Exit()


@app.callback()
def _root(
    _version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_print_version, is_eager=True, help="Print the version and exit."
        ),
    ] = False,
) -> None:
    """A durable trigger & schedule engine: every occurrence fires at most once."""


processes.register(app)
tables.register(app)
iac.register(app)
app.add_typer(tables.runs_app, name="runs")
data.register(app)
app.add_typer(tokens.app, name="tokens")
app.add_typer(secrets.app, name="secrets")
app.add_typer(workflows.schedules_app, name="schedules")
app.add_typer(workflows.workflows_app, name="workflows")
app.add_typer(lanes.lanes_app, name="lanes")
demo.register(app)
whynot.register(app)


def main() -> None:
    """Entry point of the ``tocsin`` console script."""
    try:
        app()
    except SettingsError as exc:  # a malformed TOCSIN_* variable: one line, not a traceback
        typer.echo(f"error: {exc}", err=True)
        raise SystemExit(2) from None


__all__ = ["app", "main"]
