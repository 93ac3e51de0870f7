"""Soak: a real ``tocsin serve`` under steady load for a few minutes. Local only.

- 2,000 tables (``--tables``) in 200 chatrooms, each with one ``interval`` trigger every 60 s
  whose ``webhook`` goes to one of four receivers this script serves on 127.0.0.1: good (200 at
  once, 78 %), slow (200 after 1 s, 10 %), failing (500, 10 %) and dripping (headers one byte
  every 0.5 s, 2 %, ``timeout_s`` 2: each such run ends by its deadline, failed).
- ``tocsin serve`` as a subprocess on a fresh SQLite file (or a fresh PostgreSQL schema with
  ``--backend postgresql``), the embedded ticker at its default period unless
  ``TOCSIN_TICK_EVERY_S`` is set; other ``TOCSIN_*`` variables pass through.
- 12 reader threads (``--readers``) with moderator tokens read tables, triggers, records and
  trigger runs over HTTP for ``--seconds`` (default 180).
- Beside these well-behaved tenants, a hostile one (``--hostile-tables``, default 2; 0: none):
  tables with 100 ``created`` triggers (the most a table may have) whose webhooks all go to a
  sluggish receiver (``--hostile-delay`` s, default 2; the default webhook body carries the
  row), one writer per table posting ~255 KB records (``--hostile-writes`` a minute each,
  default 5: 500 runs a minute a table) and ``--hostile-readers`` (default 2) paging its runs
  500 at a time.

Prints read latency p50/p99 (and errors) of each tenant kind, the well-behaved runs finished
per minute against runs due (tables × 60 / interval), the hostile runs created and finished
per minute, runs created, the server's RSS at start, peak and end, and the database's size
after seeding and at the end. Everything it starts is stopped and its database removed at the
end.

    .venv/bin/python bench/soak.py [--seconds 180] [--backend sqlite|postgresql] [--tables N]
        [--hostile-tables N] [--hostile-writes PER_MIN] [--hostile-delay S]
"""

from __future__ import annotations

import argparse
import os
import random
import secrets
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
from sqlalchemy import select, text

from tocsin.service import Tocsin
from tocsin.settings import Settings
from tocsin.store.schema import runs

TOCSIN = str(Path(sys.executable).parent / "tocsin")
ROOMS = 200
INTERVAL_S = 60
DRIP_BYTES = 60  # a dripping answer gives up after 30 s even if nobody hangs up
ADMIN = "soak-admin-token-0123456789abcdef"
HOSTILE_TRIGGERS = 100
NOTES_CHARS = 255_000  # a hostile record's ~255 KB cell (hex: not compressible)
PREFIX = "/private/module/custom_tables/chatroom"
Tables = list[tuple[str, str, str]]  # (room, moderator token, table id)


