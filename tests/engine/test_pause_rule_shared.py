"""One pause rule (``core.schedules.pause``) for a table's clock trigger (its schedule decision at
resume) and its ``date_column_reached`` trigger (its per-record scan): over the same pause, the
hourly cron windows and the hourly date values that fell due inside it are skipped ``paused``
alike (as many), none of them fires after the resume, and the next one fires for both."""

from __future__ import annotations

from datetime import datetime

import pytest
from engine_support import NOW, clock_trigger, date_trigger, finish_all, hours, make_table, minutes

from tocsin.core.time.instants import to_iso
from tocsin.service import Tocsin

HOUR = NOW.replace(minute=0, second=0)  # 05:00


def _paused(t: Tocsin, table_id: str, trigger_id: str) -> int:
    items = t.skips(table_id, trigger_id, limit=50)["items"]
    assert {s["reason"] for s in items} <= {"paused"}, items
    return sum(s["count"] for s in items)


@pytest.mark.parametrize(
    ("paused", "resumed"),
    [(minutes(40), hours(5) + minutes(30)), (hours(1), hours(4)), (minutes(50), minutes(55))],
)
def test_a_clock_and_a_date_trigger_skip_the_same_paused_instants(
    tocsin: Tocsin, paused: object, resumed: object
) -> None:
    table_id = make_table(tocsin)
    cron = clock_trigger({"type": "cron", "expression": "0 * * * *"}, name="hourly")
    saved = tocsin.set_triggers(table_id, [cron, date_trigger()], now=NOW)
    hourly, due = (s["id"] for s in saved)
    values = [HOUR + hours(h) for h in range(1, 12)]
    tocsin.insert_records(table_id, [{"Due": to_iso(v)} for v in values], now=NOW)
    start, end = HOUR + paused, HOUR + resumed  # type: ignore[operator]
    tocsin.tick(now=start)
    for trigger_id in (hourly, due):
        tocsin.pause_trigger(table_id, trigger_id, now=start)
    for trigger_id in (hourly, due):
        tocsin.resume_trigger(table_id, trigger_id, now=end)
    tocsin.tick(now=end)
    inside = [v for v in values if start < v <= end]
    assert _paused(tocsin, table_id, hourly) == _paused(tocsin, table_id, due) == len(inside)
    finish_all(tocsin, table_id, now=end)
    following = min(v for v in values if v > end)
    tocsin.tick(now=following)
    runs = tocsin.list_runs(table_id, limit=100, now=following)["items"]
    fired: dict[str, set[datetime]] = {hourly: set(), due: set()}
    for run in runs:
        fired[run["trigger_id"]].add(datetime.fromisoformat(str(run["scheduled_for"])))
    for trigger_id in (hourly, due):
        assert not {to_iso(f) for f in fired[trigger_id]} & {to_iso(v) for v in inside}
        assert to_iso(following) in {to_iso(f) for f in fired[trigger_id]}
