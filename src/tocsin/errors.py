"""The one error tree of tocsin.

Every error a user can see carries ``.status`` (the HTTP status the API answers with) and
``.detail`` (the exact text of SPEC, kept in :mod:`tocsin.messages`)::

    TocsinError (500)
    ├── ValidationError (400)          bad input; nothing was written
    │   └── ConfigError (400)          a triggers config or schedule is invalid; has ``.code``
    ├── PermissionDenied (403)         wrong tenant, wrong role, bad admin token
    ├── NotFound (404)                 missing or trashed table, unknown run / record
    ├── Conflict (409)                 a state transition that is not allowed now
    ├── TransientStoreError (503)      a lock conflict worth retrying (SPEC §9.5)
    ├── StatementTimeout (503)         the database canceled a statement (``statement_timeout``)
    ├── StoreUnavailable (503)         the database does not answer (down, restarting)
    ├── StorageFull (507)              the database cannot grow (disk full, size cap reached)
    └── SettingsError (500)            a TOCSIN_* environment variable is malformed

Stdlib only: every layer may import this module.
"""

from __future__ import annotations


class TocsinError(Exception):
    """Base of every tocsin error."""

    status: int = 500

    def __init__(self, detail: str, *, status: int | None = None) -> None:
        super().__init__(detail)
        self.detail = detail
        if status is not None:
            self.status = status

    def __str__(self) -> str:
        return self.detail


class ValidationError(TocsinError, ValueError):
    """Bad input, rejected before anything is written."""

    status = 400


class ConfigError(ValidationError):
    """A trigger or schedule definition is invalid; ``code`` is the preview code (SPEC §7)."""

    def __init__(self, detail: str, *, code: str) -> None:
        super().__init__(detail)
        self.code = code


class PermissionDenied(TocsinError):
    """The caller may not do this (SPEC §15)."""

    status = 403


class NotFound(TocsinError):
    """The thing does not exist here, or is trashed."""

    status = 404


class Conflict(TocsinError):
    """The request is valid but the current state refuses it."""

    status = 409


class TransientStoreError(TocsinError):
    """A database lock conflict; retried inside the run (SPEC §9.5)."""

    status = 503


class StatementTimeout(TocsinError):
    """The database canceled a statement that ran past its pool's ``statement_timeout`` (or
    that an operator canceled): 503 with ``Retry-After`` for a request; not a lock conflict,
    so a run's action fails at once (SPEC §9.5)."""

    status = 503


class StoreUnavailable(TocsinError):
    """The database cannot be reached (refused, closed, starting up); answered 503 with
    ``Retry-After``, never 500. A later request reconnects by itself."""

    status = 503


class StorageFull(TocsinError):
    """The database has no room for a write (SQLite ``SQLITE_FULL``, PostgreSQL ``53100``):
    answered 507; the same write succeeds once space is freed."""

    status = 507


class SettingsError(TocsinError):
    """A setting read from the environment is malformed; the process refuses to start."""


class NonRetryable(Exception):
    """Raised by a workflow step or a lane handler: the run fails at once, whatever its
    ``retry`` policy says (no further attempt is scheduled)."""


__all__ = [
    "ConfigError",
    "Conflict",
    "NonRetryable",
    "NotFound",
    "PermissionDenied",
    "SettingsError",
    "StatementTimeout",
    "StorageFull",
    "StoreUnavailable",
    "TocsinError",
    "TransientStoreError",
    "ValidationError",
]
