"""Tables, records, row events, triggers config, tick, preview and runs listing (SPEC §2–§8)."""

from __future__ import annotations

from tocsin.service.base import TocsinBase


class DataMixin(TocsinBase):
    """Owned by the store/tick/preview work (issue 3)."""
