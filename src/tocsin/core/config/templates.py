"""Action templates: plain ``$token`` substitution, never evaluation (SPEC §10, §4.5).

Tokens:

- ``$row.id`` (or ``${row.id}``) — the record id, even when a column is named ``id``;
- ``$trigger.id``, ``$run.id``; ``$schedule.id`` and ``$workflow.id`` (in a workflow's or
  lane's ``on_failure`` actions; elsewhere left as written); ``$run.scheduled_for`` (RFC 3339,
  empty when the run has no scheduled instant); ``$run.error`` (the error that failed the run,
  in ``on_failure`` actions; empty elsewhere);
- ``${row.<column>}`` — any column name, spaces and punctuation included (up to the ``}``);
- ``$row.<column>`` — the *longest* column name of the row snapshot that follows ``$row.``, so
  ``$row.Due Date`` works when the row has a ``Due Date`` column and ``$row.案件名稱`` works
  next to CJK text. When no column name fits, the token is the run of word characters and
  hyphens after ``$row.`` and renders as ``""``.

Recordless runs (interval/daily/cron, ``row is None``) render every ``$row.*`` token as ``""``.
A string that is exactly one ``$row.<column>`` token renders to the cell's own JSON value
(a number stays a number); embedded tokens are converted to text (``true``/``false`` for
booleans, ``""`` for null, compact JSON for lists/objects). Rendering walks lists and dict
values recursively; dict keys and non-string scalars are returned unchanged.

Rendering is linear in the template's length: one regex pass finds the tokens, and a bare
``$row.<name>`` looks its column up in a prefix trie of the row's column names (built once per
``render`` call, only when such a token occurs), never by trying every column.

``TemplateContext.max_bytes`` caps the rendered value (the UTF-8 size of every string in the
result, cells substituted whole counted as their JSON text): the size is counted piece by piece
while rendering, so ``RenderTooLarge`` is raised before an oversized string is ever built.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from tocsin import messages
from tocsin.core.time.instants import to_rfc3339

# Where a token may start: "${row." (a token once a "}" closes a non-empty name), "$row.",
# "$trigger." or "$run.".
_START = re.compile(r"\$(?:(?P<brace>\{row\.)|(?P<ns>row|trigger|run|schedule|workflow)\.)")
_WORD = re.compile(r"[\w\-]+")  # a bare column name may contain hyphens
_NAME = re.compile(r"\w+")  # $trigger.* / $run.* names end at a hyphen: "$run.id-x"
_ROW_TOKEN = re.compile(r"\$\{?row(?![\w])")
_END = ""  # the trie key of "a column name ends here" (no character is "")

Trie = dict[str, Any]


class RenderTooLarge(ValueError):
    """The rendered value outgrew ``TemplateContext.max_bytes`` (nothing was built past it)."""

    def __init__(self, limit: int) -> None:
        self.detail = messages.rendered_too_large(limit)
        super().__init__(self.detail)


@dataclass(frozen=True, slots=True, kw_only=True)
class TemplateContext:
    """What a template may see: the row snapshot (None when recordless) and the run's ids;
    ``max_bytes`` caps the size of one rendered value (None: no cap)."""

    row: Mapping[str, Any] | None
    record_id: str | None = None
    trigger_id: str | None = None
    run_id: str | None = None
    scheduled_for: datetime | None = None
    max_bytes: int | None = None
    error: str | None = None
    """The run's error, for ``on_failure`` actions (``$run.error``); None renders ``""``."""
    names: Mapping[str, str | None] | None = None
    """``$schedule.id`` / ``$workflow.id`` (keys ``schedule.id``, ``workflow.id``) of a workflow
    or lane run's alerts; None (a table run's actions) leaves those tokens as written."""


def render(value: Any, ctx: TemplateContext) -> Any:
    """``value`` with every token substituted; lists and dict values recursively.

    Raises ``RenderTooLarge`` as soon as the result would exceed ``ctx.max_bytes``.
    """
    return _Render(ctx).value(value)


def has_row_tokens(value: Any) -> bool:
    """True when any string inside ``value`` (keys excluded) holds a ``$row`` token."""
    if isinstance(value, str):
        return _ROW_TOKEN.search(value) is not None
    if isinstance(value, list):
        return any(has_row_tokens(item) for item in value)
    if isinstance(value, Mapping):
        return any(has_row_tokens(item) for item in value.values())
    return False


def column_trie(names: Iterable[object]) -> Trie:
    """A prefix trie of the non-empty strings of ``names`` (others are skipped): nested
    ``{char: node}`` dicts, the key ``""`` holding the name that ends at a node."""
    root: Trie = {}
    for name in names:
        if isinstance(name, str) and name:
            node = root
            for char in name:
                node = node.setdefault(char, {})
            node[_END] = name
    return root


