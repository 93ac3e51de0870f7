"""Why (not): the skip ledger, next fires, the global dry run and run-now.

Table triggers here; workflow schedules' ``skips`` / ``next_fires`` / ``backfill`` are on
``Tocsin.schedules`` (:mod:`tocsin.service.schedules`), lanes' on ``Tocsin.lanes``; the dry run
covers all three.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from tocsin import messages
from tocsin.core.schedules.skips import TRIGGER, SkipRange
from tocsin.core.time.instants import to_iso
from tocsin.engine.evaluate import inspect_stored
from tocsin.engine.lane_admit import LaneSpec
from tocsin.engine.lanes import lane_entries
from tocsin.engine.runnow import run_trigger_now
from tocsin.engine.schedule_whynot import schedule_entries
from tocsin.engine.whynot import clock_next_fires, dry_run_tables
from tocsin.errors import NotFound, ValidationError
from tocsin.service.base import Service
from tocsin.service.data import RECORD_LIMIT, _check_limit, _check_page, _table
from tocsin.store import runs as store_runs
from tocsin.store import skips as store_skips
from tocsin.store import state as store_state
from tocsin.store.tx import Tx

MAX_NEXT = 1000


def skip_view(row: SkipRange) -> dict[str, Any]:
    """A skip range as callers see it."""
    return {
        "reason": row.reason,
        "first_instant": to_iso(row.first),
        "last_instant": to_iso(row.last),
        "count": row.count,
        "count_is_lower_bound": row.at_least,
    }


def check_n(n: object) -> int:
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= MAX_NEXT:
        raise ValidationError(messages.count_invalid("n", 1, MAX_NEXT, n))
    return n


def _trigger(tx: Tx, table_id: str, trigger_id: object) -> Any:
    table = _table(tx, table_id)
    states = store_state.get_states(tx, table_id=table_id)
    live = {tid for tid, s in states.items() if not s.retired}
    for trigger in inspect_stored(table.triggers, table.columns, live):
        if trigger.trigger_id == trigger_id:
            return trigger, states.get(str(trigger_id))
    raise NotFound(messages.TRIGGER_NOT_FOUND)


class DiagnosticsService(Service):
    """``skips``, ``next_fires``, ``due`` and ``run_trigger`` of the facade."""

    def skips(
        self, table_id: str, trigger_id: str, skip: int = 0, limit: int = 50
    ) -> dict[str, Any]:
        """A table trigger's skipped occurrences as ranges, newest first."""
        _check_page(skip, limit)
        with self.store.read() as tx:
            _trigger(tx, table_id, trigger_id)
            rows, total = store_skips.list_skips(
                tx,
                target_kind=TRIGGER,
                table_id=table_id,
                target_id=trigger_id,
                skip=skip,
                limit=limit,
            )
        return {"items": [skip_view(r) for r in rows], "total": total, "skip": skip, "limit": limit}

    def next_fires(
        self, table_id: str, trigger_id: str, n: int = 10, now: datetime | None = None
    ) -> dict[str, Any]:
        """The next ``n`` instants a clock trigger fires at (UTC and its zone)."""
        at, n = self._now(now), check_n(n)
        with self.store.read() as tx:
            trigger, state = _trigger(tx, table_id, trigger_id)
            if not trigger.valid or state is None:
                raise ValidationError(messages.TRIGGER_INVALID_NO_FIRES)
            if trigger.kind == "date_column_reached":
                raise ValidationError(messages.NEXT_FIRES_CLOCK_ONLY)
            active = store_runs.active_clock_trigger_ids(
                tx, table_id=table_id, trigger_ids=[trigger_id]
            )
        items = clock_next_fires(trigger, state, active=bool(active), now=at, n=n)
        return {"trigger_id": trigger_id, "evaluated_at": to_iso(at), "items": items}

    def due(
        self,
        at: datetime | None = None,
        record_limit: int = 1000,
        *,
        lanes: Mapping[str, LaneSpec] | None = None,
    ) -> dict[str, Any]:
        """The global dry run: what a tick at ``at`` fires, and why not for the rest (read-only;
        ``at`` may be in the future): table triggers, workflow schedules and the given lanes."""
        when = self._now(at)
        limit = _check_limit("record_limit", record_limit, RECORD_LIMIT)
        with self.store.read() as tx:
            entries = dry_run_tables(tx, at=when, record_limit=limit)
            entries += schedule_entries(tx, when)
            entries += lane_entries(tx, lanes or {}, when)
        fires = [e for e in entries if e["status"] == "fires"]
        return {
            "at": to_iso(when),
            "runs": sum(int(e["runs"]) for e in fires),
            "fires": fires,
            "not_firing": [e for e in entries if e["status"] != "fires"],
        }

    def run_trigger(
        self, table_id: str, trigger_id: str, now: datetime | None = None
    ) -> dict[str, Any]:
        """One manual run of a trigger now (never consumes or blocks a scheduled occurrence)."""
        at = self._now(now)
        with self.store.read() as tx:
            _trigger(tx, table_id, trigger_id)
        return run_trigger_now(self.store, table_id=table_id, trigger_id=trigger_id, now=at)


__all__ = ["DiagnosticsService", "skip_view"]
