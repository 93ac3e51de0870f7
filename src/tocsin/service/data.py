"""Tables, records, row events, trigger pause, tick, preview and runs listing (SPEC §2–§8).

Every method validates its input before anything is written, then does its work in one store
transaction. Record writes fire the table's row-event triggers in that same transaction
(SPEC §3, ``engine.row_events``): each matching trigger gets one pending run with the row
snapshot. Time comes in as
``now`` (aware UTC); only when omitted does the facade read the clock (``base.edge_now``).
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from tocsin import messages
from tocsin.core.config import limits
from tocsin.core.config.cells import (
    is_plain_json,
    offset_warnings,
    validate_cells,
    validate_columns,
)
from tocsin.core.model import Table
from tocsin.engine import configs, pause
from tocsin.engine.ids import uuid7, uuid7s
from tocsin.engine.passes import Pass
from tocsin.engine.preview import schedule_preview
from tocsin.engine.row_events import emit_row_event, table_updated
from tocsin.engine.tick import tick
from tocsin.engine.whynot import record_restore_skips
from tocsin.errors import NotFound, ValidationError
from tocsin.service.base import Service
from tocsin.store import claims, run_queries
from tocsin.store import records as store_records
from tocsin.store import runs as store_runs
from tocsin.store.tx import Tx

SCOPES = ("chatroom", "workspace", "user")
TABLE_PUBLIC = (
    "id",
    "scope",
    "scope_id",
    "name",
    "columns",
    "trashed",
    "requires_approval",
    "scp_rules",
    "created_at",
    "updated_at",
)
MAX_NAME = 200
MAX_PAGE = 500
MAX_SKIP = 2**62  # a bigint OFFSET on PostgreSQL, an INTEGER on SQLite
MAX_ID = 64  # table/record/run ids are UUIDs; trigger ids at most 64 characters
TABLE_LIMIT = (1, 2000)
RECORD_LIMIT = (1, 10000)


def _as_utc(name: str, value: object) -> datetime | None:
    """A filter instant: aware datetimes convert to UTC; naive ones are read as UTC."""
    if value is None:
        return None
    if not isinstance(value, datetime):
        raise ValidationError(messages.run_window_invalid(name))
    try:
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
    except OverflowError:  # year 9999 behind UTC, or year 1 ahead of it
        raise ValidationError(messages.run_window_invalid(name)) from None


def _check_page(skip: int, limit: int) -> None:
    ints = all(isinstance(v, int) and not isinstance(v, bool) for v in (skip, limit))
    if not ints or not 0 <= skip <= MAX_SKIP or not 1 <= limit <= MAX_PAGE:
        raise ValidationError(messages.page_invalid(skip, limit))


def _check_limit(name: str, value: object, bounds: tuple[int, int]) -> int:
    low, high = bounds
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ValidationError(messages.tick_limit_invalid(name, low, high, value))
    return value


def public_table(table: Table) -> dict[str, Any]:
    """A table as callers see it (no scheduler bookkeeping)."""
    return {name: getattr(table, name) for name in TABLE_PUBLIC}


def is_id(value: object) -> bool:
    """Could ``value`` be a stored id? (Anything else is simply not found: never a SQL error.)"""
    if not isinstance(value, str) or not 0 < len(value) <= MAX_ID:
        return False
    return value.isascii() and "\x00" not in value


def _encodable(text: str) -> bool:
    """UTF-8 encodable (no lone surrogate): what a database text column can hold."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _require_id(value: object, not_found: str) -> None:
    if not is_id(value):
        raise NotFound(not_found)


def _table(tx: Tx, table_id: str, *, include_trashed: bool = False) -> Table:
    _require_id(table_id, messages.TABLE_NOT_FOUND)
    table = store_records.get_table(tx, table_id=table_id, include_trashed=include_trashed)
    if table is None:
        raise NotFound(messages.TABLE_NOT_FOUND)
    return table


def _locked_table(tx: Tx, table_id: str) -> Table:
    """The live table, locked for a config write (triggers, SCP rules)."""
    table = store_records.lock_table(tx, table_id=table_id) if is_id(table_id) else None
    if table is None:
        raise NotFound(messages.TABLE_NOT_FOUND)
    return table


