"""A real HTTP receiver on 127.0.0.1 that records every request (method, headers, raw body) and
answers the statuses it is given in turn (the last one repeats), each after ``delay_s``."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Received:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes


class HookReceiver:
    def __init__(self, *statuses: int, delay_s: float = 0.0) -> None:
        self.statuses = list(statuses or (200,))
        self.delay_s = delay_s  # how long each answer takes (a slow service)
        self.received: list[Received] = []
        self.lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/hook"

    def _answer(self, request: Received) -> int:
        with self.lock:
            self.received.append(request)
            return self.statuses.pop(0) if len(self.statuses) > 1 else self.statuses[0]

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def _any(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                got = Received(self.command, self.path, dict(self.headers.items()), body)
                status = receiver._answer(got)
                time.sleep(receiver.delay_s)
                self.send_response(status)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

            do_POST = do_PUT = do_PATCH = _any

            def log_message(self, *args: Any) -> None:
                pass

        return Handler

    def __enter__(self) -> HookReceiver:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
