"""Readiness on the facade: does the database answer, and take writes (``/readyz``)?"""

from __future__ import annotations

from tocsin.errors import StorageFull
from tocsin.service.base import Service


class HealthService(Service):
    """``ping``: one trivial query (and, after a write failed for lack of space, a probe)."""

    def ping(self) -> None:
        """Return when the database answers; raise ``StoreUnavailable`` (503) while it does not,
        and ``StorageFull`` as a 503 while writes fail for lack of space (``Store.ping``)."""
        try:
            self.store.ping()
        except StorageFull as exc:  # not ready: the process cannot do its work
            raise StorageFull(exc.detail, status=503) from exc


__all__ = ["HealthService"]
