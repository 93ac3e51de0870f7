"""SPEC §10 materialize_slots: roster rows → slot records over a rolling horizon, idempotent per
slot, on a daily schedule (scheduled 2026-08-27 01:30 Asia/Taipei, a Thursday)."""

from __future__ import annotations

import uuid
from datetime import timedelta
from typing import Any

from runs.helpers import LATER, NOW
from tocsin.service import Tocsin
from tocsin.store.schema import runs

ROSTER = {
    "weekday": "text",
    "start": "text",
    "end": "text",
    "slot_minutes": "number",
    "capacity": "number",
}
SLOTS = {"start": "datetime", "end": "datetime", "capacity": "number"}
DAILY = {"type": "daily", "at": "01:30", "timezone": "Asia/Taipei"}


def setup(
    t: Tocsin, horizon: int = 7, *, roster_room: str | None = None
) -> tuple[dict[str, Any], dict[str, Any]]:
    room = str(uuid.uuid4())
    roster = t.create_table("chatroom", roster_room or room, "Roster", ROSTER, now=NOW)
    slots = t.create_table("chatroom", room, "Slots", SLOTS, now=NOW)
    t.insert_records(
        roster["id"],
        [
            {"weekday": "Mon", "start": "09:00", "end": "11:00", "slot_minutes": 60, "capacity": 2},
            {"weekday": "4", "start": "14:00", "end": "15:30", "slot_minutes": 30, "capacity": 1},
            {
                "weekday": "Sun",
                "start": "nonsense",
                "end": "11:00",
                "slot_minutes": 60,
                "capacity": 1,
            },
        ],
        now=NOW,
    )
    action = {"type": "materialize_slots", "source_table_id": roster["id"], "horizon_days": horizon}
    t.set_triggers(
        slots["id"], [{"on": "schedule", "schedule": DAILY, "actions": [action]}], now=NOW
    )
    return roster, slots


def slot_keys(t: Tocsin, table_id: str) -> list[tuple[str, str, Any]]:
    items = t.list_records(table_id, limit=500)["items"]
    return sorted((r["data"]["start"], r["data"]["end"], r["data"]["capacity"]) for r in items)


def test_materializes_roster_rows_over_the_horizon(tocsin: Tocsin) -> None:
    _, slots = setup(tocsin)
    assert tocsin.tick(now=LATER)["runs_created"] == 1
    tocsin.work(now=LATER)
    (run,) = tocsin.list_runs(slots["id"], now=LATER)["items"]
    assert run["status"] == "done", run["error"]
    assert run["action_results"][0]["detail"] == (
        "materialized 5 new slot(s) over 7 day(s) from 2026-08-27"
    )
    keys = slot_keys(tocsin, slots["id"])
    assert [k[0] for k in keys] == [
        "2026-08-27T14:00",
        "2026-08-27T14:30",
        "2026-08-27T15:00",
        "2026-08-31T09:00",
        "2026-08-31T10:00",
    ]
    assert keys[0][1] == "2026-08-27T14:30" and keys[0][2] == 1 and keys[3][2] == 2


def test_the_next_day_adds_only_new_slots(tocsin: Tocsin) -> None:
    _, slots = setup(tocsin)
    tocsin.tick(now=LATER)
    tocsin.work(now=LATER)
    tomorrow = NOW + timedelta(days=1)
    assert tocsin.tick(now=tomorrow)["runs_created"] == 1
    tocsin.work(now=tomorrow)
    runs = tocsin.list_runs(slots["id"], now=tomorrow)["items"]
    details = sorted(r["action_results"][0]["detail"] for r in runs)
    assert details[0] == "materialized 3 new slot(s) over 7 day(s) from 2026-08-28"
    keys = slot_keys(tocsin, slots["id"])
    assert len(keys) == len(set(keys)) == 8


def test_a_retried_run_creates_no_duplicates(tocsin: Tocsin) -> None:
    _, slots = setup(tocsin)
    tocsin.tick(now=LATER)
    tocsin.work(now=LATER)
    (run,) = tocsin.list_runs(slots["id"], now=LATER)["items"]
    with tocsin.store.begin() as tx:  # as if the run had failed before storing its receipt
        tx.conn.execute(
            runs.update().where(runs.c.id == run["id"]).values(status="failed", action_results=[])
        )
    tocsin.retry_run(slots["id"], run["id"], now=LATER)
    tocsin.work(now=LATER)
    again = tocsin.get_run(slots["id"], run["id"])
    assert again["action_results"][0]["detail"].startswith("materialized 0 new slot(s)")
    assert len(slot_keys(tocsin, slots["id"])) == 5


def test_a_roster_of_another_scope_is_out_of_reach(tocsin: Tocsin) -> None:
    roster, slots = setup(tocsin, roster_room=str(uuid.uuid4()))
    tocsin.tick(now=LATER)
    tocsin.work(now=LATER)
    (run,) = tocsin.list_runs(slots["id"], now=LATER)["items"]
    assert run["status"] == "failed"
    assert run["error"] == f"target table '{roster['id']}' does not exist or is trashed"
    assert slot_keys(tocsin, slots["id"]) == []
