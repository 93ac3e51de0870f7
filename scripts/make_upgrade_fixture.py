"""Write the upgrade fixtures of ``tests/store/test_upgrade_from_058d927.py``.

Run it with the code of commit 058d927 (its ``src`` first on the path), from the repository root:

    git worktree add --detach /tmp/base058 058d927
    PYTHONPATH=/tmp/base058/src .venv/bin/python scripts/make_upgrade_fixture.py \\
        --pg postgresql://postgres@127.0.0.1:5432/postgres

It populates a database through 058d927's facade only (``tocsin.Tocsin``, explicit ``now=``),
once on SQLite and once on PostgreSQL, with the app of ``tests/store/upgrade_app.py``, and
writes into ``tests/store/fixtures/``:

- ``upgrade_058d927.sqlite``: the SQLite database (checkpointed, vacuumed into 1 KiB pages);
- ``upgrade_058d927.pg.sql``: ``pg_dump --no-owner --no-privileges --inserts`` of the schema
  ``upgrade058`` of a database this script creates and drops;
- ``upgrade_058d927.json``: per backend, what ``upgrade_observe.observe`` reads at the end of
  the population (``state``) and after ``upgrade_app.carry_on`` ran (``after``, with
  ``carry_on``'s own answers; on a copy of the SQLite file, on PostgreSQL once the dump is
  written), plus the ids, tokens and signing secret it made (``made``).

The ids are random, so every run rewrites all three files.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path
from types import ModuleType
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import psycopg

ROOT = Path(__file__).resolve().parent.parent
HERE = ROOT / "tests" / "store"
OUT = HERE / "fixtures"
SCHEMA = "upgrade058"
DATABASE = "tocsin_upgrade_fixture"
BASE_HEAD = "0027"  # 058d927's newest migration


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, HERE / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


app = _load("upgrade_app")
observe = _load("upgrade_observe")

from sqlalchemy import text  # noqa: E402

from tocsin import Tocsin  # noqa: E402
from tocsin.settings import Settings  # noqa: E402
from tocsin.store import migrate  # noqa: E402

at = app.at
CHAT_KIND, CHAT = app.CHAT_SCOPE

RETRY = {"max_attempts": 2, "backoff_s": 3600, "factor": 2, "max_backoff_s": 3600, "jitter": False}


def _notify(message: str) -> list[dict[str, Any]]:
    return [{"type": "notify", "message": message}]


def documents(table_id: str) -> list[dict[str, Any]]:
    """The IaC bundle applied at T0: the Cases table's triggers (every kind) and one imperative
    workflow schedules with a tree: a time leaf AND an event leaf on Cases; a time leaf OR a
    workflow's success."""
    cases = [
        {
            "id": "trg_date",
            "name": "an hour before Due",
            "on": "schedule",
            "schedule": {"type": "date_column_reached", "column": "Due", "offset_minutes": -60},
            "when": [{"column": "Status", "op": "neq", "value": "Done"}],
            "actions": _notify("due soon: $row.Title"),
        },
        {
            "id": "trg_interval",
            "name": "hourly",
            "on": "schedule",
            "schedule": {"type": "interval", "every_seconds": 3600},
            "actions": _notify("interval $run.scheduled_for"),
        },
        {
            "id": "trg_daily",
            "name": "daily at nine",
            "on": "schedule",
            "schedule": {"type": "daily", "at": "09:00"},
            "actions": _notify("daily $run.scheduled_for"),
        },
        {
            "id": "trg_cron",
            "name": "half-hourly in Berlin",
            "on": "schedule",
            "schedule": {"type": "cron", "expression": "*/30 * * * *", "timezone": "Europe/Berlin"},
            "actions": _notify("cron $run.scheduled_for"),
        },
        {
            "id": "trg_paused",
            "name": "paused interval",
            "on": "schedule",
            "schedule": {"type": "interval", "every_seconds": 1800},
            "actions": _notify("paused $run.scheduled_for"),
        },
        {
            "id": "trg_created",
            "name": "greet",
            "on": "created",
            "when": [{"column": "Status", "op": "neq", "value": "Done"}],
            "actions": _notify("new case: $row.Title"),
        },
        {
            "id": "trg_trashed",
            "name": "start a workflow",
            "on": "deleted",
            "actions": [
                {"type": "start_workflow", "workflow_id": "upg-manual", "input": {"mode": "ok"}}
            ],
        },
        {
            "id": "trg_restored",
            "name": "restored",
            "on": "restored",
            "actions": [
                {"type": "invoke_command", "command": app.COMMAND, "inputs": {"t": "$row.Title"}}
            ],
        },
        {
            "id": "trg_escalate",
            "name": "escalate",
            "on": "updated",
            "changed": ["Status"],
            "when": [{"column": "Status", "op": "eq", "value": "Escalated"}],
            "retry": RETRY,
            "on_failure": _notify("escalation failed: $run.error"),
            "actions": [
                {"type": "notify", "message": "escalating $row.Title"},
                {"type": "webhook", "url": "http://10.0.0.1/hook"},  # refused: private address
            ],
        },
    ]
    tree = {
        "all": [
            {"cron": "0 12 * * *", "timezone": "UTC"},
            {"event": "table_updated", "table_id": table_id},
        ]
    }
    schedule = {
        "workflow": "upg-manual",
        "id": app.IMPERATIVE_SCHEDULE,
        "trigger": tree,
        "timezone": "UTC",
        "input_data": {"mode": "ok"},
    }
    either = {  # fires when upg-twostep succeeds (or on New Year)
        "workflow": "upg-manual",
        "id": app.EITHER_SCHEDULE,
        "trigger": {
            "any": [
                {"cron": "0 0 1 1 *", "timezone": "UTC"},
                {"event": "workflow_succeeded", "workflow_id": "upg-twostep"},
            ]
        },
        "timezone": "UTC",
        "input_data": {"mode": "ok"},
    }
    return [{"table": "Cases", **c} for c in cases] + [schedule, either]


