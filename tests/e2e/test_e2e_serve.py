"""``tocsin serve`` and ``tocsin demo`` as real processes (SPEC §16).

A fresh database (SQLite file, and a PostgreSQL schema on the PG leg), a free port and a
half-second tick: a token from
``tocsin tokens create``, a table and triggers over HTTP, runs completed by the embedded ticker
and worker, then SIGTERM: the process exits 0 and leaves no run ``running``.
"""

from __future__ import annotations

import http.server
import os
import signal
import subprocess
import threading
import time
import uuid
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import pytest

from support.net import free_port
from support.processes import TOCSIN, ServedProcess, create_token, stop
from support.waiting import wait_for
from tocsin.service import Tocsin
from tocsin.settings import Settings

pytestmark = pytest.mark.slow

WAIT_S = 45.0


def send(http: httpx.Client, method: str, url: str, **kwargs: Any) -> httpx.Response:
    """One request, not retried: while the embedded ticker and worker write, an API write waits
    for SQLite's lock (BEGIN IMMEDIATE under a busy timeout) instead of answering 503."""
    return http.request(method, url, **kwargs)


TRIGGERS = [
    {
        "name": "interval notify",
        "on": "schedule",
        "schedule": {"type": "interval", "every_seconds": 60},
        "actions": [{"type": "notify", "message": "interval fired"}],
    },
    {
        "name": "overdue reminder",
        "on": "schedule",
        "schedule": {"type": "date_column_reached", "column": "Due", "offset_minutes": -1440},
        "actions": [{"type": "notify", "message": "due: $row.Title"}],
    },
]


def test_serve_runs_schedules_and_stops_cleanly_on_sigterm(
    env: dict[str, str], served: tuple[ServedProcess, str]
) -> None:
    proc, base = served
    chatroom = str(uuid.uuid4())
    headers = {"Authorization": f"Bearer {create_token(env, chatroom)}"}
    prefix = f"{base}/private/module/custom_tables/chatroom/{chatroom}"
    with httpx.Client(headers=headers, timeout=10) as http:
        columns = {"Title": "text", "Due": "date"}
        table = send(http, "POST", f"{prefix}/tables", json={"name": "Cases", "columns": columns})
        assert table.status_code == 201, table.text
        table_id = table.json()["id"]
        url = f"{prefix}/tables/{table_id}"
        record = {"data": {"Title": "Lease", "Due": "2020-01-01"}}
        created = send(http, "POST", f"{url}/records", json=record)
        assert created.status_code == 201, created.text
        saved = send(http, "PUT", f"{url}/triggers", json={"triggers": TRIGGERS})
        assert saved.status_code == 200, saved.text

        def all_done() -> list[dict[str, Any]] | None:
            items: list[dict[str, Any]] = http.get(f"{url}/trigger-runs").json()["items"]
            return items if len(items) == 2 and all(r["status"] == "done" for r in items) else None

        runs = wait_for("two completed runs", all_done)
        assert {r["record_id"] is None for r in runs} == {True, False}
        feed = http.get(f"{prefix}/messages").json()
        assert {m["text"] for m in feed["items"]} == {"interval fired", "due: Lease"}
        metrics = http.get(f"{base}/metrics").text
        assert "tocsin_tick_duration_seconds_count" in metrics
        assert 'tocsin_runs{status="done"} 2.0' in metrics
    assert stop(proc) == 0
    tocsin = Tocsin.open(settings=Settings.from_environ(env))
    try:
        assert tocsin.list_runs(table_id, status="running")["total"] == 0
    finally:
        tocsin.close()


def test_demo_seeds_serves_and_completes_runs(tmp_path: Path) -> None:
    """``make run``: the demo always uses its own SQLite file in the working directory."""
    env = {**os.environ, "TOCSIN_ADMIN_TOKEN": "e2e-admin-token-of-32-characters"}
    port = free_port()
    log = (tmp_path / "demo.log").open("wb")
    proc = subprocess.Popen(
        [TOCSIN, "demo", "--port", str(port)],
        env=env,
        cwd=tmp_path,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        base = f"http://127.0.0.1:{port}"
        wait_for("the demo server", lambda: httpx.get(f"{base}/healthz").status_code == 200)
        shell = dict(
            line.removeprefix("export ").split("=", 1)
            for line in (tmp_path / "tocsin-demo.env").read_text().splitlines()
        )
        values = {k: v.strip("'") for k, v in shell.items()}
        headers = {"Authorization": f"Bearer {values['TOKEN']}"}
        runs_url = f"{values['P']}/tables/{values['TABLE']}/trigger-runs"

        def webhook_done() -> bool:
            page = httpx.get(runs_url, headers=headers, params={"status": "done"}).json()
            return page["total"] >= 3 and httpx.get(f"{base}/demo/echo").json()["received"] >= 1

        wait_for("the demo's first runs", webhook_done, timeout=60)
        # the demo workflow: two declared schedules, one every minute (SPEC §12)
        wf_headers = {"Authorization": f"Bearer {values['SCHEDULES_TOKEN']}"}
        listed = httpx.get(f"{base}/api/schedules", headers=wf_headers).json()
        assert {s["id"] for s in listed["items"]} == {
            "wf_demo-digest__every-minute",
            "wf_demo-digest__morning",
        }
        # Studio's one-click sign-in (SPEC §16): a session cookie, then away from the token
        with httpx.Client(follow_redirects=False, timeout=10) as browser:
            signed = browser.get(values["STUDIO"])
            assert signed.status_code == 303
            assert signed.headers["location"] == "/workflows/schedules"
            cookie = signed.headers["set-cookie"]
            assert "HttpOnly" in cookie and "SameSite=strict" in cookie
            assert values["STUDIO"].rsplit("=", 1)[1] not in cookie  # never the token itself
            studio = browser.get(f"{base}/workflows/schedules")
            assert studio.status_code == 200 and "wf_demo-digest__morning" in studio.text
        # the every-minute schedule's first instant is the next minute boundary: fired at that
        # instant on the demo's database (time driven explicitly, as in the Studio tests) rather
        # than waited for on the wall clock; the demo's own worker runs it to success. The
        # embedded ticker firing declared schedules on its own: tests/e2e/test_e2e_workflows.py
        (every_minute,) = [s for s in listed["items"] if s["id"].endswith("__every-minute")]
        due = datetime.fromisoformat(every_minute["next_fire_at"].replace("Z", "+00:00"))
        demo_db = f"sqlite:///{tmp_path / 'tocsin-demo.db'}"
        tocsin = Tocsin.open(demo_db, settings=Settings(database_url=demo_db))
        try:
            tocsin.fire_schedules(now=due)  # 0 if the demo's ticker got there first
        finally:
            tocsin.close()
        fires_url = f"{base}/api/schedules/wf_demo-digest__every-minute/fires"

        def workflow_ran() -> bool:
            items = httpx.get(fires_url, headers=wf_headers).json()["items"]
            return any(f["run_status"] == "success" for f in items)

        wait_for("the demo workflow's first run", workflow_ran, timeout=75)
        admin = {"X-ADMIN-TOKEN": values["ADMIN"]}
        tick = httpx.post(f"{base}/root/custom-tables/run-due-triggers", headers=admin)
        assert tick.status_code == 200
        assert stop(proc, signal.SIGINT) == 0  # Ctrl-C, as the README says
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=30)  # reaped: no zombie, no ResourceWarning
        log.close()
        print((tmp_path / "demo.log").read_text())


