"""A trigger id is unique within its table only (SPEC §5.1: a durable state row per trigger id,
per table), on SQLite and PostgreSQL, through the facade.

Two tables of two tenants (two chatroom scopes) save a trigger under the same id "nightly": no
refusal (a refusal let one tenant squat an id and told it the id existed elsewhere), and each
trigger lives on its own: both fire, a pause, the one-active-run fence, a retry, the skips, the
next fires and the preview of one never show or touch the other's.
"""

from __future__ import annotations

from typing import Any
from uuid import uuid4

from engine_support import NOW, finish, hours, minutes, runs_of

from tocsin.service import Tocsin

ID = "nightly"


def nightly(every: int = 3600) -> dict[str, Any]:
    return {
        "id": ID,
        "name": "n",
        "on": "schedule",
        "schedule": {"type": "interval", "every_seconds": every},
        "actions": [{"type": "notify", "message": "x"}],
    }


def two_tenants(t: Tocsin, a_every: int = 3600, b_every: int = 3600) -> tuple[str, str]:
    """Table A and table B, each in its own chatroom, each with trigger "nightly"."""
    a = t.create_table("chatroom", str(uuid4()), "A", {"Title": "text"}, now=NOW)["id"]
    b = t.create_table("chatroom", str(uuid4()), "B", {"Title": "text"}, now=NOW)["id"]
    assert [s["id"] for s in t.set_triggers(a, [nightly(a_every)], now=NOW)] == [ID]
    assert [s["id"] for s in t.set_triggers(b, [nightly(b_every)], now=NOW)] == [ID]
    return str(a), str(b)


def _arm(t: Tocsin, table_id: str, now: Any) -> dict[str, Any]:
    [arm] = t.preview(table_id, now=now)["triggers"]
    return dict(arm)


def test_both_tables_keep_the_id_and_both_fire(tocsin: Tocsin) -> None:
    a, b = two_tenants(tocsin)
    assert tocsin.get_trigger(a, ID)["id"] == ID == tocsin.get_trigger(b, ID)["id"]
    assert tocsin.tick(now=NOW)["runs_created"] == 2
    for table_id in (a, b):
        [run] = runs_of(tocsin, table_id)
        assert (run["table_id"], run["trigger_id"], run["scheduled_for"]) == (table_id, ID, NOW)
    # a save of one table (the same trigger, renamed) changes nothing for the other
    tocsin.set_triggers(b, [{**nightly(), "name": "renamed"}], now=NOW + minutes(1))
    assert tocsin.get_trigger(a, ID)["name"] == "n"
    # deleting it from A retires A's state only: B's trigger still fires
    tocsin.set_triggers(a, [], now=NOW + minutes(2))
    for table_id in (a, b):
        for run in runs_of(tocsin, table_id):
            finish(tocsin, run["id"], "done", now=NOW + minutes(3))
    assert tocsin.tick(now=NOW + hours(1))["runs_created"] == 1
    assert len(runs_of(tocsin, a)) == 1 and len(runs_of(tocsin, b)) == 2


def test_pausing_one_does_not_pause_the_other(tocsin: Tocsin) -> None:
    a, b = two_tenants(tocsin)
    view = tocsin.pause_trigger(a, ID, now=NOW - minutes(1))
    assert (view["table_id"], view["paused"]) == (a, True)
    assert _arm(tocsin, a, NOW)["paused"] is True
    assert "paused" not in _arm(tocsin, b, NOW) and _arm(tocsin, b, NOW)["due_now"] is True
    assert tocsin.tick(now=NOW)["runs_created"] == 1  # B only
    assert runs_of(tocsin, a) == [] and len(runs_of(tocsin, b)) == 1
    # resuming B (never paused) leaves A paused
    assert tocsin.resume_trigger(b, ID, now=NOW + minutes(1))["paused"] is False
    assert _arm(tocsin, a, NOW + minutes(1))["paused"] is True
    assert tocsin.resume_trigger(a, ID, now=NOW + minutes(2))["paused"] is False


def test_the_one_active_run_fence_of_one_does_not_block_the_other(tocsin: Tocsin) -> None:
    a, b = two_tenants(tocsin)
    assert tocsin.tick(now=NOW)["runs_created"] == 2
    [a_run], [b_run] = runs_of(tocsin, a), runs_of(tocsin, b)
    finish(tocsin, b_run["id"], "done", now=NOW + minutes(1))  # A's run stays pending
    statuses = {
        t: [i["status"] for i in tocsin.next_fires(t, ID, n=1, now=NOW + hours(1))["items"]]
        for t in (a, b)
    }
    assert statuses == {a: ["waiting_for_active_run"], b: ["due"]}
    assert tocsin.tick(now=NOW + hours(1))["runs_created"] == 1  # B fires; A waits on its own
    assert len(runs_of(tocsin, a)) == 1 and len(runs_of(tocsin, b)) == 2
    # B's new run is active: A's failed run may still be retried (B's fence is not A's)
    finish(tocsin, a_run["id"], "failed", now=NOW + hours(1) + minutes(1))
    retried = tocsin.retry_run(a, a_run["id"], now=NOW + hours(1) + minutes(2))
    assert retried["status"] == "pending"


def test_skips_next_fires_and_preview_of_one_do_not_show_the_other(tocsin: Tocsin) -> None:
    a, b = two_tenants(tocsin, a_every=3600, b_every=60)
    assert tocsin.tick(now=NOW)["runs_created"] == 2
    for table_id in (a, b):
        [run] = runs_of(tocsin, table_id)
        finish(tocsin, run["id"], "done", now=NOW + minutes(1))
    assert tocsin.tick(now=NOW + minutes(30))["runs_created"] == 1  # B's latest minute only
    assert tocsin.skips(a, ID)["total"] == 0
    [skipped] = tocsin.skips(b, ID)["items"]
    assert skipped["reason"] == "coalesced" and skipped["count"] == 29
    at = NOW + minutes(31)
    assert [i["at"] for i in tocsin.next_fires(a, ID, n=1, now=at)["items"]] == [
        "2026-08-27T06:02:13"
    ]
    assert [i["at"] for i in tocsin.next_fires(b, ID, n=1, now=at)["items"]] == [
        "2026-08-27T05:33:13"
    ]
    assert _arm(tocsin, a, NOW + hours(1))["due_now"] is True
    assert _arm(tocsin, b, NOW + hours(1))["due_now"] is False  # its minute run is pending