def record(title: str, due: str, status: str = "Open") -> dict[str, Any]:
    return {"Title": title, "Due": due, "Status": status}


def populate(t: Tocsin) -> dict[str, Any]:
    """The scenario, hour by hour from T0 (2026-09-01 00:00 UTC) to 09:05 (``app.FINAL``)."""
    cases = t.create_table(
        CHAT_KIND,
        CHAT,
        "Cases",
        {"Title": "text", "Due": "datetime", "Status": "text"},
        now=at(0),
    )["id"]
    t.register_command(app.COMMAND, app.command)
    t.apply(CHAT_KIND, CHAT, documents(cases), now=at(0))
    rows = {
        "r1": record("first", "2026-09-01T06:00"),
        "r2": record("second", "2026-09-02T06:00"),
        "r3": record("far", "2026-09-30T06:00"),
        "r4": record("closed", "2026-09-01T03:00", "Done"),
    }
    ids = {k: t.insert_record(cases, v, now=at(0))["id"] for k, v in rows.items()}
    # a table whose writes wait for approval: one approved, one rejected, one pending
    approvals = t.create_table(
        CHAT_KIND, CHAT, "Approvals", {"Title": "text"}, requires_approval=True, now=at(0)
    )["id"]
    t.set_triggers(
        approvals,
        [
            {
                "id": "trg_mark",
                "name": "mark",
                "on": "created",
                "actions": [
                    {"type": "update_record", "record": "$row", "values": {"Title": "seen"}}
                ],
            }
        ],
        now=at(0),
    )
    # a table trashed at 01:30 with an interval trigger (restored by ``carry_on``)
    old = t.create_table(CHAT_KIND, CHAT, "Old", {"Title": "text"}, now=at(0))["id"]
    old_trigger = {
        "id": "trg_old",
        "name": "old hourly",
        "on": "schedule",
        "schedule": {"type": "interval", "every_seconds": 3600},
        "actions": _notify("old $run.scheduled_for"),
    }
    t.set_triggers(old, [old_trigger], now=at(0))
    token = t.create_token(scope=CHAT_KIND, scope_id=CHAT, role="moderator", now=at(0))
    reader = t.create_token(permissions=["schedules:read"], now=at(0))
    revoked = t.create_token(scope=CHAT_KIND, scope_id=CHAT, role="member", now=at(0))
    (revoked_id,) = [
        k["id"] for k in t.list_tokens() if k["scope"] == CHAT_KIND and k["role"] == "member"
    ]
    expired = t.create_token(
        scope=CHAT_KIND, scope_id=CHAT, role="moderator", now=at(0), expires_at=at(1)
    )
    t.revoke_token(revoked_id, now=at(0, 1))
    secret = t.rotate_secret(CHAT_KIND, CHAT, now=at(0))
    synced = t.sync_schedules(now=at(0))
    t.tick(now=at(0))  # anchors every clock
    t.work(now=at(0))
    t.schedules.pause("wf_upg-paused", now=at(0, 5))
    t.pause_trigger(cases, "trg_paused", now=at(0, 5))
    # manual workflow runs in every status
    t.start_workflow("upg-manual", {"mode": "ok"}, now=at(0, 10))  # success: latches upg-tree
    t.start_workflow("upg-manual", {"mode": "fail"}, now=at(0, 11))
    t.start_workflow("upg-manual", {"mode": "suspend"}, now=at(0, 12))
    doomed = t.start_workflow("upg-manual", {"mode": "ok"}, now=at(0, 13), wait=False)
    t.cancel_workflow_run(doomed["id"], now=at(0, 13))
    app.FLAKY["fail"] = True
    flaky = t.start_workflow("upg-twostep", {"mode": "ok"}, now=at(0, 14))
    app.FLAKY["fail"] = False
    t.retry_workflow_run(flaky["id"], now=at(0, 15))  # succeeds; upg-first not run again
    for title in ("a", "b", "c"):
        t.insert_record(approvals, {"Title": title}, now=at(0, 20))
    t.work(now=at(0, 21))  # three staged changes
    changes = t.list_staged_changes(approvals)["items"]
    t.approve_change(approvals, changes[0]["id"], now=at(0, 30))
    t.reject_change(approvals, changes[1]["id"], now=at(0, 31))
    t.tick(now=at(1, 5))  # upg-hourly 01:00; interval 01:00; cron 01:00 (00:30 coalesced)
    t.trash_table(old, now=at(1, 30))
    t.trash_record(cases, ids["r3"], now=at(1, 40))
    t.tick(now=at(2, 5))  # upg-hourly: active_run; upg-tree fires 02:00 (latched)
    t.work(now=at(2, 6))
    t.pause_trigger(cases, "trg_cron", now=at(2, 10))
    t.resume_trigger(cases, "trg_cron", now=at(4, 10))  # paused 02:30 .. 04:00
    # down from 02:06 to 05:10: upg-hourly catches up 04:00 and 05:00; the lane fires 04:00
    t.tick(now=at(5, 10))
    t.work(now=at(5, 11))
    t.start_workflow("upg-manual", {"mode": "ok"}, now=at(5, 20))  # latches upg-tree again
    t.update_record(cases, ids["r2"], {"Status": "Escalated"}, now=at(5, 30))
    t.work(now=at(5, 31))  # the webhook is refused: attempt 1 failed, back to pending
    t.tick(now=at(6, 10))  # upg-tree fires 06:00; the imperative tree latches its event
    t.work(now=at(6, 11))
    t.work(now=at(6, 40))  # attempt 2 failed: failed, on_failure notifies
    (escalated,) = t.list_runs(cases, trigger_id="trg_escalate", now=at(6, 40))["items"]
    t.retry_run(cases, escalated["id"], now=at(6, 45))
    t.work(now=at(6, 46))  # the manual retry fails again
    t.run_trigger(cases, "trg_interval", now=at(6, 50))
    backfill = t.schedules.backfill("wf_upg-hourly", at(-3), at(-1), now=at(6, 55))
    t.work(now=at(6, 56))
    # the lane: manual windows of every decision
    lane = app.LANE_ID
    boom = t.lanes.trigger(lane, window=(at(-1), at(0)), now=at(7))  # ready, handler fails
    t.lanes.trigger(lane, kind="retry", run_id=boom["run_id"], now=at(7, 1))
    t.lanes.trigger(lane, window=(at(1), at(2)), now=at(7, 2))  # rejected: overlap
    t.lanes.trigger(lane, kind="scheduled", scheduled_for=at(4), now=at(7, 3))  # ignored
    t.lanes.trigger(lane, window=(at(-16), at(-15)), now=at(7, 4))  # 08:00: stopped
    t.lanes.trigger(lane, window=(at(-20), at(-19)), now=at(7, 5))  # 04:00: noop
    t.start_workflow("upg-manual", {"mode": "ok"}, now=at(8, 30))  # latched until 10:00
    t.update_record(cases, ids["r1"], {"Status": "Escalated"}, now=at(8, 40))
    t.work(now=at(8, 41))  # attempt 1 failed: pending until 09:41
    # a worker dies in a table run's command, then in a workflow step: both stay running
    t.restore_record(cases, ids["r3"], now=at(8, 45))
    crash(t, at(8, 45))
    t.start_workflow("upg-manual", {"mode": "crash"}, now=at(8, 46), wait=False)
    crash(t, at(8, 46))
    t.start_workflow("upg-manual", {"mode": "ok"}, now=at(9), wait=False)  # pending
    ids["r5"] = t.insert_record(cases, record("late", "2026-09-01T09:30"), now=at(9))["id"]
    final = t.tick(now=app.FINAL)  # fires every clock; left pending
    # its event waits in the outbox for the next tick (sch_upgrade_either fires then)
    t.start_workflow("upg-twostep", {"mode": "ok"}, now=app.FINAL)
    return {
        "table_id": cases,
        "tables": {"Cases": cases, "Approvals": approvals, "Old": old},
        "records": ids,
        "token": token,
        "reader_token": reader,
        "revoked_token": revoked,
        "expired_token": expired,
        "signing_secret": secret,
        "backfill": backfill,
        "synced": synced,
        "final_tick": final,
    }


