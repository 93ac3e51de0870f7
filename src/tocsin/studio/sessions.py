"""Studio sign-in: opaque server-side sessions and their CSRF tokens.

Choice (documented in the README): the session cookie carries only a random, opaque session id
(``secrets.token_urlsafe(32)``), ``HttpOnly`` and ``SameSite=Strict``; the API token it signed in
with stays in this process's memory, never in a cookie. Every request re-verifies that token
through the facade (``Tocsin.verify_token``), so a revoked or expired token signs the session
out at once. Sessions live in the serving process: a restart signs everyone out (sign in again,
or use the ``/login?token=…`` link ``make run`` prints). Each session has its own CSRF token that
every form POST must echo (compared in constant time).

Bounds, so one token holder cannot sign anyone else out: each token keeps at most
``per_token`` sessions (``TOCSIN_STUDIO_SESSIONS_PER_TOKEN``, default 20; a new sign-in drops
that token's oldest, never another token's), and the whole store at most ``MAX_SESSIONS``
(expired ones go first, then the oldest of the token holding the most). :class:`SignInLimiter`
caps sign-ins per client address per minute (``TOCSIN_STUDIO_SIGNINS_PER_MINUTE``, default 10).
"""

from __future__ import annotations

import hmac
import secrets
import threading
from collections import OrderedDict, deque
from dataclasses import dataclass, field
from datetime import datetime, timedelta

COOKIE = "tocsin_session"
SESSION_TTL = timedelta(hours=12)
MAX_SESSIONS = 10_000
SIGN_IN_WINDOW = timedelta(minutes=1)
#: addresses the limiter remembers at once; past it, those idle for a whole window are forgotten
MAX_TRACKED_ADDRESSES = 100_000


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
    """The sessions of one app, in memory, bounded per token and in all (see the module)."""

    per_token: int = 20
    max_sessions: int = MAX_SESSIONS
    _by_id: dict[str, Session] = field(default_factory=dict)
    _by_token: dict[str, OrderedDict[str, None]] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def open(self, token: str, now: datetime) -> Session:
        session = Session(
            id=secrets.token_urlsafe(32),
            token=token,
            csrf=secrets.token_urlsafe(32),
            expires_at=now + SESSION_TTL,
        )
        with self._lock:
            own = self._by_token.setdefault(token, OrderedDict())
            while len(own) >= self.per_token:
                self._drop(next(iter(own)))
            if len(self._by_id) >= self.max_sessions:
                self._make_room(now)
            self._by_id[session.id] = session
            self._by_token.setdefault(token, OrderedDict())[session.id] = None
        return session

    def get(self, session_id: str | None, now: datetime) -> Session | None:
        if not session_id:
            return None
        with self._lock:
            session = self._by_id.get(session_id)
            if session is not None and session.expires_at <= now:
                self._drop(session_id)
                return None
        return session

    def close(self, session_id: str | None) -> None:
        if session_id:
            with self._lock:
                self._drop(session_id)

    def _drop(self, session_id: str) -> None:
        session = self._by_id.pop(session_id, None)
        if session is None:
            return
        own = self._by_token.get(session.token)
        if own is not None:
            own.pop(session_id, None)
            if not own:
                del self._by_token[session.token]

    def _make_room(self, now: datetime) -> None:
        """The store is full: expired sessions go, else the oldest of the busiest token's."""
        for expired in [s.id for s in self._by_id.values() if s.expires_at <= now]:
            self._drop(expired)
        if len(self._by_id) >= self.max_sessions:
            busiest = max(self._by_token.values(), key=len)
            self._drop(next(iter(busiest)))


@dataclass
class SignInLimiter:
    """At most ``per_minute`` sign-ins per client address in any sliding minute."""

    per_minute: int = 10
    _seen: dict[str, deque[datetime]] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def admit(self, address: str, now: datetime) -> int:
        """0 when this sign-in may go ahead (and it is counted); otherwise the seconds until
        the address may sign in again."""
        since = now - SIGN_IN_WINDOW
        with self._lock:
            if len(self._seen) >= MAX_TRACKED_ADDRESSES:
                for idle in [a for a, times in self._seen.items() if times[-1] <= since]:
                    del self._seen[idle]
            times = self._seen.setdefault(address, deque(maxlen=self.per_minute))
            while times and times[0] <= since:
                times.popleft()
            if len(times) >= self.per_minute:
                wait = (times[0] - since).total_seconds()
                return max(1, int(-(-wait // 1)))
            times.append(now)
            return 0


__all__ = ["COOKIE", "Session", "Sessions", "SignInLimiter"]
