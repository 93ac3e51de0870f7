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
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Annotated, Any

import typer
from rich.cells import cell_len
from rich.console import Console
from rich.table import Table
from rich.text import Text

from tocsin import messages
from tocsin.errors import TocsinError
from tocsin.service import Tocsin

from .processes import CreateOpt, open_tocsin

JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON.")]
Skip = Annotated[int, typer.Option(min=0)]
Limit = Annotated[int, typer.Option(min=1, max=500)]
SKIP_COLUMNS = ("reason", "first_instant", "last_instant", "count")
NEXT_COLUMNS = ("at", "local", "zone", "status")
CELL_PADDING = 3  # a cell's left and right padding plus its border
CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def fail(exc: TocsinError, code: int = 1) -> typer.Exit:
    """One line on stderr: ``error (<status>): <detail>``; exit ``code``."""
    typer.echo(messages.cli_error(exc.status, exc.detail), err=True)
    return typer.Exit(code)


@contextmanager
def facade(app: str | None = None, create: bool = False) -> Iterator[Tocsin]:
    """The facade of a command (``open_tocsin``), closed after it; a ``TocsinError`` raised in
    the block prints its one error line and exits 1."""
    tocsin = open_tocsin(app, create=create)
    try:
        yield tocsin
    except TocsinError as exc:
        raise fail(exc) from None
    finally:
        tocsin.close()


def echo_json(value: Any) -> None:
    typer.echo(json.dumps(value, indent=2, default=str))


def output(data: Any, as_json: bool, render: Callable[[], None]) -> None:
    """``data`` as one line of JSON with ``--json``, else what ``render`` prints."""
    if as_json:
        typer.echo(json.dumps(data, default=str))
    else:
        render()


def _ledger_instant(iso: str) -> str:
    """An instant of the skip ledger (ISO, UTC) written as the fires' instants are."""
    at = datetime.fromisoformat(iso)
    return str(at if at.tzinfo else at.replace(tzinfo=UTC))


def history_row(item: Mapping[str, Any]) -> dict[str, Any]:
    """A fire of a fire history as it is; a skip range as one row: its instants, ``skipped`` and
    the reason."""
    if item["kind"] == "fire":
        return dict(item)
    first, last = (_ledger_instant(item[k]) for k in ("first_instant", "last_instant"))
    count = item["count"]
    many = f"{'≥' if item['count_is_lower_bound'] else ''}{count:,}"
    return {
        "scheduled_for": first if count == 1 else f"{first} … {last}",
        "fired_at": "skipped" if count == 1 else f"skipped ({many})",
        "run_status": item["reason"],
    }


def print_history(
    page: Mapping[str, Any],
    as_json: bool,
    title: str,
    columns: Sequence[str],
    row: Callable[[Mapping[str, Any]], Mapping[str, Any]] = history_row,
    *,
    data: Any = None,
) -> None:
    """A fire history (a schedule's, a trigger's, a lane's): its fires and skip ranges newest
    first, one row each (``row``); ``--json`` prints ``data`` (default: the page)."""
    rows = [row(item) for item in page["items"]]
    output(page if data is None else data, as_json, lambda: print_rows(title, columns, rows))


def print_skips(page: Mapping[str, Any], as_json: bool, owner_id: str) -> None:
    """A page of skip ranges (a trigger's or a schedule's), newest first."""
    rows = [
        {**s, "count": f"≥{s['count']}" if s["count_is_lower_bound"] else s["count"]}
        for s in page["items"]
    ]
    title = messages.skips_title(page["total"], owner_id)
    output(page, as_json, lambda: print_rows(title, SKIP_COLUMNS, rows))


def print_next(out: Mapping[str, Any], as_json: bool, title: str) -> None:
    """The next instants a trigger, a schedule or a lane fires at, in UTC and its zone."""
    output(out, as_json, lambda: print_rows(title, NEXT_COLUMNS, out["items"]))


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
    "Limit",
    "Skip",
    "echo_json",
    "facade",
    "fail",
    "history_row",
    "output",
    "print_history",
    "print_next",
    "print_rows",
    "print_skips",
    "printable",
]
