"""What a user can see of a tocsin database, read through the facade only, as plain JSON.

Shared by ``scripts/make_upgrade_fixture.py`` (on the code of 058d927, to write the expected
state) and ``test_upgrade_from_058d927.py`` (on today's code, after the migration): both read
the same calls, so the test compares like with like. No table name, no SQL: the run tables may
be restructured underneath, the facade's answers may not lose anything.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, date, datetime
from typing import Any

PAGE = 500


def jsonable(value: Any) -> Any:
    """``value`` with datetimes as UTC ISO strings, tuples as lists, keys as strings."""
    if isinstance(value, datetime):
        aware = value if value.tzinfo is not None else value.replace(tzinfo=UTC)
        return aware.astimezone(UTC).isoformat()
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    return value


def observe(
    t: Any, scope: tuple[str, str], table_ids: Mapping[str, str], now: datetime
) -> dict[str, Any]:
    """The tables ``table_ids`` names (records, triggers, next fires, skips, runs, preview,
    staged changes) and the scope's live ones, the notify feed, every workflow schedule (state,
    tree latches, next fires, fires, skips, history), every workflow run with its step
    receipts, every lane with its attempts and contracts, the tokens, and the IaC export of
    both kinds."""
    kind, scope_id = scope
    tables: dict[str, Any] = {}
    live = [table["id"] for table in t.list_tables(kind, scope_id, limit=PAGE)["items"]]
    for name, tid in table_ids.items():
        table = t.get_table(tid)
        if tid not in live:  # trashed: the facade shows the table only
            tables[name] = {"table": table}
            continue
        triggers: dict[str, Any] = {}
        for trigger in t.get_triggers(tid):
            gid = trigger["id"]
            seen: dict[str, Any] = {"config": trigger}
            if trigger.get("on") == "schedule":
                if trigger["schedule"]["type"] != "date_column_reached":
                    seen["next_fires"] = t.next_fires(tid, gid, n=3, now=now)
                seen["skips"] = t.skips(tid, gid, limit=PAGE)
            listed = t.list_runs(tid, trigger_id=gid, limit=PAGE, now=now)
            seen["runs"] = {  # each run in full: a list may show less of it than one run
                "total": listed["total"],
                "items": [t.get_run(tid, run["id"]) for run in listed["items"]],
            }
            triggers[gid] = seen
        tables[name] = {
            "table": table,
            "records": t.list_records(tid, limit=PAGE),
            "triggers": triggers,
            "preview": t.preview(tid, now=now, next_due=True),
            "staged_changes": t.list_staged_changes(tid, limit=PAGE),
        }
    schedules: dict[str, Any] = {}
    for schedule in t.schedules.list(limit=PAGE)["items"]:
        sid = schedule["id"]
        schedules[sid] = {
            "get": t.schedules.get(sid, now=now),
            "next_fires": t.schedules.next_fires(sid, n=3, now=now),
            "fires": t.schedules.fires(sid, limit=PAGE),
            "skips": t.schedules.skips(sid, limit=PAGE),
            "history": t.schedules.history(sid, limit=PAGE),
        }
    runs = t.workflow_runs(limit=PAGE)
    lanes: dict[str, Any] = {}
    for lane in t.lanes.list():
        lid = lane["id"]
        contracts = t.lanes.contracts(lid, limit=PAGE)
        lanes[lid] = {"listed": lane, "contracts": contracts}
    return jsonable(
        {
            "live_tables": live,
            "tables": tables,
            "tokens": t.list_tokens(),
            "due": t.due(at=now),
            "messages": t.messages(scope_id, limit=PAGE),
            "schedules": schedules,
            "workflow_runs": [
                {"listed": {k: r[k] for k in ("id", "status")}, "get": t.get_workflow_run(r["id"])}
                for r in runs["items"]
            ],
            "workflow_runs_total": runs["total"],
            "lanes": lanes,
            "export": t.export(kind, scope_id),
            "export_schedules": t.export_schedules(),
        }
    )
