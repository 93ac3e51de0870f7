"""A real HTTP receiver on 127.0.0.1 for the crash tests.

It records every *completed* delivery by its ``Idempotency-Key``. One key may be *gated*: the
request carrying it is held (the test is told it arrived) until the test kills the sender; such a
request never completes, so it is not counted — exactly like a request a crash cut off.
"""

from __future__ import annotations

import threading
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class Receiver:
    def __init__(self) -> None:
        self.deliveries: Counter[str] = Counter()
        self.lock = threading.Lock()
        self.gate_key: str | None = None
        self.arrived = threading.Event()
        self.release = threading.Event()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/hook"

    def gate(self, key: str | None) -> None:
        self.gate_key = key
        self.arrived.clear()
        self.release.clear()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                key = self.headers.get("Idempotency-Key") or ""
                if key and key == receiver.gate_key:
                    receiver.arrived.set()
                    receiver.release.wait(10)
                    return  # the sender died mid-request: nothing was delivered
                with receiver.lock:
                    receiver.deliveries[key] += 1
                self.send_response(200)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, *args: Any) -> None:
                pass

        return Handler

    def __enter__(self) -> Receiver:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()