class TablesService(Service):
    """Tables, their records, trigger pause, the table tick, preview and runs listing (the
    triggers config is ``TriggerService``'s)."""

    # --- tables --------------------------------------------------------------------------------

    def create_table(
        self,
        scope: str,
        scope_id: str,
        name: str,
        columns: Mapping[str, str],
        *,
        requires_approval: bool = False,
        scp_rules: list[Any] | None = None,
        now: datetime | None = None,
    ) -> dict[str, Any]:
        """Create a live table with typed columns in a scope (SPEC §1–§2)."""
        at = self._now(now)
        if scope not in SCOPES:
            raise ValidationError(messages.scope_invalid(scope))
        try:
            canonical_scope_id = str(uuid.UUID(str(scope_id)))
        except ValueError:
            raise ValidationError(messages.scope_id_invalid(scope_id)) from None
        if not isinstance(name, str) or not name.strip() or len(name) > MAX_NAME:
            raise ValidationError(messages.TABLE_NAME_INVALID)
        if "\x00" in name:
            raise ValidationError(messages.BODY_NUL)
        if not _encodable(name):
            raise ValidationError(messages.BODY_SURROGATE)
        checked = validate_columns(columns)
        limits.check_columns(checked, self.settings)
        if scp_rules is not None and not isinstance(scp_rules, list):
            raise ValidationError(messages.SCP_RULES_NOT_LIST)
        if not is_plain_json(scp_rules):
            raise ValidationError(messages.not_plain_json("scp_rules"))
        if not isinstance(requires_approval, bool):
            raise ValidationError(messages.REQUIRES_APPROVAL_NOT_BOOL)
        with self.store.begin() as tx:
            table = store_records.insert_table(
                tx,
                id=uuid7(at),
                scope=scope,
                scope_id=canonical_scope_id,
                name=name,
                columns=checked,
                now=at,
                requires_approval=bool(requires_approval),
                scp_rules=scp_rules or None,
            )
        return public_table(table)

    def get_table(self, table_id: str, *, include_trashed: bool = True) -> dict[str, Any]:
        """A table (trashed ones carry ``trashed: true``); 404 when missing."""
        with self.store.read() as tx:
            return public_table(_table(tx, table_id, include_trashed=include_trashed))

    def trash_table(self, table_id: str, now: datetime | None = None) -> dict[str, Any]:
        """Trash a table: its schedules fall silent, its writes answer 404 (SPEC §2)."""
        return self._set_table_trashed(table_id, True, self._now(now))

    def restore_table(self, table_id: str, now: datetime | None = None) -> dict[str, Any]:
        """Restore a trashed table."""
        return self._set_table_trashed(table_id, False, self._now(now))

    def _set_table_trashed(self, table_id: str, trashed: bool, at: datetime) -> dict[str, Any]:
        with self.store.begin() as tx:
            _table(tx, table_id, include_trashed=True)
            changed = store_records.set_table_trashed(
                tx, table_id=table_id, trashed=trashed, now=at
            )
            if changed and not trashed:  # the skip ledger: what the trash skipped
                record_restore_skips(tx, table_id=table_id, now=at)
            return public_table(_table(tx, table_id, include_trashed=True))

    def set_scp_rules(
        self, table_id: str, rules: list[Any] | None, now: datetime | None = None
    ) -> dict[str, Any]:
        """Replace the channel SCP rules; 400 while the table has triggers (SPEC §2)."""
        at = self._now(now)
        with self.store.begin() as tx:
            table = _locked_table(tx, table_id)
            configs.set_scp_rules(tx, table=table, rules=rules, now=at)
            return public_table(_table(tx, table_id))

    # --- records -------------------------------------------------------------------------------

    def insert_records(
        self, table_id: str, rows: list[Mapping[str, Any]], now: datetime | None = None
    ) -> list[str]:
        """Insert live records (all validated first); each emits ``created``. Returns the ids."""
        return [r["id"] for r in self._insert(table_id, rows, self._now(now))]

    def insert_record(
        self, table_id: str, data: Mapping[str, Any], now: datetime | None = None
    ) -> dict[str, Any]:
        """Insert one record and return its dict (the HTTP ``POST …/records``), with
        ``warnings``: one entry per datetime cell whose offset the naive-UTC rule ignores."""
        warnings: list[str] = []
        record = self._insert(table_id, [data], self._now(now), warnings=warnings)[0]
        return {**record, "warnings": warnings}

    def _insert(
        self,
        table_id: str,
        rows: list[Mapping[str, Any]],
        at: datetime,
        warnings: list[str] | None = None,
    ) -> list[dict[str, Any]]:
        if not isinstance(rows, list):
            raise ValidationError(messages.ROWS_NOT_LIST)
        limits.check_records(rows, self.settings)
        with self.store.begin() as tx:
            table = _table(tx, table_id)
            checked = [validate_cells(table.columns, row) for row in rows]
            if warnings is not None:
                warnings.extend(w for row in checked for w in offset_warnings(table.columns, row))
            ids = uuid7s(at, len(checked))
            values = [{"id": i, "data": data} for i, data in zip(ids, checked, strict=True)]
            created = store_records.insert_records(tx, table_id=table_id, rows=values, now=at)
            for record in created:
                emit_row_event(tx, table, "created", record, at)
            if created:
                configs.wake_date_triggers(tx, table=table)
                table_updated(tx, table_id, at)
        return created

    def update_record(
        self,
        table_id: str,
        record_id: str,
        data: Mapping[str, Any],
        now: datetime | None = None,
    ) -> dict[str, Any]:
        """Partial update: only the given columns change; emits ``updated``. The record comes
        back with ``warnings`` (datetime offsets ignored, as for ``insert_record``)."""
        at = self._now(now)
        with self.store.begin() as tx:
            table = _table(tx, table_id)
            patch = validate_cells(table.columns, data)
            _require_id(record_id, messages.RECORD_NOT_FOUND)
            record = store_records.get_record(tx, table_id=table_id, record_id=record_id)
            if record is None:
                raise NotFound(messages.RECORD_NOT_FOUND)
            merged = {**record["data"], **patch}
            limits.check_records([merged], self.settings)
            updated = store_records.update_record_data(
                tx, table_id=table_id, record_id=record_id, data=merged, now=at
            )
            if updated is None:
                raise NotFound(messages.RECORD_NOT_FOUND)
            emit_row_event(tx, table, "updated", updated, at, previous=record["data"])
            configs.wake_date_triggers(tx, table=table)
            table_updated(tx, table_id, at)
        return {**updated, "warnings": offset_warnings(table.columns, patch)}

    def trash_record(
        self, table_id: str, record_id: str, now: datetime | None = None
    ) -> dict[str, Any]:
        """Trash a record; emits ``deleted`` (a record already trashed is returned as is)."""
        return self._set_record_trashed(table_id, record_id, True, self._now(now))

    def restore_record(
        self, table_id: str, record_id: str, now: datetime | None = None
    ) -> dict[str, Any]:
        """Restore a trashed record; emits ``restored`` (a live record is returned as is)."""
        return self._set_record_trashed(table_id, record_id, False, self._now(now))

    def _set_record_trashed(
        self, table_id: str, record_id: str, trashed: bool, at: datetime
    ) -> dict[str, Any]:
        with self.store.begin() as tx:
            table = _table(tx, table_id)
            _require_id(record_id, messages.RECORD_NOT_FOUND)
            changed = store_records.set_record_trashed(
                tx, table_id=table_id, record_id=record_id, trashed=trashed, now=at
            )
            if changed is not None:
                emit_row_event(tx, table, "deleted" if trashed else "restored", changed, at)
                table_updated(tx, table_id, at)
                if not trashed:
                    configs.wake_date_triggers(tx, table=table)
                return changed
            record = store_records.get_record(
                tx, table_id=table_id, record_id=record_id, include_trashed=True
            )
            if record is None:
                raise NotFound(messages.RECORD_NOT_FOUND)
            return record

    def list_records(self, table_id: str, skip: int = 0, limit: int = 50) -> dict[str, Any]:
        """Live records oldest first: ``{"items", "total", "skip", "limit"}``."""
        _check_page(skip, limit)
        with self.store.read() as tx:
            _table(tx, table_id)
            items, total = store_records.list_records(tx, table_id=table_id, skip=skip, limit=limit)
        return {"items": items, "total": total, "skip": skip, "limit": limit}

    def get_record(self, table_id: str, record_id: str) -> dict[str, Any]:
        """One live record; 404 when missing or trashed."""
        with self.store.read() as tx:
            _table(tx, table_id)
            _require_id(record_id, messages.RECORD_NOT_FOUND)
            record = store_records.get_record(tx, table_id=table_id, record_id=record_id)
        if record is None:
            raise NotFound(messages.RECORD_NOT_FOUND)
        return record

    # --- trigger pause, tick, preview ---------------------------------------------------------

    def pause_trigger(
        self, table_id: str, trigger_id: str, now: datetime | None = None
    ) -> dict[str, Any]:
        """Pause a schedule trigger (idempotent): the tick fires nothing for it until
        :meth:`resume_trigger`; a triggers config save keeps it paused. 404 unknown table or
        trigger, 409 a row-event trigger. Returns its pause view (``engine.pause``)."""
        at = self._now(now)
        with self.store.begin() as tx:
            table = _locked_table(tx, table_id)
            return pause.pause_trigger(tx, table=table, trigger_id=trigger_id, now=at)

    def resume_trigger(
        self, table_id: str, trigger_id: str, now: datetime | None = None
    ) -> dict[str, Any]:
        """Resume a paused schedule trigger from ``now``, with no backlog (idempotent)."""
        at = self._now(now)
        with self.store.begin() as tx:
            table = _locked_table(tx, table_id)
            return pause.resume_trigger(tx, table=table, trigger_id=trigger_id, now=at)

    def tick(
        self,
        now: datetime | None = None,
        table_limit: int = 200,
        record_limit: int = 1000,
        *,
        passes: Sequence[Pass] = (),
    ) -> dict[str, int]:
        """One tick (``engine.tick.tick``, SPEC §6): the recovery sweeps, stale workflow runs'
        included, then the due tables and ``passes`` (``Tocsin.tick``'s: the due workflow
        schedules and lanes) through the one paging loop."""
        at = self._now(now)
        return tick(
            self.store,
            now=at,
            table_limit=_check_limit("table_limit", table_limit, TABLE_LIMIT),
            record_limit=_check_limit("record_limit", record_limit, RECORD_LIMIT),
            stuck_after_s=self.settings.stuck_after_s,
            passes=passes,
        )

    def tick_backlog(self, now: datetime | None = None) -> int:
        """How many tables with due work no tick at ``now`` has reached yet (the embedded
        ticker keeps ticking pages while this is above 0 and its period allows)."""
        at = self._now(now)
        with self.store.read() as tx:
            return claims.count_backlog(tx, now=at)

    def preview(
        self,
        table_id: str,
        now: datetime | None = None,
        record_limit: int = 1000,
        *,
        next_due: bool = False,
    ) -> dict[str, Any]:
        """The schedule preview of a live table (SPEC §7); read-only. ``next_due=True`` adds
        each clock trigger's ``next_due_at`` (Studio's "next fire")."""
        at = self._now(now)
        limit = _check_limit("record_limit", record_limit, RECORD_LIMIT)
        return schedule_preview(
            self.store, table_id=table_id, now=at, record_limit=limit, next_due=next_due
        )

    # --- runs ----------------------------------------------------------------------------------

    def list_runs(
        self,
        table_id: str,
        status: str | None = None,
        skip: int = 0,
        limit: int = 50,
        now: datetime | None = None,
        *,
        trigger_id: str | None = None,
        record_id: str | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
    ) -> dict[str, Any]:
        """A table's runs, newest first; ``status`` may be ``stuck`` (a filter, SPEC §8);
        ``trigger_id``, ``record_id`` and the creation window ``since <= created_at < until``
        (naive instants read as UTC) narrow it further."""
        at = self._now(now)
        _check_page(skip, limit)
        if status is not None and status not in run_queries.RUN_FILTERS:
            raise ValidationError(messages.run_status_invalid(status))
        start, end = _as_utc("since", since), _as_utc("until", until)
        if any(v is not None and not is_id(v) for v in (trigger_id, record_id)):
            return {"items": [], "total": 0, "skip": skip, "limit": limit}
        with self.store.read() as tx:
            _table(tx, table_id)
            items, total = run_queries.list_runs(
                tx,
                table_id=table_id,
                status=status,
                skip=skip,
                limit=limit,
                now=at,
                stuck_after_s=self.settings.stuck_after_s,
                trigger_id=trigger_id,
                record_id=record_id,
                since=start,
                until=end,
            )
        return {"items": [r.as_dict() for r in items], "total": total, "skip": skip, "limit": limit}

    def get_run(self, table_id: str, run_id: str) -> dict[str, Any]:
        """One run of this table; 404 for an unknown run or another table's."""
        with self.store.read() as tx:
            _table(tx, table_id)
            _require_id(run_id, messages.RUN_NOT_FOUND)
            run = store_runs.get_run(tx, run_id=run_id)
        if run is None or run.table_id != table_id:
            raise NotFound(messages.RUN_NOT_FOUND)
        return run.as_dict()
