"""Alembic migrations of tocsin's store; run by :func:`tocsin.store.migrate.upgrade_to_head`."""

from __future__ import annotations
