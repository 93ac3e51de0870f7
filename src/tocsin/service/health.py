"""Readiness on the facade: does the database answer (``/readyz``)?"""

from __future__ import annotations

from tocsin.service.base import Service


class HealthService(Service):
    """``ping``: one trivial query."""

    def ping(self) -> None:
        """Return when the database answers; raise ``StoreUnavailable`` (503) while it does not."""
        self.store.ping()


__all__ = ["HealthService"]
