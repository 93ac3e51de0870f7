"""One locked table stalls only what reads it (a real ``tocsin serve`` on PostgreSQL).

Another session holds ``LOCK TABLE records IN ACCESS EXCLUSIVE MODE`` in the test's schema. The
API, the worker and the ticker have pools of their own (``tocsin.store.pools``), each with
PostgreSQL timeouts (defaults here: the API's ``lock_timeout`` 2 s, the worker's 30 s). While the
worker's 16 run threads wait on the lock (each holding a connection of the worker's pool), a tick
asked over HTTP skips the locked table and answers 200 with its counts, routes that do not read
``records`` answer 200 at once, and a record write answers 503 with ``Retry-After`` within 5 s.
Once the lock goes, the runs finish and the next tick takes the table it skipped.
"""

from __future__ import annotations

import os
import subprocess
import threading
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest
from test_e2e_serve import TOCSIN, free_port, stop, wait_for

from tocsin import messages
from tocsin.service import Tocsin

pytestmark = [pytest.mark.slow, pytest.mark.pg]

ADMIN = "locks-admin-token-0123456789abcdef"
WRITERS = 16  # runs that wait on the lock: more than the one shared pool of old had room for
HOLD_S = 10.0  # the lock goes by itself after this long at the latest

WAITING = "SELECT count(*) FROM pg_locks WHERE NOT granted AND relation = 'records'::regclass"


def _clock(actions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    schedule = {"type": "interval", "every_seconds": 3600}
    return [{"name": "clock", "on": "schedule", "schedule": schedule, "actions": actions}]


DATED = [
    {
        "name": "due",
        "on": "schedule",
        "schedule": {"type": "date_column_reached", "column": "Due"},
        "actions": [{"type": "notify", "message": "due"}],
    }
]
WRITE = [{"type": "create_record", "values": {"Title": "made"}}]


def timed(http: httpx.Client, method: str, url: str, **kwargs: Any) -> tuple[httpx.Response, float]:
    started = time.monotonic()
    resp = http.request(method, url, **kwargs)
    return resp, time.monotonic() - started


def waiting(conn: psycopg.Connection[Any]) -> int:
    row = conn.execute(WAITING).fetchone()
    return int(row[0]) if row else 0


@pytest.mark.parametrize("backend", ["postgresql"])
def test_a_locked_records_table_stalls_only_what_reads_it(
    tocsin: Tocsin, store_url: str, tmp_path: Path
) -> None:
    env = {
        **os.environ,
        "TOCSIN_DATABASE_URL": store_url,
        "TOCSIN_ADMIN_TOKEN": ADMIN,
        "TOCSIN_TICK_EVERY_S": "3600",  # its first tick at start; the test asks for the others
        "TOCSIN_WORKER_CONCURRENCY": str(WRITERS),
        "TOCSIN_MAX_RUNNING_PER_SCOPE": str(WRITERS),  # one chatroom's runs take every slot
    }
    port = free_port()
    log = (tmp_path / "serve.log").open("wb")
    proc = subprocess.Popen(
        [TOCSIN, "serve", "--port", str(port)], env=env, stdout=log, stderr=subprocess.STDOUT
    )
    base = f"http://127.0.0.1:{port}"
    holder: psycopg.Connection[Any] | None = None
    timer: threading.Timer | None = None
    try:
        wait_for("the server", lambda: httpx.get(f"{base}/healthz").status_code == 200)
        wait_for(  # the embedded ticker's first tick is over: the tables below wait for ours
            "the first tick",
            lambda: "tocsin_tick_duration_seconds_count 1.0" in httpx.get(f"{base}/metrics").text,
        )
        chatroom = str(uuid.uuid4())
        now = datetime.now(UTC)
        token = tocsin.create_token(scope="chatroom", scope_id=chatroom, role="moderator")
        reader = tocsin.create_token(permissions=["schedules:read"])
        dated = str(tocsin.create_table("chatroom", chatroom, "D", {"Due": "datetime"})["id"])
        tocsin.set_triggers(dated, DATED)
        tocsin.insert_record(dated, {"Due": (now - timedelta(hours=1)).isoformat()})
        writers = []
        for i in range(WRITERS):
            table = tocsin.create_table("chatroom", chatroom, f"W{i}", {"Title": "text"})
            tocsin.set_triggers(str(table["id"]), _clock(WRITE))
            writers.append(str(table["id"]))

        holder = psycopg.connect(store_url, connect_timeout=5)  # the test's schema
        holder.execute("LOCK TABLE records IN ACCESS EXCLUSIVE MODE")
        locked_at = time.monotonic()
        timer = threading.Timer(HOLD_S, holder.rollback)  # never longer than HOLD_S
        timer.start()
        p = f"{base}/private/module/custom_tables/chatroom/{chatroom}"
        auth = {"Authorization": f"Bearer {token}"}
        with httpx.Client(timeout=30) as http:
            # a tick asked over HTTP: the dated table reads records, it is skipped (SPEC §6)
            tick, took = timed(
                http,
                "POST",
                f"{base}/root/custom-tables/run-due-triggers",
                headers={"X-ADMIN-TOKEN": ADMIN},
            )
            assert tick.status_code == 200, tick.text
            assert took < 8, took  # the API's lock_timeout (2 s), for the batch then the table
            counts = tick.json()
            assert (counts["tables_scanned"], counts["runs_created"]) == (WRITERS, WRITERS)

            # every run thread of the worker waits on the lock, each holding a connection
            wait_for(
                "the worker's runs to wait on the lock",
                lambda: waiting(holder) >= WRITERS,
                timeout=5,
            )
            for url, headers in (
                (f"{p}/tables", auth),
                (f"{base}/api/schedules", {"Authorization": f"Bearer {reader}"}),
                (f"{base}/readyz", {}),
                (f"{base}/metrics", {}),
            ):
                resp, took = timed(http, "GET", url, headers=headers)
                assert resp.status_code == 200, (url, resp.text)
                assert took < 2, (url, took)

            write, took = timed(
                http, "POST", f"{p}/tables/{dated}/records", headers=auth, json={"data": {}}
            )
            assert write.status_code == 503, write.text
            assert took < 5, took
            assert write.headers["Retry-After"] == "1"
            assert write.json() == {  # one line: not the SQL the driver showed under it
                "detail": messages.transient_conflict("canceling statement due to lock timeout")
            }
            assert time.monotonic() - locked_at < HOLD_S  # all of it while the lock was held

            holder.rollback()  # the lock goes: the waiting runs write, the skipped table ticks
            wait_for(
                "the runs to finish",
                lambda: all(
                    [r["status"] for r in tocsin.list_runs(w)["items"]] == ["done"] for w in writers
                ),
                timeout=10,
            )
            later = http.post(
                f"{base}/root/custom-tables/run-due-triggers", headers={"X-ADMIN-TOKEN": ADMIN}
            )
            assert later.status_code == 200, later.text
            assert len(tocsin.list_runs(dated)["items"]) == 1
        assert stop(proc) == 0
    finally:
        if timer is not None:
            timer.cancel()
        if holder is not None:
            holder.close()
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=30)
        log.close()
        print((tmp_path / "serve.log").read_text()[-20000:])  # shown when the test fails
