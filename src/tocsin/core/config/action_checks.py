"""Checks on action configs that need the table: done at save, not at run time. Pure.

- ``webhook`` / ``api_call`` URLs must be ``http://`` or ``https://`` with a host. A URL that is
  one template token (``$row.Url``) is checked when it is rendered; a URL with a literal start
  must begin with the scheme and a host (or a token standing for the host).
- ``webhook`` / ``api_call`` headers may not name one tocsin sets itself (:func:`reserved_header`:
  ``Host``, ``Content-Length``, ``Transfer-Encoding``, ``Connection``, ``Idempotency-Key``,
  ``User-Agent``, ``X-Tocsin-*``, in any case). Header names are never templated, so the check at
  save is final; the actions check again before sending, for configs stored before the rule.
- Every ``$row.<column>`` / ``${row.<column>}`` token in any action field must name a column of
  the table (``$row.id`` always does), read the way the renderer reads it
  (``tocsin.core.config.templates``: a bare token takes the longest column name that follows).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any
from urllib.parse import urlsplit

from tocsin import messages
from tocsin.core.config.templates import column_trie, longest_name

URL_ACTIONS = ("webhook", "api_call")
RESERVED_HEADERS = frozenset(
    ("host", "content-length", "transfer-encoding", "connection", "idempotency-key", "user-agent")
)
RESERVED_HEADER_PREFIX = "x-tocsin-"
_ROW = re.compile(r"\$(?:(?P<brace>\{row\.)|row\.)")
_WORD = re.compile(r"[\w\-]*")
_TOKEN = re.compile(r"\$\{?(?:row|trigger|run)\.")


def url_problem(url: str) -> str | None:
    """Why ``url`` can never be fetched (a sentence), or None."""
    token = _TOKEN.search(url)
    literal = url if token is None else url[: token.start()]
    if token is not None and token.start() == 0:
        return None  # the whole URL comes from a template token
    scheme, sep, rest = literal.partition("://")
    if not sep or scheme.lower() not in ("http", "https"):
        return messages.url_not_http(url)
    if token is not None and "/" not in rest and "?" not in rest and "#" not in rest:
        return None  # the host is (partly) a template token
    try:
        host = urlsplit(literal).hostname
    except ValueError:
        host = None
    if not host:
        return messages.url_not_http(url)
    return None


def reserved_header(headers: object) -> str | None:
    """The first header name of ``headers`` (as written) that tocsin sets itself, or None."""
    if not isinstance(headers, Mapping):
        return None
    for name in headers:
        low = str(name).lower()
        if low in RESERVED_HEADERS or low.startswith(RESERVED_HEADER_PREFIX):
            return str(name)
    return None


def row_columns(value: Any, names: Any) -> Iterator[str]:
    """Every column name a ``$row`` token of ``value`` refers to (strings inside lists and dict
    values; keys excluded), read as the renderer reads it; ``id`` for the record id."""
    if isinstance(value, str):
        yield from _names_in(value, column_trie(names))
    elif isinstance(value, list):
        for item in value:
            yield from row_columns(item, names)
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from row_columns(item, names)


def _names_in(text: str, trie: dict[str, Any]) -> Iterator[str]:
    for match in _ROW.finditer(text):
        start = match.end()
        if match.group("brace") is not None:
            close = text.find("}", start)
            if close > start:
                yield text[start:close]
            continue
        best = longest_name(trie, text, start)
        word = _WORD.match(text, start)
        word_name = word.group(0) if word else ""
        if word_name == "id" and best in ("", "id"):
            yield "id"
        else:
            yield best or word_name


def missing_row_column(action: Mapping[str, Any], columns: Mapping[str, str]) -> str | None:
    """The first ``$row`` column name of ``action`` that the table lacks, or None."""
    for field, value in action.items():
        if field in ("id", "type"):
            continue
        for name in row_columns(value, columns):
            if name != "id" and name not in columns:
                return name
    return None


def table_problem(action: Mapping[str, Any], columns: Mapping[str, str]) -> str | None:
    """What a saved action must already get right (its URL, its ``$row`` columns): the reason
    it is refused, or None."""
    kind = action["type"]
    if kind in URL_ACTIONS and (problem := url_problem(action["url"])) is not None:
        return messages.action_problem(kind, problem)
    if kind in URL_ACTIONS and (name := reserved_header(action.get("headers"))) is not None:
        return messages.header_reserved(kind, name)
    missing = missing_row_column(action, columns)
    if missing is not None:
        return messages.action_row_column_missing(kind, missing, columns_hint(columns))
    return None


def columns_hint(columns: Mapping[str, str]) -> str:
    """``columns: A, B`` (the table's columns, as named), or ``columns: none``."""
    return messages.columns_listed(str(name) for name in columns)


__all__ = [
    "RESERVED_HEADERS",
    "RESERVED_HEADER_PREFIX",
    "URL_ACTIONS",
    "columns_hint",
    "missing_row_column",
    "reserved_header",
    "row_columns",
    "table_problem",
    "url_problem",
]
