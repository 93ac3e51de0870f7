"""The store's own column type: every instant as naive UTC in the database, aware in Python."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import DateTime, Dialect
from sqlalchemy.types import TypeDecorator

from tocsin import messages


class UTCDateTime(TypeDecorator[datetime]):
    """Aware UTC in Python, naive UTC in the database (the same on SQLite and PostgreSQL)."""

    impl = DateTime
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError(messages.store_naive_datetime(value))
        return value.astimezone(UTC).replace(tzinfo=None)

    def process_result_value(self, value: Any, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if isinstance(value, str):  # defensive: SQLite text
            value = datetime.fromisoformat(value)
        assert isinstance(value, datetime)
        return value.replace(tzinfo=UTC)
