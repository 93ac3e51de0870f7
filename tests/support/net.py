"""Local networking for tests."""

from __future__ import annotations

import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LOCALHOST = "127.0.0.1"


def free_port() -> int:
    """A TCP port on 127.0.0.1 nobody listens on right now."""
    with socket.socket() as sock:
        sock.bind((LOCALHOST, 0))
        port: int = sock.getsockname()[1]
        return port


class Receiver:
    """A local HTTP server on a free port (a context manager) that answers every POST 200,
    ``after_s`` seconds after the request came in (or at once when it closes); ``gated``: only
    once :meth:`release` lets it through (one request per call). ``arrivals`` holds when each
    request came in (``time.monotonic``)."""

    def __init__(self, after_s: float = 0.0, *, gated: bool = False) -> None:
        self.arrivals: list[float] = []
        self.closing = threading.Event()
        self.permits = threading.Semaphore(0)
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                receiver.arrivals.append(time.monotonic())
                if gated:
                    receiver.permits.acquire(timeout=30)
                else:
                    receiver.closing.wait(after_s)
                self.send_response(200)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, *_: object) -> None:
                return None

        self.server = ThreadingHTTPServer((LOCALHOST, 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://{LOCALHOST}:{self.server.server_address[1]}/hook"

    def __enter__(self) -> Receiver:
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def release(self, count: int = 1) -> None:
        """Let ``count`` more requests of a gated receiver be answered."""
        self.permits.release(count)

    def __exit__(self, *exc: object) -> None:
        self.closing.set()
        self.permits.release(10_000)
        self.server.shutdown()
        self.server.server_close()
