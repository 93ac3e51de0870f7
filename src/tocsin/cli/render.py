"""Shared pieces of the commands: errors, JSON, and Rich tables that fit the terminal.

:func:`print_rows` prints a table no wider than the terminal whose cells are never split inside
a word, and whose id columns (``id``, ``*_id``, or those named) are printed whole on one line
(copyable):

- every column gets at least its longest word (an id column: its longest value), and the space
  left over goes to the columns that want least first (whole lines), the rest shared by how
  much more each wants; cells wrap at spaces;
- when even that is wider than the terminal, each row is printed as a block of ``column  value``
  lines instead (the cells folded whole under each other), a value wrapping at spaces;
- only an id longer than the terminal itself widens the output (to keep it whole).

Cells are plain text (tenants' names and messages: Rich markup in them is printed as written)
with control characters shown as ``\\xNN`` (:func:`printable`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Annotated, Any

import typer
from rich.cells import cell_len
from rich.console import Console
from rich.table import Table
from rich.text import Text

from tocsin.errors import TocsinError

from .processes import CreateOpt

JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON.")]
CELL_PADDING = 3  # a cell's left and right padding plus its border
CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


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


def is_id(name: str, ids: Sequence[str] | None) -> bool:
    """Whether the column ``name`` holds ids: named in ``ids``, else ``id`` or ``*_id``."""
    return name in ids if ids is not None else name == "id" or name.endswith("_id")


def print_rows(
    title: str,
    columns: Sequence[str],
    rows: Iterable[Mapping[str, Any]],
    *,
    ids: Sequence[str] | None = None,
) -> None:
    """A Rich table of ``rows`` that fits the terminal (see the module's docstring)."""
    cells = [[cell(row.get(name)) for name in columns] for row in rows]
    whole = [is_id(name, ids) for name in columns]
    terminal = Console().width
    widths = fitted_widths(columns, cells, whole, terminal - CELL_PADDING * len(columns) - 1)
    if widths is None:
        return _print_blocks(title, columns, cells, whole, terminal)
    grid = Table(title=title)
    for name, width, keep in zip(columns, widths, whole, strict=True):
        grid.add_column(name, width=width, no_wrap=keep, overflow="fold")
    for line in cells:
        grid.add_row(*(Text(value) for value in line))  # Text: no markup
    Console(width=terminal).print(grid)


def fitted_widths(
    columns: Sequence[str], cells: list[list[str]], whole: Sequence[bool], budget: int
) -> list[int] | None:
    """Each column's width in ``budget`` cells: at least its longest word (an id column's
    longest value); then, smallest first, whole lines for the columns the space left allows,
    the rest shared by how much more each one wants; None when even the least does not fit."""
    least, most = [], []
    for index, name in enumerate(columns):
        texts = [name, *(line[index] for line in cells)]
        longest = max(cell_len(text) for text in texts)
        words = longest if whole[index] else max(_longest_word(text) for text in texts)
        least.append(max(words, 1))
        most.append(max(longest, 1))
    if sum(most) <= budget:
        return most
    spare, wants = budget - sum(least), [m - n for m, n in zip(most, least, strict=True)]
    if spare < 0:
        return None
    widths = list(least)
    for index in sorted(range(len(widths)), key=lambda i: wants[i]):  # short cells on one line
        if 0 < wants[index] <= spare:
            widths[index], spare, wants[index] = most[index], spare - wants[index], 0
    if spare and sum(wants):  # the rest shared by how much more each one wants
        shares = [spare * want // sum(wants) for want in wants]
        widths = [w + share for w, share in zip(widths, shares, strict=True)]
    return widths


def _longest_word(text: str) -> int:
    return max((cell_len(word) for word in text.split()), default=0)


def _print_blocks(
    title: str, columns: Sequence[str], cells: list[list[str]], whole: Sequence[bool], width: int
) -> None:
    """Each row as ``column  value`` lines: a value wraps at spaces; an id stays whole (the
    console widens for one longer than the terminal)."""
    label = max(cell_len(name) for name in columns)
    longest_id = max(
        (cell_len(line[i]) for line in cells for i in range(len(columns)) if whole[i]), default=0
    )
    console = Console(width=max(width, label + 2 + longest_id))
    console.print(Text(title, style="italic"))
    for line in cells:
        block = Table.grid(padding=(0, 2))
        block.add_column(no_wrap=True, style="bold")
        block.add_column(overflow="fold")
        for name, value, keep in zip(columns, line, whole, strict=True):
            block.add_row(Text(name), Text(value, no_wrap=keep))
        console.print()
        console.print(block)


__all__ = [
    "CreateOpt",
    "JsonOpt",
    "echo_json",
    "fail",
    "print_rows",
    "printable",
]
