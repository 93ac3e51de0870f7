"""Studio sign-in: opaque server-side sessions and their CSRF tokens.

Choice (documented in the README): the session cookie carries only a random, opaque session id
(``secrets.token_urlsafe(32)``), ``HttpOnly`` and ``SameSite=Strict``; the API token it signed in
with stays in this process's memory, never in a cookie. Every request re-verifies that token
through the facade (``Tocsin.verify_token``), so a revoked or expired token signs the session
out at once. Sessions live in the serving process: a restart signs everyone out (sign in again,
or use the ``/login?token=…`` link ``make run`` prints). Each session has its own CSRF token that
every form POST must echo (compared in constant time).
"""

from __future__ import annotations

import hmac
import secrets
import threading
from dataclasses import dataclass, field
from datetime import datetime, timedelta

COOKIE = "tocsin_session"
SESSION_TTL = timedelta(hours=12)
MAX_SESSIONS = 10_000


@dataclass(frozen=True, slots=True)
class Session:
    """One signed-in browser: the token it signed in with and its CSRF token."""

    id: str
    token: str
    csrf: str
    expires_at: datetime

    def csrf_ok(self, given: str | None) -> bool:
        """``given`` equals this session's CSRF token (constant time)."""
        if not given:
            return False
        return hmac.compare_digest(given.encode("utf-8"), self.csrf.encode("utf-8"))


@dataclass
class Sessions:
    """The sessions of one app, in memory, bounded (oldest dropped first)."""

    _by_id: dict[str, Session] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def open(self, token: str, now: datetime) -> Session:
        session = Session(
            id=secrets.token_urlsafe(32),
            token=token,
            csrf=secrets.token_urlsafe(32),
            expires_at=now + SESSION_TTL,
        )
        with self._lock:
            while len(self._by_id) >= MAX_SESSIONS:
                self._by_id.pop(next(iter(self._by_id)))
            self._by_id[session.id] = session
        return session

    def get(self, session_id: str | None, now: datetime) -> Session | None:
        if not session_id:
            return None
        with self._lock:
            session = self._by_id.get(session_id)
            if session is not None and session.expires_at <= now:
                del self._by_id[session_id]
                return None
        return session

    def close(self, session_id: str | None) -> None:
        if session_id:
            with self._lock:
                self._by_id.pop(session_id, None)


__all__ = ["COOKIE", "Session", "Sessions"]
