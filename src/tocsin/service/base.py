"""Shared state of the facade: the store, the settings and the edge clock."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Self

from tocsin.errors import ValidationError
from tocsin.settings import Settings
from tocsin.store import open_store
from tocsin.store.tx import Store


class TocsinBase:
    """Holds the ``Store`` and ``Settings``; every mixin method reads them from here."""

    def __init__(self, store: Store, settings: Settings) -> None:
        self.store = store
        self.settings = settings

    @classmethod
    def open(cls, url: str | None = None, settings: Settings | None = None) -> Self:
        """Open (and migrate to head) the database at ``url`` or ``settings.database_url``."""
        settings = settings or Settings.from_environ()
        return cls(open_store(url or settings.database_url), settings)

    def close(self) -> None:
        self.store.dispose()

    @staticmethod
    def wall_clock() -> datetime:
        """The real clock, read only at the edges (a worker loop without a fixed ``now``)."""
        return datetime.now(UTC)

    @staticmethod
    def _now(now: datetime | None) -> datetime:
        """The edge default: the real clock only when the caller passed no ``now``."""
        if now is None:
            return datetime.now(UTC)
        if not isinstance(now, datetime) or now.tzinfo is None:
            raise ValidationError(f"now must be an aware datetime, got {now!r}")
        return now.astimezone(UTC)

    @staticmethod
    def _new_id(prefix: str = "") -> str:
        if prefix:
            return f"{prefix}_{uuid.uuid4().hex[:12]}"
        return str(uuid.uuid4())