def crash(t: Tocsin, now: Any) -> None:
    """``work`` the one claimable run, dying in it (``app.CRASH``)."""
    app.CRASH["on"] = True
    try:
        t.work(now=now)
    except KeyboardInterrupt:
        pass
    else:
        raise AssertionError("the run did not reach its crash")
    finally:
        app.CRASH["on"] = False


def ledger(t: Tocsin) -> list[list[str]]:
    """Every occurrence 058d927's ledger holds, ``[namespace, key, identity]`` (namespace: a
    table id, or ``workflow`` / ``backfill`` / ``lane``): read with 058d927's own schema, which
    this script is bound to."""
    with t.store.read() as tx:
        rows = tx.conn.execute(
            text("SELECT table_id, trigger_id, identity FROM occurrence_ledger")
        ).all()
    return sorted([str(v) for v in row] for row in rows)


def settings(url: str) -> Settings:
    return Settings(
        database_url=url,
        admin_token="upgrade-fixture-admin-token",
        stuck_after_s=app.STUCK_AFTER_S,
    )


def open_app(url: str) -> Tocsin:
    return Tocsin.open(url, settings=settings(url), workflows=app.WORKFLOWS, lanes=app.LANES)


def build(url: str, copy: Any) -> dict[str, Any]:
    """Populate ``url``, read its state; ``copy()`` returns the URL of a copy to carry on."""
    t = open_app(url)
    try:
        made = populate(t)
        made["ledger"] = ledger(t)
        state = observe.observe(t, app.CHAT_SCOPE, made["tables"], app.FINAL)
    finally:
        t.close()
    t = open_app(copy())
    try:
        answers = app.carry_on(t, made["tables"])
        after = observe.observe(t, app.CHAT_SCOPE, made["tables"], app.END)
    finally:
        t.close()
    return observe.jsonable({"made": made, "state": state, "carry_on": answers, "after": after})


