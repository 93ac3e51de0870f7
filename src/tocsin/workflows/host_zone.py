"""The host's local IANA zone: the default of a ``Schedule`` without ``timezone`` (SPEC §12).

Read from ``TZ``, then ``/etc/timezone``, then the ``/etc/localtime`` symlink; ``UTC`` when none
names a known zone. Only names are returned (a fixed offset would not follow DST).
"""

from __future__ import annotations

import os
from pathlib import Path

from tocsin.core.time.zones import is_known_zone

LOCALTIME = Path("/etc/localtime")
TIMEZONE_FILE = Path("/etc/timezone")


def host_zone_name() -> str:
    """The IANA name of the host's local zone, or ``"UTC"``."""
    for candidate in (_from_env(), _from_file(), _from_link()):
        if candidate and is_known_zone(candidate):
            return candidate
    return "UTC"


def _from_env() -> str | None:
    value = os.environ.get("TZ", "").strip().lstrip(":")
    return value or None


def _from_file() -> str | None:
    try:
        return TIMEZONE_FILE.read_text(encoding="utf-8").strip() or None
    except OSError:
        return None


def _from_link() -> str | None:
    try:
        target = os.path.realpath(LOCALTIME)
    except OSError:
        return None
    marker = "zoneinfo/"
    index = target.find(marker)
    return target[index + len(marker) :] if index >= 0 else None


__all__ = ["host_zone_name"]
