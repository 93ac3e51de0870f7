"""A table trigger's fires: ``Tocsin.triggers.fires`` and ``.history`` (SPEC §7).

A trigger's fires are its scheduled runs, read from ``runs`` (no row of their own); its
history interleaves them with its skip ranges exactly as a workflow schedule's
(:mod:`tocsin.service.history`).
"""

from __future__ import annotations

from typing import Any

from tocsin.service.base import Service
from tocsin.service.data import _check_page
from tocsin.service.history import trigger_history
from tocsin.service.whynot import _trigger
from tocsin.store import run_queries


class Triggers(Service):
    """Table triggers, one at a time: their fires and fire history."""

    def fires(
        self, table_id: str, trigger_id: str, skip: int = 0, limit: int = 50
    ) -> dict[str, Any]:
        """The trigger's fires (its scheduled runs), newest scheduled instant first:
        ``{"items", "total", "skip", "limit"}``; each with ``scheduled_for``, ``fired_at`` (the
        run's creation), ``run_id`` and ``run_status``."""
        _check_page(skip, limit)
        with self.store.read() as tx:
            _trigger(tx, table_id, trigger_id)
            fires, total = run_queries.list_trigger_fires(
                tx, table_id=table_id, trigger_id=trigger_id, skip=skip, limit=limit
            )
        items = [fire.as_dict() for fire in fires]
        return {"items": items, "total": total, "skip": skip, "limit": limit}

    def history(
        self, table_id: str, trigger_id: str, skip: int = 0, limit: int = 50
    ) -> dict[str, Any]:
        """The fires interleaved with the skip ranges, newest first, paged as :meth:`fires`:
        items carry ``kind`` (``fire`` or ``skip``); ``skips_left_off`` counts the ranges of the
        page's share not shown (``Tocsin.skips`` lists them all)."""
        _check_page(skip, limit)
        with self.store.read() as tx:
            _trigger(tx, table_id, trigger_id)
            return trigger_history(tx, table_id, trigger_id, skip, limit)


__all__ = ["Triggers"]