# ── receivers ──────────────────────────────────────────────────────────────────────────────
class Receiver(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    sluggish_s = 2.0  # the hostile tenant's receiver (``--hostile-delay``)

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        kind = self.path.strip("/")
        if kind == "slow":
            time.sleep(1.0)
        if kind == "sluggish":
            time.sleep(self.sluggish_s)
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


def seed(url: str, tables: int, hostile: int, base: str) -> tuple[Tables, Tables]:
    """``(room, token, table id)`` of every well-behaved table, and of the hostile tenant's."""
    tocsin = Tocsin.open(url, settings=Settings(database_url=url))
    try:
        return seed_tables(tocsin, tables, base), seed_hostile(tocsin, hostile, base)
    finally:
        tocsin.close()


def seed_tables(tocsin: Tocsin, tables: int, base: str) -> Tables:
    """The well-behaved tenants: ``tables`` tables in up to 200 chatrooms, one interval trigger
    each."""
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


def seed_hostile(tocsin: Tocsin, tables: int, base: str) -> Tables:
    """One chatroom's tables, each with 100 ``created`` triggers hooked to the sluggish
    receiver."""
    room = str(uuid.uuid4())
    token = tocsin.create_token(scope="chatroom", scope_id=room, role="moderator")
    hook = {"type": "webhook", "url": f"{base}/sluggish", "timeout_s": 30}
    triggers = [{"on": "created", "actions": [hook]} for _ in range(HOSTILE_TRIGGERS)]
    out = []
    for index in range(tables):
        table = tocsin.create_table(
            "chatroom", room, f"H{index}", {"Title": "text", "Notes": "text"}
        )
        tocsin.set_triggers(table["id"], triggers)
        out.append((room, token, table["id"]))
    return out


def database_mb(url: str) -> float:
    """The database's size: SQLite its file and WAL, PostgreSQL every relation of its schema
    (indexes and TOAST included)."""
    if url.startswith("sqlite:///"):
        path = Path(url.removeprefix("sqlite:///"))
        files = (path, path.with_name(path.name + "-wal"))
        return sum(f.stat().st_size for f in files if f.exists()) / 1e6
    tocsin = Tocsin.open(url, settings=Settings(database_url=url))
    try:
        with tocsin.store.read() as tx:
            size = tx.conn.execute(
                text(
                    "SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class AS c"
                    " WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind = 'r'"
                )
            ).scalar_one()
        return int(size) / 1e6
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


# ── readers and writers ────────────────────────────────────────────────────────────────────
WELL_BEHAVED_PATHS = ("", "/triggers", "/records", "/trigger-runs")
HOSTILE_PATHS = ("/trigger-runs?limit=500", "/triggers")  # a page of 500 runs of 255 KB rows


def reader(
    base: str,
    tables: Tables,
    paths: tuple[str, ...],
    until: float,
    out: list[float],
    errors: Counter[str],
) -> None:
    rng = random.Random()
    with httpx.Client(timeout=60) as http:
        while time.monotonic() < until:
            room, token, table_id = rng.choice(tables)
            url = f"{base}{PREFIX}/{room}/tables/{table_id}"
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


def writer(
    base: str, table: tuple[str, str, str], per_minute: float, until: float, out: Counter[str]
) -> None:
    """Post a ~255 KB record to a hostile table ``per_minute`` times a minute."""
    room, token, table_id = table
    url = f"{base}{PREFIX}/{room}/tables/{table_id}/records"
    gap = 60 / per_minute
    with httpx.Client(timeout=60) as http:
        due = time.monotonic()
        while due < until:
            time.sleep(max(0.0, due - time.monotonic()))
            data = {"Title": f"w{out['sent']}", "Notes": secrets.token_hex(NOTES_CHARS // 2)}
            out["sent"] += 1
            try:
                answer = http.post(
                    url, json={"data": data}, headers={"Authorization": f"Bearer {token}"}
                )
                out["written" if answer.status_code == 201 else str(answer.status_code)] += 1
            except httpx.HTTPError as exc:
                out[type(exc).__name__] += 1
            due += gap


def sample_rss(pid: int, until: float, peak: list[float]) -> None:
    while time.monotonic() < until:
        peak[0] = max(peak[0], rss_mb(pid))
        time.sleep(1.0)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


# ── the run ────────────────────────────────────────────────────────────────────────────────
Buckets = list[Counter[str]]  # per minute: runs finished by status, "created"


def per_minute(
    url: str, start: datetime, minutes: int, hostile: set[str]
) -> tuple[Buckets, Buckets, int]:
    """The well-behaved and the hostile tables' runs, per minute since ``start``; how many
    runs exist."""
    tocsin = Tocsin.open(url, settings=Settings(database_url=url))
    try:
        with tocsin.store.read() as tx:
            columns = (runs.c.table_id, runs.c.status, runs.c.created_at, runs.c.finished_at)
            rows = tx.conn.execute(select(*columns)).all()
    finally:
        tocsin.close()
    good: Buckets = [Counter() for _ in range(minutes)]
    bad: Buckets = [Counter() for _ in range(minutes)]

    def bucket(at: datetime) -> int:
        at = at if at.tzinfo else at.replace(tzinfo=UTC)
        return int((at - start).total_seconds() // 60)

    for table_id, status, created, finished in rows:
        buckets = bad if table_id in hostile else good
        if 0 <= (minute := bucket(created)) < minutes:
            buckets[minute]["created"] += 1
        if finished is not None and 0 <= (minute := bucket(finished)) < minutes:
            buckets[minute][status] += 1
    return good, bad, len(rows)


def soak(args: argparse.Namespace) -> None:
    Receiver.sluggish_s = args.hostile_delay
    with tempfile.TemporaryDirectory(prefix="tocsin-soak-") as workdir:
        url, schema = database(args.backend, workdir, args.pg_url)
        server, base_rx = receivers()
        try:
            began = time.monotonic()
            tables, hostile = seed(url, args.tables, args.hostile_tables, base_rx)
            print(
                f"seeded {len(tables)} tables and {len(hostile)} hostile ones in"
                f" {time.monotonic() - began:.1f} s ({args.backend});"
                f" database {database_mb(url):.1f} MB"
            )
            proc, base, log = serve(url, workdir)
            try:
                run(args, url, proc, base, tables, hostile)
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
    tables: Tables,
    hostile: Tables,
) -> None:
    start_wall, rss_start = datetime.now(UTC), rss_mb(proc.pid)
    until = time.monotonic() + args.seconds
    latencies: list[list[float]] = [[] for _ in range(args.readers)]
    hostile_latencies: list[list[float]] = [[] for _ in range(args.hostile_readers)]
    errors: Counter[str] = Counter()
    hostile_errors: Counter[str] = Counter()
    writes: Counter[str] = Counter()
    peak = [rss_start]
    threads = [
        threading.Thread(
            target=reader, args=(base, tables, WELL_BEHAVED_PATHS, until, latencies[i], errors)
        )
        for i in range(args.readers)
    ]
    if hostile:
        threads += [
            threading.Thread(
                target=reader,
                args=(base, hostile, HOSTILE_PATHS, until, hostile_latencies[i], hostile_errors),
            )
            for i in range(args.hostile_readers)
        ]
        threads += [
            threading.Thread(target=writer, args=(base, t, args.hostile_writes, until, writes))
            for t in hostile
        ]
    threads.append(threading.Thread(target=sample_rss, args=(proc.pid, until, peak)))
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    rss_end = rss_mb(proc.pid)
    proc.send_signal(signal.SIGTERM)
    code = proc.wait(timeout=120)
    minutes = max(1, args.seconds // 60)
    good, bad, created = per_minute(url, start_wall, minutes, {t[2] for t in hostile})
    due = len(tables) * 60 // INTERVAL_S
    print(f"duration {args.seconds} s, {len(tables)} tables, {args.readers} readers")
    print(f"reads (well-behaved): {latency_line(latencies, errors, args.seconds)}")
    for minute, bucket in enumerate(good):
        finished = bucket["done"] + bucket["failed"]
        print(
            f"minute {minute + 1}: finished {finished} (done {bucket['done']}, "
            f"failed {bucket['failed']}) against {due} due"
        )
    total = sum(bucket["done"] + bucket["failed"] for bucket in good)
    windows = len(tables) * (args.seconds // INTERVAL_S + 1)  # the first at once, then each minute
    print(f"in all: {total} finished against {windows} windows due")
    if hostile:
        print(
            f"hostile: {len(hostile)} tables x {HOSTILE_TRIGGERS} created triggers, receiver"
            f" {args.hostile_delay:g} s, {args.hostile_writes:g} writes/min a table:"
            f" writes {dict(writes)}"
        )
        line = latency_line(hostile_latencies, hostile_errors, args.seconds)
        print(f"reads (hostile, runs 500 a page): {line}")
        for minute, bucket in enumerate(bad):
            print(
                f"hostile minute {minute + 1}: created {bucket['created']}, finished"
                f" {bucket['done'] + bucket['failed']} (failed {bucket['failed']})"
            )
    print(f"runs in the database: {created}; database {database_mb(url):.1f} MB at the end")
    print(
        f"server RSS: start {rss_start:.0f} MB, peak {peak[0]:.0f} MB, end {rss_end:.0f} MB;"
        f" exit code {code}"
    )


def latency_line(chunks: list[list[float]], errors: Counter[str], seconds: int) -> str:
    reads = [value for chunk in chunks for value in chunk]
    return (
        f"{len(reads)} ({len(reads) / seconds:.0f}/s), "
        f"p50 {percentile(reads, 0.5) * 1000:.1f} ms, p99 {percentile(reads, 0.99) * 1000:.1f} ms, "
        f"mean {statistics.fmean(reads) * 1000 if reads else float('nan'):.1f} ms, "
        f"errors {dict(errors) or 0}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=int, default=180)
    parser.add_argument("--backend", choices=("sqlite", "postgresql"), default="sqlite")
    parser.add_argument("--tables", type=int, default=2000)
    parser.add_argument("--readers", type=int, default=12)
    parser.add_argument("--hostile-tables", type=int, default=2)
    parser.add_argument("--hostile-writes", type=float, default=5.0, help="per minute a table")
    parser.add_argument("--hostile-delay", type=float, default=2.0, help="receiver seconds")
    parser.add_argument("--hostile-readers", type=int, default=2)
    parser.add_argument(
        "--pg-url",
        default=os.environ.get("BENCH_PG_URL", "postgresql://postgres@127.0.0.1:5432/test"),
    )
    soak(parser.parse_args())


if __name__ == "__main__":
    main()
