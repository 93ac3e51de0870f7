"""Soak: a real ``tocsin serve`` under steady load for a few minutes (issue 11). Local only.

- 2,000 tables (``--tables``) in 200 chatrooms, each with one ``interval`` trigger every 60 s
  whose ``webhook`` goes to one of four receivers this script serves on 127.0.0.1: good (200 at
  once, 78 %), slow (200 after 1 s, 10 %), failing (500, 10 %) and dripping (headers one byte
  every 0.5 s, 2 %, ``timeout_s`` 2: each such run ends by its deadline, failed).
- ``tocsin serve`` as a subprocess on a fresh SQLite file (or a fresh PostgreSQL schema with
  ``--backend postgresql``), the embedded ticker at its default period unless
  ``TOCSIN_TICK_EVERY_S`` is set; other ``TOCSIN_*`` variables pass through.
- 12 reader threads (``--readers``) with moderator tokens read tables, triggers, records and
  trigger runs over HTTP for ``--seconds`` (default 180).

Prints read latency p50/p99 (and errors), runs finished per minute against runs due
(tables × 60 / interval), runs created, and the server's RSS at start and end. Everything it
starts is stopped and its database removed at the end.

    .venv/bin/python bench/soak.py [--seconds 180] [--backend sqlite|postgresql]
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import psycopg
from sqlalchemy import select

from tocsin.service import Tocsin
from tocsin.settings import Settings
from tocsin.store.schema import runs

TOCSIN = str(Path(sys.executable).parent / "tocsin")
ROOMS = 200
INTERVAL_S = 60
DRIP_BYTES = 60  # a dripping answer gives up after 30 s even if nobody hangs up
ADMIN = "soak-admin-token-0123456789abcdef"


# ── receivers ──────────────────────────────────────────────────────────────────────────────
class Receiver(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        kind = self.path.strip("/")
        if kind == "slow":
            time.sleep(1.0)
        if kind == "drip":
            return self._drip()
        status = 500 if kind == "failing" else 200
        self.send_response(status)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")
        return None

    def _drip(self) -> None:
        head = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n" + b"X-Pad: " + b"x" * 40
        try:
            for byte in head[:DRIP_BYTES]:
                self.wfile.write(bytes([byte]))
                self.wfile.flush()
                time.sleep(0.5)
        except OSError:
            pass
        self.close_connection = True

    def log_message(self, *args: Any) -> None:
        pass


def receivers() -> tuple[ThreadingHTTPServer, str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


def action_for(index: int, base: str) -> dict[str, Any]:
    slot = index % 50
    if slot == 0:
        return {"type": "webhook", "url": f"{base}/drip", "timeout_s": 2}
    kind = "failing" if slot <= 5 else "slow" if slot <= 10 else "good"
    return {"type": "webhook", "url": f"{base}/{kind}"}


# ── the database and its content ───────────────────────────────────────────────────────────
def database(backend: str, workdir: str, pg_url: str) -> tuple[str, str | None]:
    if backend == "sqlite":
        return f"sqlite:///{workdir}/soak.db", None
    schema = f"soak_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    sep = "&" if "?" in pg_url else "?"
    return f"{pg_url}{sep}options=-csearch_path%3D{schema}", schema


def seed(url: str, tables: int, base: str) -> list[tuple[str, str, str]]:
    """``(room, token, table id)`` of every table."""
    tocsin = Tocsin.open(url, settings=Settings(database_url=url))
    try:
        rooms = [str(uuid.uuid4()) for _ in range(min(ROOMS, tables))]
        tokens = {
            room: tocsin.create_token(scope="chatroom", scope_id=room, role="moderator")
            for room in rooms
        }
        out = []
        for index in range(tables):
            room = rooms[index % len(rooms)]
            table = tocsin.create_table("chatroom", room, f"T{index}", {"Name": "text"})
            trigger = {
                "on": "schedule",
                "schedule": {"type": "interval", "every_seconds": INTERVAL_S},
                "actions": [action_for(index, base)],
            }
            tocsin.set_triggers(table["id"], [trigger])
            if index % 10 == 0:
                tocsin.insert_records(table["id"], [{"Name": f"r{index}"}])
            out.append((room, tokens[room], table["id"]))
        return out
    finally:
        tocsin.close()


# ── the server ─────────────────────────────────────────────────────────────────────────────
def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def serve(url: str, workdir: str) -> tuple[subprocess.Popen[bytes], str, Any]:
    port = free_port()
    env = {
        **os.environ,
        "TOCSIN_DATABASE_URL": url,
        "TOCSIN_OUTBOUND_ALLOW": "127.0.0.1",
        "TOCSIN_ADMIN_TOKEN": ADMIN,
    }
    log = open(f"{workdir}/serve.log", "wb")  # noqa: SIM115 (closed by the caller)
    proc = subprocess.Popen(
        [TOCSIN, "serve", "--port", str(port)], env=env, stdout=log, stderr=subprocess.STDOUT
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{base}/healthz", timeout=2).status_code == 200:
                return proc, base, log
        except httpx.TransportError:
            pass
        if proc.poll() is not None:
            break
        time.sleep(0.2)
    proc.kill()
    raise SystemExit(f"tocsin serve did not start; see {workdir}/serve.log")


# ── readers ────────────────────────────────────────────────────────────────────────────────
def reader(
    base: str,
    tables: list[tuple[str, str, str]],
    until: float,
    out: list[float],
    errors: Counter[str],
) -> None:
    rng = random.Random()
    paths = ("", "/triggers", "/records", "/trigger-runs")
    with httpx.Client(timeout=30) as http:
        while time.monotonic() < until:
            room, token, table_id = rng.choice(tables)
            url = f"{base}/private/module/custom_tables/chatroom/{room}/tables/{table_id}"
            start = time.perf_counter()
            try:
                answer = http.get(
                    url + rng.choice(paths), headers={"Authorization": f"Bearer {token}"}
                )
                if answer.status_code != 200:
                    errors[str(answer.status_code)] += 1
            except httpx.HTTPError as exc:
                errors[type(exc).__name__] += 1
            out.append(time.perf_counter() - start)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


# ── the run ────────────────────────────────────────────────────────────────────────────────
def finished_per_minute(url: str, start: datetime, minutes: int) -> tuple[list[Counter[str]], int]:
    tocsin = Tocsin.open(url, settings=Settings(database_url=url))
    try:
        with tocsin.store.read() as tx:
            rows = tx.conn.execute(select(runs.c.status, runs.c.finished_at)).all()
    finally:
        tocsin.close()
    buckets: list[Counter[str]] = [Counter() for _ in range(minutes)]
    for status, finished in rows:
        if finished is None:
            continue
        at = finished if finished.tzinfo else finished.replace(tzinfo=UTC)
        minute = int((at - start).total_seconds() // 60)
        if 0 <= minute < minutes:
            buckets[minute][status] += 1
    return buckets, len(rows)


def soak(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory(prefix="tocsin-soak-") as workdir:
        url, schema = database(args.backend, workdir, args.pg_url)
        server, base_rx = receivers()
        try:
            began = time.monotonic()
            tables = seed(url, args.tables, base_rx)
            print(
                f"seeded {len(tables)} tables in {time.monotonic() - began:.1f} s ({args.backend})"
            )
            proc, base, log = serve(url, workdir)
            try:
                run(args, url, proc, base, tables)
            finally:
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()
                log.close()
        finally:
            server.shutdown()
            server.server_close()
            if schema is not None:
                with psycopg.connect(args.pg_url, autocommit=True) as conn:
                    conn.execute(f"DROP SCHEMA {schema} CASCADE")


def run(
    args: argparse.Namespace,
    url: str,
    proc: subprocess.Popen[bytes],
    base: str,
    tables: list[tuple[str, str, str]],
) -> None:
    start_wall, rss_start = datetime.now(UTC), rss_mb(proc.pid)
    until = time.monotonic() + args.seconds
    latencies: list[list[float]] = [[] for _ in range(args.readers)]
    errors: Counter[str] = Counter()
    threads = [
        threading.Thread(target=reader, args=(base, tables, until, latencies[i], errors))
        for i in range(args.readers)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    rss_end = rss_mb(proc.pid)
    proc.send_signal(signal.SIGTERM)
    code = proc.wait(timeout=120)
    reads = [value for chunk in latencies for value in chunk]
    minutes = max(1, args.seconds // 60)
    buckets, created = finished_per_minute(url, start_wall, minutes)
    due = len(tables) * 60 // INTERVAL_S
    print(f"duration {args.seconds} s, {len(tables)} tables, {args.readers} readers")
    print(
        f"reads: {len(reads)} ({len(reads) / args.seconds:.0f}/s), "
        f"p50 {percentile(reads, 0.5) * 1000:.1f} ms, p99 {percentile(reads, 0.99) * 1000:.1f} ms, "
        f"mean {statistics.fmean(reads) * 1000 if reads else float('nan'):.1f} ms, "
        f"errors {dict(errors) or 0}"
    )
    for minute, bucket in enumerate(buckets):
        finished = bucket["done"] + bucket["failed"]
        print(
            f"minute {minute + 1}: finished {finished} (done {bucket['done']}, "
            f"failed {bucket['failed']}) against {due} due"
        )
    total = sum(bucket["done"] + bucket["failed"] for bucket in buckets)
    windows = len(tables) * (args.seconds // INTERVAL_S + 1)  # the first at once, then each minute
    print(f"in all: {total} finished, {created} created, against {windows} windows due")
    print(f"server RSS: start {rss_start:.0f} MB, end {rss_end:.0f} MB; exit code {code}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=int, default=180)
    parser.add_argument("--backend", choices=("sqlite", "postgresql"), default="sqlite")
    parser.add_argument("--tables", type=int, default=2000)
    parser.add_argument("--readers", type=int, default=12)
    parser.add_argument(
        "--pg-url",
        default=os.environ.get("BENCH_PG_URL", "postgresql://postgres@127.0.0.1:5432/test"),
    )
    soak(parser.parse_args())


if __name__ == "__main__":
    main()
