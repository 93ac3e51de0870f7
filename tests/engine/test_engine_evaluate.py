"""The evaluator alone (pure): scheduler order, stored-trigger inspection (SPEC §7, STYLE R3)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from tocsin.core.model import TriggerState
from tocsin.core.schedules import identity
from tocsin.engine.evaluate import (
    ALREADY_FIRED,
    DUE_NOW,
    FUTURE,
    INVALID,
    MISSING,
    WHEN_MISMATCH,
    ClockVerdict,
    classify,
    count_verdicts,
    inspect_stored,
    row_event_triggers,
)

NOW = datetime(2026, 8, 27, 5, 2, 13, tzinfo=UTC)
COLUMNS = {"Due": "datetime", "Status": "text"}
DATE: dict[str, Any] = {
    "id": "trg_000000000001",
    "on": "schedule",
    "schedule": {"type": "date_column_reached", "column": "Due"},
    "when": [{"column": "Status", "op": "eq", "value": "Open"}],
    "actions": [],
}
HOURLY: dict[str, Any] = {
    "id": "trg_000000000002",
    "on": "schedule",
    "schedule": {"type": "interval", "every_seconds": 3600},
    "actions": [],
}


def _record(rid: str, due: Any, status: str = "Open") -> dict[str, Any]:
    return {"id": rid, "data": {"Due": due, "Status": status}, "created_at": NOW}


def test_scheduler_order_decides_each_record_once() -> None:
    [trigger] = inspect_stored([DATE], COLUMNS, [DATE["id"]])
    fired_value = identity.date_identity("r3", "2026-08-27 01:00")
    page = [
        _record("r1", None),  # missing wins over everything
        _record("r2", "soon-ish"),  # invalid
        _record("r3", "2026-08-27T01:00", "Done"),  # fired wins over the when mismatch
        _record("r4", "2026-12-01T00:00", "Done"),  # future wins over the when mismatch
        _record("r5", "2026-08-27T01:00", "Done"),  # when mismatch
        _record("r6", "2026-08-27T05:02"),  # due
    ]
    verdicts = classify(
        trigger, {}, now=NOW, column_type="datetime", page=page, fired=[fired_value]
    )
    assert isinstance(verdicts, list)
    got = [v.verdict for v in verdicts]
    assert got == [MISSING, INVALID, ALREADY_FIRED, FUTURE, WHEN_MISMATCH, DUE_NOW]
    assert sum(count_verdicts(verdicts).values()) == len(page)
    assert verdicts[5].identity == identity.date_identity("r6", "2026-08-27 05:02")


def test_clock_classification_coalesces_and_respects_the_active_run() -> None:
    [trigger] = inspect_stored([HOURLY], COLUMNS, [HOURLY["id"]])
    state = TriggerState(
        HOURLY["id"], "t1", "interval", NOW, NOW, None, None, None, False, None, None
    )
    later = NOW + timedelta(hours=5, minutes=30)
    free = classify(trigger, state, now=later)
    busy = classify(trigger, state, now=later, active_run=True)
    assert isinstance(free, ClockVerdict) and isinstance(busy, ClockVerdict)
    assert free.due_at == NOW + timedelta(hours=5) and free.due_now
    assert busy.due_at == free.due_at and not busy.due_now and busy.active_run


def test_inspect_stored_reports_state_missing_and_skips_row_events() -> None:
    row_event = {"id": "trg_000000000003", "on": "created", "actions": []}
    stored = inspect_stored([HOURLY, row_event, DATE], COLUMNS, [DATE["id"]])
    assert [s.trigger_id for s in stored] == [HOURLY["id"], DATE["id"]]
    assert stored[0].error_codes == ("schedule_state_missing",) and not stored[0].valid
    assert stored[1].valid and stored[1].kind == "date_column_reached"
    with pytest.raises(ValueError):
        classify(stored[0], {}, now=NOW)
    assert inspect_stored(None, COLUMNS, []) == []


def test_row_event_triggers_match_event_and_when() -> None:
    updated: dict[str, Any] = {
        "id": "trg_000000000004",
        "on": "updated",
        "when": [{"column": "Status", "op": "eq", "value": "Done"}],
        "actions": [],
    }
    broken = {"on": "updated", "actions": []}  # no id: skipped, never raised
    config = [updated, broken, DATE]
    assert row_event_triggers(config, "updated", {"Status": "Done"}) == [updated]
    assert row_event_triggers(config, "updated", {"Status": "Open"}) == []
    assert row_event_triggers(config, "created", {"Status": "Done"}) == []
