"""A table cron trigger and a workflow schedule of the same cron decide alike through the tick
(one decision, ``core.decide``), on SQLite and PostgreSQL: the same fire instants and the same
skip ranges (reason, first, last, count) under downtime across a DST gap and a pause. Their
policies coincide here: catch-up ``latest``, and no run is still active at a tick (the table's
runs are finished, the schedule's overlap is ``allow``)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from engine_support import clock_trigger, finish_all, make_table, runs_of
from pydantic import BaseModel

from tocsin import Schedule, step, workflow
from tocsin.service import Tocsin
from tocsin.workflows import StepContext

BERLIN = "Europe/Berlin"
CRON = "30 2 * * *"  # 02:30 Berlin: it does not exist on 2026-03-29 (spring forward)
SAVED = datetime(2026, 3, 28, 12, 0, tzinfo=UTC)


class Empty(BaseModel):
    pass


@step(id="noop", input=Empty, output=Empty)
def noop(data: Empty, ctx: StepContext) -> Empty:
    return Empty()


def _at(month: int, day: int, hour: int, minute: int = 0) -> datetime:
    return datetime(2026, month, day, hour, minute, tzinfo=UTC)


def test_a_table_cron_trigger_and_a_workflow_schedule_decide_alike(tocsin: Tocsin) -> None:
    table_id = make_table(tocsin, now=SAVED)
    [saved] = tocsin.set_triggers(
        table_id,
        [clock_trigger({"type": "cron", "expression": CRON, "timezone": BERLIN})],
        now=SAVED,
    )
    schedule = Schedule(cron=CRON, timezone=BERLIN, overlap="allow")
    flow = workflow(id="alike", input=Empty, output=Empty, schedule=schedule).then(noop).commit()
    tocsin.register_workflows([flow])
    tocsin.sync_schedules(now=SAVED)
    [sid] = [s["id"] for s in tocsin.schedules.list()["items"]]
    tid = saved["id"]

    def tick(now: datetime) -> None:
        tocsin.tick(now=now)
        finish_all(tocsin, table_id, now=now)

    tick(_at(3, 31, 8))  # down since the save: 2 instants owed, 1 swallowed by the gap
    tick(_at(4, 1, 0, 31))  # on time
    tocsin.pause_trigger(table_id, tid, now=_at(4, 1, 6))
    tocsin.schedules.pause(sid, now=_at(4, 1, 6))
    tick(_at(4, 3, 1))  # paused: nothing fires
    tocsin.resume_trigger(table_id, tid, now=_at(4, 4, 12))
    tocsin.schedules.resume(sid, now=_at(4, 4, 12))
    tick(_at(4, 5, 0, 30))
    tick(_at(4, 9, 0, 30))  # 3 instants coalesced

    table_fires = [r["scheduled_for"] for r in runs_of(tocsin, table_id)]
    schedule_fires = [i["scheduled_for"] for i in tocsin.schedules.fires(sid, limit=50)["items"]]
    expected = [_at(3, 31, 0, 30), _at(4, 1, 0, 30), _at(4, 5, 0, 30), _at(4, 9, 0, 30)]
    assert sorted(table_fires) == sorted(schedule_fires) == expected

    def shape(items: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
        return sorted(
            (s["reason"], s["first_instant"], s["last_instant"], s["count"]) for s in items
        )

    table_skips = shape(tocsin.skips(table_id, tid)["items"])
    assert table_skips == shape(tocsin.schedules.skips(sid, limit=50)["items"])
    assert table_skips == [
        ("coalesced", "2026-03-30T00:30:00", "2026-03-30T00:30:00", 1),
        ("coalesced", "2026-04-06T00:30:00", "2026-04-08T00:30:00", 3),
        ("dst_gap", "2026-03-29T01:00:00", "2026-03-29T01:00:00", 1),
        ("paused", "2026-04-02T00:30:00", "2026-04-04T00:30:00", 3),
    ]
