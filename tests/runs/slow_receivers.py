"""Real HTTP receivers on 127.0.0.1 for the deadline and concurrency tests.

- :class:`DripReceiver` reads a request, then answers its status line and headers one byte every
  ``every_s`` seconds (``body=True``: the headers at once, then the body one byte at a time),
  for as long as the client stays. It records, per connection, when the request arrived and
  when the client went away, and the most connections it held at once: counted as a request
  arrives, over the connections whose client has not closed its end by then (a drip thread
  notices a close only when it next wakes, after the client may have sent its next request).
- :class:`FastReceiver` answers 200 at once and records when each request arrived.

Times are ``time.monotonic()`` readings of this process, so a test orders events across the
two receivers without sleeping for a scheduler.
"""

from __future__ import annotations

import select
import socket
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

ANSWER = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 100000\r\n\r\n"


@dataclass
class Exchange:
    arrived: float
    left: float | None = None
    sent: int = 0


@dataclass
class DripReceiver:
    every_s: float = 0.5
    body: bool = False
    exchanges: list[Exchange] = field(default_factory=list)
    holding: int = 0
    most_held: int = 0
    open_conns: set[socket.socket] = field(default_factory=set)
    lock: threading.Lock = field(default_factory=threading.Lock)
    arrived: threading.Event = field(default_factory=threading.Event)
    closing: threading.Event = field(default_factory=threading.Event)

    def __post_init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(32)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}/drip"

    def __enter__(self) -> DripReceiver:
        threading.Thread(target=self._accept, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.closing.set()
        self.sock.close()

    def _accept(self) -> None:
        while not self.closing.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._drip, args=(conn,), daemon=True).start()

    def _drip(self, conn: socket.socket) -> None:
        _read_request(conn)
        exchange = Exchange(arrived=time.monotonic())
        with self.lock:
            self.exchanges.append(exchange)
            self.holding += 1
            self.open_conns.add(conn)
            still = sum(1 for held in self.open_conns if not _closed_now(held))
            self.most_held = max(self.most_held, still)
        self.arrived.set()
        try:
            if self.body:
                conn.sendall(ANSWER)
            step = 0
            while not self.closing.is_set():
                byte = b"x" if self.body else ANSWER[step % len(ANSWER) : step % len(ANSWER) + 1]
                conn.sendall(byte)
                exchange.sent += 1
                step += 1
                if _gone(conn, self.every_s):
                    break
        except OSError:
            pass
        finally:
            exchange.left = time.monotonic()
            with self.lock:
                self.holding -= 1
                self.open_conns.discard(conn)
            conn.close()


def _read_request(conn: socket.socket) -> None:
    """Read the request head and its Content-Length body."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip())
    while len(body) < length:
        chunk = conn.recv(65536)
        if not chunk:
            return
        body += chunk


def _closed_now(conn: socket.socket) -> bool:
    """Whether the client closed its end already: its FIN is there to read (``select`` without
    waiting, then a peek that takes no byte: the socket's own thread may be reading it)."""
    readable, _, _ = select.select([conn], [], [], 0)
    return bool(readable) and conn.recv(1, socket.MSG_PEEK) == b""


def _gone(conn: socket.socket, wait_s: float) -> bool:
    """Wait ``wait_s`` seconds; True as soon as the client closed its end."""
    conn.settimeout(wait_s)
    try:
        return conn.recv(1) == b""
    except TimeoutError:
        return False
    finally:
        conn.settimeout(None)


class FastReceiver:
    """Answers every POST/GET 200 at once; ``arrivals`` holds when each request came in."""

    def __init__(self) -> None:
        self.arrivals: list[float] = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                receiver.arrivals.append(time.monotonic())
                self.send_response(200)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

            do_GET = do_POST

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/hook"

    def __enter__(self) -> FastReceiver:
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
