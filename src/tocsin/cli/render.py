"""Shared pieces of the data commands: opening an existing database, errors, Rich tables.

- :func:`open_existing`: the facade, but only on a database that exists. With
  ``TOCSIN_DATABASE_URL`` unset and no ``./tocsin.db`` a command would silently create an empty
  database and then answer "table not found"; it says so instead (``--create`` allows it).
- :func:`print_rows`: a Rich table whose id columns are never truncated. Id columns are
  ``no_wrap`` with ``overflow="fold"``, and the console is made at least as wide as the ids
  need, so at any terminal width every id is printed whole on one line (copyable); the other
  columns fold instead. Cells are plain text (tenants' names and messages: Rich markup in them
  is printed as written) with control characters shown as ``\\xNN`` (:func:`printable`).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from tocsin import messages
from tocsin.errors import TocsinError
from tocsin.service import Tocsin

from .processes import open_tocsin

DEFAULT_DATABASE = "tocsin.db"
CreateOpt = Annotated[
    bool,
    typer.Option(
        "--create",
        help="Allow creating ./tocsin.db when TOCSIN_DATABASE_URL is unset and it does not exist.",
    ),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON.")]
MIN_OTHER_COLUMN = 6  # the narrowest a non-id column may get before the console widens
CELL_PADDING = 3  # a cell's left and right padding plus its border
CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def open_existing(create: bool = False) -> Tocsin:
    """The facade on ``TOCSIN_DATABASE_URL``; exit 1 with a clear message when that variable is
    unset and ``./tocsin.db`` does not exist, unless ``create``."""
    unset = "TOCSIN_DATABASE_URL" not in os.environ
    if unset and not create and not Path(DEFAULT_DATABASE).exists():
        typer.echo(f"error: {messages.no_database(DEFAULT_DATABASE)}", err=True)
        raise typer.Exit(1)
    return open_tocsin()


def fail(exc: TocsinError) -> typer.Exit:
    """One line on stderr: ``error (<status>): <detail>``; exit 1."""
    typer.echo(f"error ({exc.status}): {exc.detail}", err=True)
    return typer.Exit(1)


def echo_json(value: Any) -> None:
    typer.echo(json.dumps(value, indent=2, default=str))


def printable(text: str) -> str:
    """``text`` with each control character shown as ``\\xNN``: a raw ESC in a tenant's name or
    message would reach the operator's terminal as an escape sequence (title, colours, OSC 52)."""
    return CONTROL.sub(lambda found: f"\\x{ord(found.group()):02x}", text)


def cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, dict | list):
        return printable(json.dumps(value, default=str))
    return printable(str(value))


def print_rows(
    title: str,
    columns: Sequence[str],
    rows: Iterable[Mapping[str, Any]],
    *,
    ids: Sequence[str] = ("id",),
) -> None:
    """A Rich table of ``rows``; the ``ids`` columns are printed whole at any width."""
    grid = Table(title=title)
    cells = [[cell(row.get(name)) for name in columns] for row in rows]
    for name in columns:
        if name in ids:
            grid.add_column(name, no_wrap=True, overflow="fold")
        else:
            grid.add_column(name, overflow="fold")
    for line in cells:
        grid.add_row(*(Text(value) for value in line))  # Text: no markup
    Console(width=_width_for(columns, cells, ids)).print(grid)


def _width_for(columns: Sequence[str], cells: list[list[str]], ids: Sequence[str]) -> int:
    """The terminal's width, or more when the id columns would not fit whole in it."""
    terminal = Console().width
    needed = 1
    for index, name in enumerate(columns):
        widest = max([len(name), *(len(line[index]) for line in cells)])
        needed += (widest if name in ids else min(widest, MIN_OTHER_COLUMN)) + CELL_PADDING
    return max(terminal, needed)


__all__ = [
    "CreateOpt",
    "JsonOpt",
    "echo_json",
    "fail",
    "open_existing",
    "print_rows",
    "printable",
]