def longest_name(trie: Trie, text: str, start: int) -> str:
    """The longest name of ``trie`` that ``text`` holds at ``start`` ("" when none does); the
    walk stops at the first character no name continues with."""
    node, best = trie, ""
    for index in range(start, len(text)):
        child = node.get(text[index])
        if child is None:
            break
        node = child
        best = node.get(_END, best)
    return best


class _Render:
    """One ``render`` call: the bytes spent so far and the row's column trie (built lazily)."""

    __slots__ = ("ctx", "spent", "trie")

    def __init__(self, ctx: TemplateContext) -> None:
        self.ctx = ctx
        self.spent = 0
        self.trie: Trie | None = None

    def value(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, list):
            return [self.value(item) for item in value]
        if isinstance(value, Mapping):
            return {key: self.value(item) for key, item in value.items()}
        return value

    def text(self, text: str) -> Any:
        """One string rendered; a string that is one cell token alone gives the cell's value."""
        texts: list[str] = []
        filled: list[Any] = []  # the pieces that are not "", as they are (not as text)
        pos = 0
        for start, end, value in self._tokens(text):
            for piece in (text[pos:start], value):
                texts.append(self._spend(piece if isinstance(piece, str) else _as_text(piece)))
                if piece != "":
                    filled.append(piece)
            pos = end
        if not texts:
            return self._spend(text)
        tail = self._spend(text[pos:])
        if len(filled) == 1 and not isinstance(filled[0], str) and tail == "":
            return filled[0]
        texts.append(tail)
        return "".join(texts)

    def _spend(self, text: str) -> str:
        """``text``, after counting its UTF-8 size against the cap."""
        limit = self.ctx.max_bytes
        if limit is not None:
            self.spent += utf8_size(text)
            if self.spent > limit:
                raise RenderTooLarge(limit)
        return text

    def _tokens(self, text: str) -> Iterator[tuple[int, int, Any]]:
        """``(start, end, value)`` of each token of ``text``, left to right, in one pass: the
        ``}`` closing a ``${row.`` is looked for at most once past any index."""
        scan, close = 0, -2  # close: the first "}" at or after the last looked-at index
        while (match := _START.search(text, scan)) is not None:
            inner = match.end()
            if match.group("brace") is None:
                value, end = self._named(text, match.group("ns"), inner)
            else:
                if close != -1 and close < inner:
                    close = text.find("}", inner)
                if close <= inner:  # never closed, or "${row.}": not a token
                    scan = match.start() + 1
                    continue
                value, end = self._row_value(text[inner:close]), close + 1
            yield match.start(), end, value
            scan = end

    def _named(self, text: str, ns: str, start: int) -> tuple[Any, int]:
        """The value of a bare ``$<ns>.`` token and the index just after it."""
        ctx = self.ctx
        if ns == "row":
            name = self._row_name(text, start)
            return self._row_value(name), start + len(name)
        word = _NAME.match(text, start)
        name = word.group(0) if word else ""
        if ns == "trigger" and name == "id":
            return ctx.trigger_id or "", start + 2
        if ns == "run" and name == "id":
            return ctx.run_id or "", start + 2
        if ns == "run" and name == "scheduled_for":
            return _stamp(ctx.scheduled_for), start + len(name)
        if ns == "run" and name == "error":
            return ctx.error or "", start + len(name)
        if ns in ("schedule", "workflow"):
            if ctx.names is not None and name == "id":
                return ctx.names.get(f"{ns}.id") or "", start + 2
            return f"${ns}.", start
        return f"${ns}.", start  # not a token we know: left as written

    def _row_name(self, text: str, start: int) -> str:
        """The longest row column name at ``start``; else ``id`` or the word there."""
        best = ""
        if self.ctx.row:
            if self.trie is None:
                self.trie = column_trie(self.ctx.row)
            best = longest_name(self.trie, text, start)
        word = _WORD.match(text, start)
        word_name = word.group(0) if word else ""
        if word_name == "id" and best in ("", "id"):
            return "id"
        return best or word_name

    def _row_value(self, name: str) -> Any:
        return _record_id(self.ctx) if name == "id" else _cell(self.ctx, name)


def utf8_size(text: str) -> int:
    """The UTF-8 size of ``text`` (ASCII: no copy made)."""
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


def _stamp(value: object) -> str:
    """RFC 3339 for an aware datetime; anything else as text (rendering never raises)."""
    if isinstance(value, datetime) and value.tzinfo is not None:
        return to_rfc3339(value)
    if isinstance(value, datetime):
        return value.isoformat()
    return "" if value is None else str(value)


def _record_id(ctx: TemplateContext) -> str:
    if ctx.row is None:
        return ""
    return ctx.record_id or ""


def _cell(ctx: TemplateContext, name: str) -> Any:
    if ctx.row is None:
        return ""
    value = ctx.row.get(name)
    return "" if value is None else value


def _as_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return ""
    if isinstance(value, int | float):
        return str(value)
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


__all__ = [
    "RenderTooLarge",
    "TemplateContext",
    "Trie",
    "column_trie",
    "has_row_tokens",
    "longest_name",
    "render",
    "utf8_size",
]