def test_tick_and_worker_as_separate_processes(env: dict[str, str], tmp_path: Path) -> None:
    """``tocsin tick`` inserts a pending run; ``tocsin worker`` executes it and stops on SIGTERM."""
    settings = Settings.from_environ(env)
    tocsin = Tocsin.open(settings=settings)
    try:
        table = tocsin.create_table(
            scope="chatroom", scope_id=str(uuid.uuid4()), name="T", columns={}
        )
        tocsin.set_triggers(table["id"], [TRIGGERS[0]])
    finally:
        tocsin.close()
    tick = subprocess.run([TOCSIN, "tick"], env=env, check=True, capture_output=True, text=True)
    assert '"runs_created": 1' in tick.stdout
    log = (tmp_path / "worker.log").open("wb")
    proc = subprocess.Popen([TOCSIN, "worker"], env=env, stdout=log, stderr=subprocess.STDOUT)
    tocsin = Tocsin.open(settings=settings)
    try:
        wait_for(
            "the worker",
            lambda: tocsin.list_runs(table["id"], status="done")["total"] == 1,
        )
        assert stop(proc) == 0
        assert tocsin.list_runs(table["id"], status="running")["total"] == 0
    finally:
        tocsin.close()
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=30)  # reaped: no zombie, no ResourceWarning
        log.close()
        print((tmp_path / "worker.log").read_text())


class SlowHook(http.server.BaseHTTPRequestHandler):
    """A webhook target that takes a while to answer, so SIGTERM lands mid-action."""

    received = threading.Event()
    answered = threading.Event()

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        SlowHook.received.set()
        time.sleep(1.5)
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b"{}")
        SlowHook.answered.set()

    def log_message(self, *args: Any) -> None:
        return


def test_sigterm_mid_action_lets_the_action_finish(
    env: dict[str, str], served: tuple[ServedProcess, str]
) -> None:
    proc, base = served
    SlowHook.received.clear()
    SlowHook.answered.clear()
    hook = http.server.ThreadingHTTPServer(("127.0.0.1", 0), SlowHook)
    threading.Thread(target=hook.serve_forever, daemon=True).start()
    chatroom = str(uuid.uuid4())
    headers = {"Authorization": f"Bearer {create_token(env, chatroom)}"}
    prefix = f"{base}/private/module/custom_tables/chatroom/{chatroom}"
    trigger = {
        "name": "slow webhook, then notify",
        "on": "schedule",
        "schedule": {"type": "interval", "every_seconds": 60},
        "actions": [
            {"type": "webhook", "url": f"http://127.0.0.1:{hook.server_port}/hook"},
            {"type": "notify", "message": "after the hook"},
        ],
    }
    try:
        with httpx.Client(headers=headers, timeout=10) as client:
            table = send(client, "POST", f"{prefix}/tables", json={"name": "T", "columns": {}})
            table_id = table.json()["id"]
            saved = send(
                client, "PUT", f"{prefix}/tables/{table_id}/triggers", json={"triggers": [trigger]}
            )
            assert saved.status_code == 200, saved.text
        assert SlowHook.received.wait(WAIT_S), "the webhook was never called"
        assert stop(proc) == 0
        assert SlowHook.answered.is_set()  # the in-flight action ran to its end
    finally:
        hook.shutdown()
        hook.server_close()
    tocsin = Tocsin.open(settings=Settings.from_environ(env))
    try:
        assert tocsin.list_runs(table_id, status="running")["total"] == 0
        (run,) = tocsin.list_runs(table_id)["items"]
        assert run["action_results"][0]["ok"] is True
    finally:
        tocsin.close()
