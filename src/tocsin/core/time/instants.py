"""Instants: aware-UTC datetimes, naive-UTC cell parsing and saturating arithmetic.

Every instant inside tocsin is an aware ``datetime`` in UTC. Naive datetimes are refused at the
boundary (``require_aware``), never silently localised.

Cells of ``date``/``datetime`` columns are *naive UTC* (SPEC §4.1):

- a trailing ``Z`` is stripped;
- an explicit offset (``+08:00``) is **dropped, not converted**: ``2026-07-25T09:00+08:00`` is
  09:00 UTC;
- a date-only cell is 00:00 UTC.

Accepted shapes: ``YYYY-MM-DD``, ``YYYY-MM-DDTHH:MM``, ``YYYY-MM-DDTHH:MM:SS`` and
``YYYY-MM-DDTHH:MM:SS.f`` (1–6 fractional digits), with ``T`` or one space as separator and an
optional ``Z`` or ``±HH:MM`` / ``±HHMM`` suffix after a time. Surrounding whitespace is ignored.
Anything else (another type, another shape, an impossible date) is *invalid*; ``None`` and blank
strings are *missing*. Nothing here raises on a bad cell.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Literal

from tocsin import messages

MIN_UTC = datetime.min.replace(tzinfo=UTC)
MAX_UTC = datetime.max.replace(tzinfo=UTC)

CellStatus = Literal["missing", "invalid", "ok"]

_CELL = re.compile(
    r"(?P<y>[0-9]{4})-(?P<mo>[0-9]{2})-(?P<d>[0-9]{2})"
    r"(?:[T ](?P<h>[0-9]{2}):(?P<mi>[0-9]{2})"
    r"(?::(?P<s>[0-9]{2})(?:\.(?P<f>[0-9]{1,6}))?)?"
    r"(?P<tz>[Zz]|[+-][0-9]{2}:?[0-9]{2})?)?",
    re.ASCII,
)


def require_aware(dt: datetime, name: str = "datetime") -> datetime:
    """Return ``dt`` as UTC; raise ``ValueError`` for a naive datetime (or a non-datetime)."""
    if dt.__class__ is datetime and dt.tzinfo is UTC:  # the common case, first
        return dt
    if not isinstance(dt, datetime) or dt.tzinfo is None or dt.utcoffset() is None:
        raise ValueError(messages.naive_datetime(name))
    if dt.tzinfo is UTC:
        return dt
    try:
        return dt.astimezone(UTC)
    except OverflowError:
        return MIN_UTC if dt.year == 1 else MAX_UTC


def parse_cell(value: object) -> datetime | None:
    """A cell as an aware UTC instant, or ``None`` when it is missing or invalid."""
    return classify_cell(value)[1]


def classify_cell(value: object) -> tuple[CellStatus, datetime | None]:
    """``("missing", None)``, ``("invalid", None)`` or ``("ok", instant)`` for one cell."""
    if value is None:
        return "missing", None
    if not isinstance(value, str):
        return "invalid", None
    text = value.strip()
    if not text:
        return "missing", None
    match = _CELL.fullmatch(text)
    if match is None:
        return "invalid", None
    parts = match.groupdict()
    try:
        instant = datetime(
            int(parts["y"]),
            int(parts["mo"]),
            int(parts["d"]),
            int(parts["h"] or 0),
            int(parts["mi"] or 0),
            int(parts["s"] or 0),
            int((parts["f"] or "0").ljust(6, "0")),
            tzinfo=UTC,
        )
    except ValueError:
        return "invalid", None
    return "ok", instant


def ignored_offset(value: object) -> str | None:
    """The explicit UTC offset of a valid datetime cell that the naive-UTC rule drops (SPEC
    §4.1: ``+08:00`` is ignored, not converted), or None: no offset, ``Z`` or a zero offset,
    which change nothing."""
    if not isinstance(value, str):
        return None
    match = _CELL.fullmatch(value.strip())
    tz = None if match is None else match.group("tz")
    if tz is None or tz in ("Z", "z") or tz.replace(":", "")[1:] == "0000":
        return None
    return tz if classify_cell(value)[0] == "ok" else None


def add_minutes_saturating(dt: datetime, minutes: int) -> datetime:
    """``dt + minutes``, clamped to ``MIN_UTC``/``MAX_UTC`` instead of raising (SPEC §4.1).

    ``MAX_UTC`` means "never fires"; ``MIN_UTC`` means "fires at once".
    """
    return add_saturating(dt, minutes=minutes)


def add_saturating(dt: datetime, *, minutes: int = 0, seconds: int = 0) -> datetime:
    """``dt`` plus an offset, clamped at the datetime bounds (aware UTC)."""
    base = require_aware(dt)
    total = minutes * 60 + seconds
    try:
        return base + timedelta(seconds=total)
    except OverflowError:
        return MAX_UTC if total > 0 else MIN_UTC


def to_iso(dt: datetime) -> str:
    """``YYYY-MM-DDTHH:MM:SS`` in UTC without an offset, as the preview shows it (SPEC §7)."""
    return require_aware(dt).replace(tzinfo=None).isoformat(timespec="seconds")


def to_rfc3339(dt: datetime) -> str:
    """RFC 3339 with the datetime's own offset (``+00:00`` for UTC); seconds unless sub-second."""
    aware = dt if dt.tzinfo is not None else require_aware(dt)
    spec = "microseconds" if aware.microsecond else "seconds"
    return aware.isoformat(timespec=spec)


__all__ = [
    "MAX_UTC",
    "MIN_UTC",
    "CellStatus",
    "add_minutes_saturating",
    "add_saturating",
    "classify_cell",
    "parse_cell",
    "require_aware",
    "to_iso",
    "to_rfc3339",
]
