"""Settings read once from an injected environ mapping (DESIGN §4). Stdlib only."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field

from tocsin.errors import SettingsError


def _split(value: str) -> tuple[str, ...]:
    return tuple(part.strip() for part in value.split(",") if part.strip())


def _positive(env: Mapping[str, str], name: str, default: str) -> float:
    """A number > 0 from ``env[name]``; a malformed value names the variable."""
    raw = env.get(name, default).strip() or default
    try:
        value = float(raw)
    except ValueError:
        value = float("nan")
    if not value > 0 or value == float("inf"):
        raise SettingsError(f"{name} must be a positive number of seconds, got {raw!r}")
    return value


@dataclass(frozen=True, slots=True, kw_only=True)
class Settings:
    """What a tocsin process is configured with.

    ``Settings.from_environ()`` reads ``os.environ``; tests pass ``environ={...}`` instead of
    patching the process environment. A malformed number raises ``SettingsError`` naming the
    variable (a tick period of 0 would spin the embedded ticker).
    """

    database_url: str = "sqlite:///tocsin.db"
    admin_token: str | None = None
    outbound_allow: tuple[str, ...] = field(default_factory=tuple)
    stuck_after_s: int = 300
    tick_every_s: float = 30.0
    app: str | None = None

    @classmethod
    def from_environ(cls, environ: Mapping[str, str] | None = None) -> Settings:
        env = os.environ if environ is None else environ
        return cls(
            database_url=env.get("TOCSIN_DATABASE_URL", "sqlite:///tocsin.db"),
            admin_token=env.get("TOCSIN_ADMIN_TOKEN") or None,
            outbound_allow=_split(env.get("TOCSIN_OUTBOUND_ALLOW", "")),
            stuck_after_s=max(1, round(_positive(env, "TOCSIN_STUCK_AFTER_S", "300"))),
            tick_every_s=_positive(env, "TOCSIN_TICK_EVERY_S", "30"),
            app=env.get("TOCSIN_APP", "").strip() or None,
        )
