"""A PostgreSQL outage answers 503, not 500, and tocsin recovers by itself.

The test starts a PRIVATE PostgreSQL cluster (``initdb`` and ``pg_ctl`` from
``/usr/lib/postgresql/15/bin``, or ``TOCSIN_TEST_PG_BIN``) in a temporary directory on a port of
its own, runs a real ``tocsin serve`` against it, stops the cluster (every API call → 503 with
``Retry-After``, ``/readyz`` → 503, ``/healthz`` still 200), starts it again (→ 200 without
restarting tocsin). Run as root, the cluster runs as the ``postgres`` user (``runuser``).
Without the binaries it skips, except under ``CI=true`` where it fails.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from support.net import free_port
from support.processes import TOCSIN, create_token, stop
from support.waiting import wait_for
from tocsin import messages

pytestmark = [pytest.mark.slow, pytest.mark.pg]

PG_BIN = Path(os.environ.get("TOCSIN_TEST_PG_BIN", "/usr/lib/postgresql/15/bin"))
ADMIN = "pg-outage-admin-token-0123456789"


class Cluster:
    """A throwaway PostgreSQL cluster: ``initdb`` once, then ``start``/``stop`` at will."""

    def __init__(self, root: Path, port: int) -> None:
        self.data, self.port, self.log = root / "data", port, root / "postgres.log"
        self.root = root
        self.as_postgres = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []

    def run(self, *args: str) -> None:
        subprocess.run([*self.as_postgres, *args], check=True, capture_output=True, timeout=120)

    def init(self) -> None:
        if self.as_postgres:  # the cluster's files belong to the user that runs it
            shutil.chown(self.root, "postgres", "postgres")
        self.run(str(PG_BIN / "initdb"), "-D", str(self.data), "-A", "trust", "-U", "postgres")

    def start(self) -> None:
        options = f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c fsync=off"
        self.run(
            str(PG_BIN / "pg_ctl"),
            "-D",
            str(self.data),
            "-o",
            options,
            "-l",
            str(self.log),
            "-w",
            "start",
        )

    def stop(self) -> None:
        self.run(str(PG_BIN / "pg_ctl"), "-D", str(self.data), "-m", "fast", "-w", "stop")

    @property
    def url(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"


def _unavailable_reason() -> str | None:
    if not (PG_BIN / "initdb").exists():
        return f"no PostgreSQL binaries in {PG_BIN} (set TOCSIN_TEST_PG_BIN)"
    if os.geteuid() == 0 and shutil.which("runuser") is None:
        return "running as root needs runuser to start PostgreSQL as the postgres user"
    return None


@pytest.fixture
def cluster() -> Iterator[Cluster]:
    reason = _unavailable_reason()
    if reason is not None:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"CI=true: {reason}", pytrace=False)
        pytest.skip(reason)
    root = Path(tempfile.mkdtemp(prefix="tocsin-pg-", dir="/tmp"))  # reachable by postgres
    pg = Cluster(root, free_port())
    try:
        pg.init()
        pg.start()
        yield pg
    finally:
        with contextlib.suppress(subprocess.CalledProcessError):  # already stopped
            pg.stop()
        shutil.rmtree(root, ignore_errors=True)


def test_a_stopped_database_is_503_and_a_restarted_one_is_200_again(
    cluster: Cluster, tmp_path: Path
) -> None:
    env = {
        **os.environ,
        "TOCSIN_DATABASE_URL": cluster.url,
        "TOCSIN_ADMIN_TOKEN": ADMIN,
        "TOCSIN_TICK_EVERY_S": "0.5",
    }
    chatroom = str(uuid.uuid4())
    port = free_port()
    log = (tmp_path / "serve.log").open("wb")
    proc = subprocess.Popen(
        [TOCSIN, "serve", "--port", str(port)], env=env, stdout=log, stderr=subprocess.STDOUT
    )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_for("the server", lambda: httpx.get(f"{base}/healthz").status_code == 200)
        headers = {"Authorization": f"Bearer {create_token(env, chatroom)}"}
        tables = f"{base}/private/module/custom_tables/chatroom/{chatroom}/tables"
        with httpx.Client(headers=headers, timeout=30) as http:
            created = http.post(tables, json={"name": "T", "columns": {"Title": "text"}})
            assert created.status_code == 201, created.text
            table_url = f"{tables}/{created.json()['id']}"
            assert http.get(table_url).status_code == 200
            assert http.get(f"{base}/readyz").status_code == 200

            cluster.stop()
            for method, url in (
                ("GET", table_url),
                ("GET", f"{table_url}/records"),
                ("POST", f"{table_url}/records"),  # authenticated before its body: 503 too
                ("GET", f"{base}/readyz"),
            ):
                resp = http.request(method, url, json={"data": {"Title": "x"}})
                assert resp.status_code == 503, (method, url, resp.text)
                assert resp.headers["Retry-After"] == "5"
                assert resp.json() == {"detail": messages.DATABASE_UNAVAILABLE}
            assert http.get(f"{base}/healthz").status_code == 200  # liveness only

            cluster.start()
            wait_for(
                "readiness after the restart", lambda: http.get(f"{base}/readyz").status_code == 200
            )
            assert http.get(table_url).status_code == 200
            record = http.post(f"{table_url}/records", json={"data": {"Title": "after"}})
            assert record.status_code == 201, record.text
        assert proc.poll() is None  # the same process all along
        assert stop(proc) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=30)  # reaped: no zombie, no ResourceWarning
        log.close()
        text = (tmp_path / "serve.log").read_text()
        print(text[-6000:])
    assert "unhandled error" not in text  # no request ended in a 500
