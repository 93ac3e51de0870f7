"""Contract tests of tocsin.store on SQLite and PostgreSQL (DESIGN §5, STYLE R12)."""

from __future__ import annotations
