"""The template renderer as it was before the linear rewrite: the oracle.

``reference_render`` is the old per-column implementation, kept verbatim so a Hypothesis property
can check that ``tocsin.core.config.templates.render`` substitutes exactly as it did (it is
quadratic in tokens x columns: only small inputs here).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from tocsin.core.config.templates import TemplateContext
from tocsin.core.time.instants import to_rfc3339

_TOKEN = re.compile(r"\$\{row\.(?P<braced>[^}]+)\}|\$(?P<ns>row|trigger|run)\.(?P<rest>)")
_WORD = re.compile(r"[\w\-]+")  # a bare column name may contain hyphens
_NAME = re.compile(r"\w+")  # $trigger.* / $run.* names end at a hyphen: "$run.id-x"


def reference_render(value: Any, ctx: TemplateContext) -> Any:
    """``value`` with every token substituted; lists and dict values recursively."""
    if isinstance(value, str):
        return _render_str(value, ctx)
    if isinstance(value, list):
        return [reference_render(item, ctx) for item in value]
    if isinstance(value, Mapping):
        return {key: reference_render(item, ctx) for key, item in value.items()}
    return value


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
    if ns == "run" and name == "error":
        return ctx.error or "", start + len(name)
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
