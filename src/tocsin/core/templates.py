"""Action templates: plain ``$token`` substitution, never evaluation (SPEC §10, §4.5).

Tokens:

- ``$row.id`` (or ``${row.id}``) — the record id, even when a column is named ``id``;
- ``$trigger.id``, ``$run.id``; ``$run.scheduled_for`` (RFC 3339, empty when the run has no
  scheduled instant);
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
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from tocsin.core.instants import to_rfc3339

_TOKEN = re.compile(r"\$\{row\.(?P<braced>[^}]+)\}|\$(?P<ns>row|trigger|run)\.(?P<rest>)")
_WORD = re.compile(r"[\w\-]+")  # a bare column name may contain hyphens
_NAME = re.compile(r"\w+")  # $trigger.* / $run.* names end at a hyphen: "$run.id-x"
_ROW_TOKEN = re.compile(r"\$\{?row(?![\w])")


@dataclass(frozen=True, slots=True, kw_only=True)
class TemplateContext:
    """What a template may see: the row snapshot (None when recordless) and the run's ids."""

    row: Mapping[str, Any] | None
    record_id: str | None = None
    trigger_id: str | None = None
    run_id: str | None = None
    scheduled_for: datetime | None = None


def render(value: Any, ctx: TemplateContext) -> Any:
    """``value`` with every token substituted; lists and dict values recursively."""
    if isinstance(value, str):
        return _render_str(value, ctx)
    if isinstance(value, list):
        return [render(item, ctx) for item in value]
    if isinstance(value, Mapping):
        return {key: render(item, ctx) for key, item in value.items()}
    return value


def has_row_tokens(value: Any) -> bool:
    """True when any string inside ``value`` (keys excluded) holds a ``$row`` token."""
    if isinstance(value, str):
        return _ROW_TOKEN.search(value) is not None
    if isinstance(value, list):
        return any(has_row_tokens(item) for item in value)
    if isinstance(value, Mapping):
        return any(has_row_tokens(item) for item in value.values())
    return False


def _render_str(text: str, ctx: TemplateContext) -> Any:
    pieces: list[Any] = []
    pos = 0
    while (match := _TOKEN.search(text, pos)) is not None:
        pieces.append(text[pos : match.start()])
        value, end = _resolve(text, match, ctx)
        pieces.append(value)
        pos = end
    if pos == 0:
        return text
    pieces.append(text[pos:])
    whole = [p for p in pieces if p != ""]
    if len(whole) == 1 and not isinstance(whole[0], str):
        return whole[0]
    return "".join(_as_text(p) for p in pieces)


def _resolve(text: str, match: re.Match[str], ctx: TemplateContext) -> tuple[Any, int]:
    """The value of the token at ``match`` and the index just after it."""
    braced = match.group("braced")
    if braced is not None:
        return (_record_id(ctx) if braced == "id" else _cell(ctx, braced)), match.end()
    ns, start = match.group("ns"), match.end()
    if ns == "row":
        name = _row_name(text, start, ctx)
        return (_record_id(ctx) if name == "id" else _cell(ctx, name)), start + len(name)
    word = _NAME.match(text, start)
    name = word.group(0) if word else ""
    if ns == "trigger" and name == "id":
        return ctx.trigger_id or "", start + 2
    if ns == "run" and name == "id":
        return ctx.run_id or "", start + 2
    if ns == "run" and name == "scheduled_for":
        return _stamp(ctx.scheduled_for), start + len(name)
    return match.group(0), start  # not a token we know: left as written


def _row_name(text: str, start: int, ctx: TemplateContext) -> str:
    """The longest row column name at ``start``; else ``id`` or the word there."""
    fitting = [n for n in (ctx.row or {}) if isinstance(n, str) and n and text.startswith(n, start)]
    best = max(fitting, key=len, default="")
    word = _WORD.match(text, start)
    word_name = word.group(0) if word else ""
    if word_name == "id" and best in ("", "id"):
        return "id"
    return best or word_name


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


__all__ = ["TemplateContext", "has_row_tokens", "render"]