def build_sqlite(work: Path) -> dict[str, Any]:
    db = work / "populated.sqlite"
    target = OUT / "upgrade_058d927.sqlite"

    def copy() -> str:
        con = sqlite3.connect(db)
        con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        con.execute("PRAGMA journal_mode=DELETE")
        con.execute("PRAGMA page_size=1024")  # most tables and indexes fill one page or less
        con.execute("VACUUM")
        con.close()
        shutil.copyfile(db, target)
        carried = work / "carried.sqlite"
        shutil.copyfile(db, carried)
        return f"sqlite:///{carried}"

    return build(f"sqlite:///{db}", copy)


def _with_db(url: str, database: str) -> str:
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path=f"/{database}"))


def build_pg(admin_url: str) -> dict[str, Any]:
    admin = admin_url.replace("postgresql+psycopg://", "postgresql://")
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {DATABASE}")
        conn.execute(f"CREATE DATABASE {DATABASE}")
    dsn = _with_db(admin, DATABASE)
    try:
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute(f"CREATE SCHEMA {SCHEMA}")
        url = f"{dsn.replace('postgresql://', 'postgresql+psycopg://')}"
        url += f"?options=-csearch_path%3D{SCHEMA}"

        def copy() -> str:
            dump = subprocess.run(
                [
                    "pg_dump",
                    "--no-owner",
                    "--no-privileges",
                    "--inserts",
                    "--schema",
                    SCHEMA,
                    dsn,
                ],
                check=True,
                capture_output=True,
                text=True,
            ).stdout
            (OUT / "upgrade_058d927.pg.sql").write_text(dump)
            return url  # carried on in place: the dump is written

        return build(url, copy)
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {DATABASE} WITH (FORCE)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pg", required=True, help="a PostgreSQL URL of a maintenance database")
    args = parser.parse_args()
    if migrate.HEAD_REVISION != BASE_HEAD:
        sys.exit(f"run with the code of 058d927 first on PYTHONPATH (head {migrate.HEAD_REVISION})")
    OUT.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory() as work:
        expected = {"sqlite": build_sqlite(Path(work)), "postgresql": build_pg(args.pg)}
    path = OUT / "upgrade_058d927.json"
    path.write_text(json.dumps(expected, separators=(",", ":"), sort_keys=True) + "\n")
    for name in sorted(OUT.iterdir()):
        print(f"{name.relative_to(ROOT)}: {name.stat().st_size} bytes")


if __name__ == "__main__":
    main()
