"""A real ``tocsin serve`` on a SQLite database that fills up while a run is in flight.

The database is capped with ``TOCSIN_SQLITE_MAX_BYTES`` and filled by the test's own
connection (``support.storage.Filler``) while the run's first action (a webhook to a gated
receiver) is in flight; its second action (a ``notify`` whose message needs new pages) then
cannot be written. Meanwhile: ``/readyz`` 503, a record POST 507 with the exact text (never 500,
never a reset connection), the run ``running``. Once the filler is deleted: ``/readyz`` 200, the
run ``done`` without a restart, the POST 201, and the log holds the outage as two lines.
"""

from __future__ import annotations

import http.server
import json
import os
import subprocess
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from support.net import free_port
from support.processes import TOCSIN, create_token, stop
from support.storage import CAP_BYTES, Filler
from support.waiting import wait_for
from tocsin import messages

pytestmark = pytest.mark.slow


@pytest.fixture
def backend() -> str:
    return "sqlite"


class GatedReceiver(http.server.ThreadingHTTPServer):
    """Answers each POST 200 once ``gate`` is set; ``arrived`` is set by the first."""

    def __init__(self) -> None:
        self.arrived, self.gate = threading.Event(), threading.Event()
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length", 0)))
                receiver.arrived.set()
                receiver.gate.wait(30)
                self.send_response(200)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, *args: Any) -> None:
                pass

        super().__init__(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server_address[1]}/hook"


@pytest.fixture
def receiver() -> Iterator[GatedReceiver]:
    server = GatedReceiver()
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server
    server.gate.set()
    server.shutdown()
    server.server_close()


def test_serve_rides_out_a_full_database_and_finishes_the_run_once_space_is_freed(
    store_url: str, tmp_path: Path, receiver: GatedReceiver
) -> None:
    env = {
        **os.environ,
        "TOCSIN_DATABASE_URL": store_url,
        "TOCSIN_TICK_EVERY_S": "0.5",
        "TOCSIN_ADMIN_TOKEN": "e2e-admin-token-of-32-characters",
        "TOCSIN_OUTBOUND_ALLOW": "127.0.0.1",
        "TOCSIN_SQLITE_MAX_BYTES": str(CAP_BYTES),
        "TOCSIN_DB_BACKOFF_MAX_S": "0.5",
    }
    chatroom = str(uuid.uuid4())
    port = free_port()
    log_path = tmp_path / "serve.log"
    log = log_path.open("wb")
    proc = subprocess.Popen(
        [TOCSIN, "serve", "--port", str(port)], env=env, stdout=log, stderr=subprocess.STDOUT
    )
    base = f"http://127.0.0.1:{port}"
    disk = Filler(store_url)
    try:
        wait_for("the server", lambda: httpx.get(f"{base}/healthz").status_code == 200)
        headers = {"Authorization": f"Bearer {create_token(env, chatroom)}"}
        tables = f"{base}/private/module/custom_tables/chatroom/{chatroom}/tables"
        with httpx.Client(headers=headers, timeout=30) as http_client:
            created = http_client.post(tables, json={"name": "T", "columns": {"Title": "text"}})
            assert created.status_code == 201, created.text
            url = f"{tables}/{created.json()['id']}"
            trigger = {
                "name": "hook then notify",
                "on": "created",
                "actions": [
                    {"type": "webhook", "url": receiver.url},
                    {"type": "notify", "message": "n" * 20_000},
                ],
            }
            saved = http_client.put(f"{url}/triggers", json={"triggers": [trigger]})
            assert saved.status_code == 200, saved.text
            first = http_client.post(f"{url}/records", json={"data": {"Title": "first"}})
            assert first.status_code == 201, first.text
            assert receiver.arrived.wait(30)  # the run is in flight, at its first action

            disk.fill()
            receiver.gate.set()  # the webhook answers; the notify cannot be written
            ready = f"{base}/readyz"
            wait_for("readyz 503", lambda: http_client.get(ready).status_code == 503)
            assert http_client.get(ready).json() == {"detail": messages.STORAGE_FULL}
            big = {"data": {"Title": "x" * 20_000}}
            refused = http_client.post(f"{url}/records", json=big)
            assert refused.status_code == 507, refused.text
            assert refused.json() == {"detail": messages.STORAGE_FULL}
            (run,) = http_client.get(f"{url}/trigger-runs").json()["items"]
            assert run["status"] == "running"

            disk.free()

            def done() -> bool:
                items = http_client.get(f"{url}/trigger-runs").json()["items"]
                return [r["status"] for r in items] == ["done"]

            wait_for("the run done", done, timeout=20)
            assert http_client.get(ready).status_code == 200
            assert http_client.post(f"{url}/records", json=big).status_code == 201
        assert stop(proc) == 0
    finally:
        disk.close()
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=30)
        log.close()
        print(log_path.read_text()[-6000:])
    entries = [
        json.loads(line) for line in log_path.read_text().splitlines() if line.startswith("{")
    ]
    texts = [e["msg"] for e in entries]
    assert "unhandled error" not in texts  # no request ended in a 500
    outage = [e for e in entries if e["msg"].startswith(("database unavailable", "database back"))]
    assert [e["msg"].split(" (")[0] for e in outage][:1] == ["database unavailable"]
    assert len(outage) == 2 and outage[1]["msg"].startswith("database back after ")
    assert sum("exc" in e for e in outage) == 1
