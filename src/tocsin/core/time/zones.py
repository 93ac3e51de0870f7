"""IANA zones and local wall time → instant.

Fold policy (SPEC §4.3): a local wall time is turned into an instant with ``fold=0``, the
pre-transition offset, in every case:

- a *nonexistent* wall time (spring forward gap, e.g. 02:30 on 2024-03-10 in America/New_York)
  is read with the offset in force before the gap (EST, -05:00) → 07:30 UTC, i.e. 03:30 EDT;
- a *repeated* wall time (fall back, e.g. 01:30 on 2024-11-03 in America/New_York) resolves to
  its first occurrence (EDT, -04:00) → 05:30 UTC.

So a daily slot is neither skipped nor doubled. (Cron has its own rule: a nonexistent minute
never fires; see ``tocsin.core.time.cron``.)
"""

from __future__ import annotations

import difflib
import re
from datetime import UTC, date, datetime, time
from functools import lru_cache
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError, available_timezones

from tocsin import messages
from tocsin.core.time.instants import MAX_UTC, MIN_UTC
from tocsin.errors import ConfigError

TIMEZONE_INVALID = "timezone_invalid"

# IANA keys are path-like words; refuse absolute paths, '..', backslashes, NULs and blanks early.
_ZONE_KEY = re.compile(r"[A-Za-z0-9_+\-]+(?:/[A-Za-z0-9_+\-]+)*", re.ASCII)
_MAX_KEY_LENGTH = 64
# names a zoneinfo directory may hold that are not portable IANA zones: the host's own zone,
# tzdata's placeholder, and the leap-second / POSIX copies of the real zones
_NOT_PORTABLE = frozenset({"localtime", "Factory", "posixrules"})
_NOT_PORTABLE_PREFIXES = ("posix/", "right/")


SUGGESTIONS = 3
SUGGESTION_CUTOFF = 0.6


def get_zone(name: object) -> ZoneInfo:
    """The ``ZoneInfo`` for an IANA name in any case (``europe/berlin`` is Europe/Berlin), or
    ``ConfigError`` (code ``timezone_invalid``): the SPEC text, then the nearest valid names
    (``did you mean 'Europe/Berlin'?``) when some are close."""
    if not isinstance(name, str):
        raise ConfigError(messages.DAILY_TIMEZONE_NOT_STRING, code=TIMEZONE_INVALID)
    canonical = canonical_zone(name)
    zone = None if canonical is None else _load(canonical)
    if zone is None:
        detail = messages.daily_timezone_unknown(name) + messages.did_you_mean(suggest(name))
        raise ConfigError(detail, code=TIMEZONE_INVALID)
    return zone


def is_known_zone(name: object) -> bool:
    """True when ``name`` is an IANA zone as written (exact case)."""
    return isinstance(name, str) and _load(name) is not None


def canonical_zone(name: str) -> str | None:
    """``name`` as the IANA database spells it (any case accepted), or None when unknown."""
    if _load(name) is not None:
        return name
    return _by_folded_name().get(name.casefold())


def suggest(name: str) -> list[str]:
    """Up to ``SUGGESTIONS`` known zone names closest to ``name`` (case-insensitive)."""
    folded = _by_folded_name()
    close = difflib.get_close_matches(
        name.casefold(), list(folded), n=SUGGESTIONS, cutoff=SUGGESTION_CUTOFF
    )
    return [folded[key] for key in close]


@lru_cache(maxsize=1)
def _by_folded_name() -> dict[str, str]:
    """Every portable zone name by its case-folded spelling."""
    names = sorted(
        n
        for n in available_timezones()
        if n not in _NOT_PORTABLE and not n.startswith(_NOT_PORTABLE_PREFIXES)
    )
    return {n.casefold(): n for n in names}


@lru_cache(maxsize=1024)
def _load(name: str) -> ZoneInfo | None:
    if len(name) > _MAX_KEY_LENGTH or _ZONE_KEY.fullmatch(name) is None:
        return None
    if name in _NOT_PORTABLE or name.startswith(_NOT_PORTABLE_PREFIXES):
        return None
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        return None


def wall_to_instant(d: date, t: time, zone: ZoneInfo) -> datetime:
    """The aware UTC instant of local wall time ``d t`` in ``zone`` under the fold=0 rule.

    Saturates at ``MIN_UTC``/``MAX_UTC`` when the conversion would leave the datetime range.
    """
    local = datetime.combine(d, t.replace(tzinfo=None, fold=0), tzinfo=zone)
    try:
        return local.astimezone(UTC)
    except OverflowError:
        return MIN_UTC if d.year == 1 else MAX_UTC


def is_nonexistent(d: date, t: time, zone: ZoneInfo) -> bool:
    """True when wall time ``d t`` is skipped in ``zone`` (a spring-forward gap)."""
    local = datetime.combine(d, t.replace(tzinfo=None, fold=0), tzinfo=zone)
    try:
        back = local.astimezone(UTC).astimezone(zone)
    except OverflowError:
        return False
    return back.replace(tzinfo=None) != local.replace(tzinfo=None)


def is_ambiguous(d: date, t: time, zone: ZoneInfo) -> bool:
    """True when wall time ``d t`` happens twice in ``zone`` (a fall-back fold)."""
    first = datetime.combine(d, t.replace(tzinfo=None, fold=0), tzinfo=zone)
    second = first.replace(fold=1)
    return first.utcoffset() != second.utcoffset() and not is_nonexistent(d, t, zone)


def local_date(instant: datetime, zone: ZoneInfo) -> date:
    """The calendar date of an aware instant in ``zone`` (saturating at the range ends)."""
    try:
        return instant.astimezone(zone).date()
    except OverflowError:
        return date.min if instant.year == 1 else date.max


__all__ = [
    "TIMEZONE_INVALID",
    "canonical_zone",
    "get_zone",
    "is_ambiguous",
    "is_known_zone",
    "is_nonexistent",
    "local_date",
    "suggest",
    "wall_to_instant",
]
