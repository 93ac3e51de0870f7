"""Settings read once from an injected environ mapping (DESIGN §4). Stdlib only."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from tocsin import messages
from tocsin.core.config.allowlist import allow_entry_problem
from tocsin.errors import SettingsError


def _split(value: str) -> tuple[str, ...]:
    return tuple(part.strip() for part in value.split(",") if part.strip())


def _allow(value: str) -> tuple[str, ...]:
    """``TOCSIN_OUTBOUND_ALLOW``: each entry well formed, or a ``SettingsError`` naming it (a
    typo would otherwise allow nothing, and the refusals at run time would name the variable
    the operator believes they set)."""
    entries = _split(value)
    for entry in entries:
        problem = allow_entry_problem(entry)
        if problem is not None:
            raise SettingsError(messages.outbound_allow_invalid(entry, problem))
    return entries


def _seconds(
    env: Mapping[str, str],
    name: str,
    default: float,
    ok: Callable[[float], bool],
    problem: Callable[[str, str], str],
) -> float:
    """A finite number of seconds from ``env[name]`` that ``ok`` accepts (``default`` when unset
    or empty); a malformed value raises ``SettingsError`` with ``problem``'s text naming it."""
    raw = env.get(name, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        value = float("nan")
    if not (value < float("inf") and ok(value)):
        raise SettingsError(problem(name, raw))
    return value


def _positive(env: Mapping[str, str], name: str, default: str) -> float:
    """Seconds > 0 from ``env[name]``; a malformed value names the variable."""
    return _seconds(
        env, name, float(default), lambda v: v > 0, messages.setting_not_positive_seconds
    )


def _timeout(env: Mapping[str, str], name: str, default: float) -> float:
    """Seconds >= 0 from ``env[name]`` (0: no timeout); a malformed value names the variable."""
    return _seconds(env, name, default, lambda v: v >= 0, messages.setting_not_timeout)


def _count(env: Mapping[str, str], name: str, default: int) -> int:
    """A whole number > 0 from ``env[name]``; a malformed value names the variable."""
    raw = env.get(name, "").strip()
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value <= 0:
        raise SettingsError(messages.setting_not_positive_int(name, raw))
    return value


def _listen(env: Mapping[str, str], name: str) -> tuple[str, int | None]:
    """``PORT`` or ``HOST:PORT`` (port in [1, 65535]) from ``env[name]``: (host, port); the host
    defaults to 127.0.0.1, the port to None when the variable is unset or empty."""
    raw = env.get(name, "").strip()
    host, _, port = raw.rpartition(":")
    host = host.strip("[]") or "127.0.0.1"
    if not raw:
        return host, None
    if not port.isascii() or not port.isdigit() or not 1 <= int(port) <= 65535:
        raise SettingsError(messages.setting_not_address(name, raw))
    return host, int(port)


#: ``tocsin serve`` (and ``tocsin demo``) refuse a shorter ``TOCSIN_ADMIN_TOKEN``.
ADMIN_TOKEN_MIN_CHARS = 24
MAX_BODY_BYTES = 1024 * 1024


@dataclass(frozen=True, slots=True, kw_only=True)
class Settings:
    """What a tocsin process is configured with.

    ``Settings.from_environ()`` reads ``os.environ``; tests pass ``environ={...}`` instead of
    patching the process environment. A malformed number raises ``SettingsError`` naming the
    variable (a tick period of 0 would spin the embedded ticker).

    ``action_timeout_s`` is the total deadline of an outbound action (connect + headers + body)
    whose config has no ``timeout_s``; ``action_timeout_max_s`` caps every deadline, a config's
    too. ``worker_concurrency`` is how many runs one worker process executes at once;
    ``max_running_per_scope`` how many runs of one scope (a table's ``scope``/``scope_id``; the
    app's workflow runs are one scope) one worker process runs at once, counted in it (None:
    ``worker_concurrency - 1``, at least 1; :attr:`per_scope_cap`), so another scope's ready run
    finds a free slot.
    The ``max_*`` limits bound what one tenant can make tocsin build, so that no tenant starves
    another: the size of one rendered template value, of one record's data (serialized JSON;
    also each run's row snapshot), the columns of a table and their names, the triggers of a
    table and the actions of a trigger. Past a limit a write is refused with 400; a render
    fails its action.
    ``body_timeout_s``: the time a request's body may take to arrive, from its first read
    (a client trickling bytes holds a connection open: 408 past it).
    ``studio_sessions_per_token``: Studio sessions one token may hold (a new sign-in drops that
    token's oldest); ``studio_signins_per_minute``: sign-ins per client address per minute
    (then 429 with ``Retry-After``); ``studio_fires_per_page``: fires one page of a schedule's
    Studio history shows (with the skips of its share of time).
    ``backfill_max_instants``: the most instants a forced backfill takes.
    ``run_claim_chunk``: runs of every kind a pool's claim takes per free slot (per slot a
    tenant may still take), into the queue its slots share (None: ``runs.drain.slot_share``,
    a claim batch of 1,000 shared by the pool's slots);
    ``slot_look_s``: a queue none of whose runs a slot took for this long gets another slot of
    its scope, when one is free (``runs.drain``).
    ``sqlite_max_bytes`` (None: no cap) is the most a SQLite database file may grow to: past
    it a write fails as on a full disk (507, ``/readyz`` 503), so tocsin cannot fill a disk it
    shares (SQLite's ``PRAGMA max_page_count``, set on every connection; PostgreSQL ignores it).
    ``db_backoff_max_s`` caps the pause between two tries of a loop (worker, ticker) or of a
    run's write while the database is unavailable or full (it doubles from the loop's period).
    PostgreSQL: the API, the worker and the ticker each have a pool of their own
    (``*_pool_size`` connections, ``tocsin.store.pools``), whose connections wait for a lock at
    most ``*_lock_timeout_s`` and run a statement at most ``*_statement_timeout_s`` (0: no
    limit). Past one, a request answers 503 with ``Retry-After``, a run's action is retried in
    place (SPEC §9.5), a tick skips the table. SQLite ignores them (its busy timeout applies).
    """

    database_url: str = "sqlite:///tocsin.db"
    admin_token: str | None = field(default=None, repr=False)
    outbound_allow: tuple[str, ...] = field(default_factory=tuple)
    stuck_after_s: int = 300
    tick_every_s: float = 30.0
    app: str | None = None
    action_timeout_s: float = 10.0
    action_timeout_max_s: float = 60.0
    worker_concurrency: int = 8
    max_running_per_scope: int | None = None
    max_rendered_bytes: int = 64 * 1024
    max_record_bytes: int = 256 * 1024
    max_columns: int = 200
    max_column_name_chars: int = 64
    max_triggers_per_table: int = 100
    max_actions_per_trigger: int = 20
    max_body_bytes: int = MAX_BODY_BYTES
    body_timeout_s: float = 30.0
    metrics_token: str | None = field(default=None, repr=False)
    metrics_port: int | None = None
    metrics_host: str = "127.0.0.1"
    studio_sessions_per_token: int = 20
    studio_signins_per_minute: int = 10
    studio_fires_per_page: int = 20
    backfill_max_instants: int = 1_000_000
    run_claim_chunk: int | None = None  # None: runs.drain.slot_share(worker_concurrency)
    slot_look_s: float = 0.01
    sqlite_max_bytes: int | None = None
    db_backoff_max_s: float = 30.0
    api_pool_size: int = 10
    worker_pool_size: int | None = None  # None: worker_concurrency + 2
    ticker_pool_size: int = 3
    api_lock_timeout_s: float = 2.0
    api_statement_timeout_s: float = 10.0
    worker_lock_timeout_s: float = 30.0
    worker_statement_timeout_s: float = 120.0
    ticker_lock_timeout_s: float = 30.0
    ticker_statement_timeout_s: float = 120.0

    @classmethod
    def from_environ(cls, environ: Mapping[str, str] | None = None) -> Settings:
        env = os.environ if environ is None else environ
        metrics_host, metrics_port = _listen(env, "TOCSIN_METRICS_PORT")
        concurrency = _count(env, "TOCSIN_WORKER_CONCURRENCY", 8)
        return cls(
            database_url=env.get("TOCSIN_DATABASE_URL", "sqlite:///tocsin.db"),
            admin_token=env.get("TOCSIN_ADMIN_TOKEN") or None,
            outbound_allow=_allow(env.get("TOCSIN_OUTBOUND_ALLOW", "")),
            stuck_after_s=max(1, round(_positive(env, "TOCSIN_STUCK_AFTER_S", "300"))),
            tick_every_s=_positive(env, "TOCSIN_TICK_EVERY_S", "30"),
            app=env.get("TOCSIN_APP", "").strip() or None,
            action_timeout_s=_positive(env, "TOCSIN_ACTION_TIMEOUT_S", "10"),
            action_timeout_max_s=_positive(env, "TOCSIN_ACTION_TIMEOUT_MAX_S", "60"),
            worker_concurrency=concurrency,
            max_running_per_scope=_count(env, "TOCSIN_MAX_RUNNING_PER_SCOPE", 0) or None,
            max_rendered_bytes=_count(env, "TOCSIN_MAX_RENDERED_BYTES", 64 * 1024),
            max_record_bytes=_count(env, "TOCSIN_MAX_RECORD_BYTES", 256 * 1024),
            max_columns=_count(env, "TOCSIN_MAX_COLUMNS", 200),
            max_column_name_chars=_count(env, "TOCSIN_MAX_COLUMN_NAME_CHARS", 64),
            max_triggers_per_table=_count(env, "TOCSIN_MAX_TRIGGERS_PER_TABLE", 100),
            max_actions_per_trigger=_count(env, "TOCSIN_MAX_ACTIONS_PER_TRIGGER", 20),
            max_body_bytes=_count(env, "TOCSIN_MAX_BODY_BYTES", MAX_BODY_BYTES),
            body_timeout_s=_positive(env, "TOCSIN_BODY_TIMEOUT_S", "30"),
            metrics_token=env.get("TOCSIN_METRICS_TOKEN") or None,
            metrics_port=metrics_port,
            metrics_host=metrics_host,
            studio_sessions_per_token=_count(env, "TOCSIN_STUDIO_SESSIONS_PER_TOKEN", 20),
            studio_signins_per_minute=_count(env, "TOCSIN_STUDIO_SIGNINS_PER_MINUTE", 10),
            studio_fires_per_page=_count(env, "TOCSIN_STUDIO_FIRES_PER_PAGE", 20),
            backfill_max_instants=_count(env, "TOCSIN_BACKFILL_MAX_INSTANTS", 1_000_000),
            run_claim_chunk=_count(env, "TOCSIN_RUN_CLAIM_CHUNK", 0) or None,
            slot_look_s=_positive(env, "TOCSIN_SLOT_LOOK_S", "0.01"),
            sqlite_max_bytes=_count(env, "TOCSIN_SQLITE_MAX_BYTES", 0) or None,
            db_backoff_max_s=_positive(env, "TOCSIN_DB_BACKOFF_MAX_S", "30"),
            api_pool_size=_count(env, "TOCSIN_API_POOL_SIZE", 10),
            worker_pool_size=_count(env, "TOCSIN_WORKER_POOL_SIZE", 0) or None,
            ticker_pool_size=_count(env, "TOCSIN_TICKER_POOL_SIZE", 3),
            api_lock_timeout_s=_timeout(env, "TOCSIN_API_LOCK_TIMEOUT_S", 2.0),
            api_statement_timeout_s=_timeout(env, "TOCSIN_API_STATEMENT_TIMEOUT_S", 10.0),
            worker_lock_timeout_s=_timeout(env, "TOCSIN_WORKER_LOCK_TIMEOUT_S", 30.0),
            worker_statement_timeout_s=_timeout(env, "TOCSIN_WORKER_STATEMENT_TIMEOUT_S", 120.0),
            ticker_lock_timeout_s=_timeout(env, "TOCSIN_TICKER_LOCK_TIMEOUT_S", 30.0),
            ticker_statement_timeout_s=_timeout(env, "TOCSIN_TICKER_STATEMENT_TIMEOUT_S", 120.0),
        )

    @property
    def per_scope_cap(self) -> int:
        """How many runs of one scope may be running at once: ``max_running_per_scope``, by
        default one slot less than ``worker_concurrency`` (at least 1)."""
        if self.max_running_per_scope is not None:
            return max(1, self.max_running_per_scope)
        return max(1, self.worker_concurrency - 1)

    def check_servable(self) -> None:
        """Refuse to serve with a guessable admin token (``SettingsError``, one line): a set
        ``TOCSIN_ADMIN_TOKEN`` must have at least ``ADMIN_TOKEN_MIN_CHARS`` characters, and so
        must ``TOCSIN_METRICS_TOKEN``."""
        for name, token in (
            ("TOCSIN_ADMIN_TOKEN", self.admin_token),
            ("TOCSIN_METRICS_TOKEN", self.metrics_token),
        ):
            if token is not None and len(token) < ADMIN_TOKEN_MIN_CHARS:
                raise SettingsError(
                    messages.token_too_short(name, len(token), ADMIN_TOKEN_MIN_CHARS)
                )
