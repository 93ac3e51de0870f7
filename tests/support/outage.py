"""What a database outage looks like to a loop: a real driver error, a stop event that records
the pauses instead of sleeping them, and the log lines an outage leaves.

``unavailable()`` is the ``StoreUnavailable`` a store raises when its server does not answer,
chained from the real psycopg error of a refused connection. :class:`CuttableProxy` is a TCP
proxy to PostgreSQL that can be cut (every connection closed, new ones closed at once) and
restored: from tocsin's side, the server went away and came back.
"""

from __future__ import annotations

import contextlib
import logging
import socket
import threading
from types import TracebackType
from urllib.parse import urlsplit, urlunsplit

import psycopg

from tocsin import messages
from tocsin.errors import StoreUnavailable


def unavailable() -> StoreUnavailable:
    """The error of a store whose server refuses connections (port 9 listens to nobody)."""
    try:
        psycopg.connect("postgresql://postgres@127.0.0.1:9/test", connect_timeout=2)
    except psycopg.OperationalError as exc:
        try:
            raise StoreUnavailable(messages.DATABASE_UNAVAILABLE) from exc
        except StoreUnavailable as error:
            return error
    raise AssertionError("a server answered on port 9")


class RecordingStop(threading.Event):
    """A stop event whose waits return at once and record their timeouts (time driven by the
    test, not slept); ``stop_after`` waits it sets itself."""

    def __init__(self, stop_after: int) -> None:
        super().__init__()
        self.waits: list[float] = []
        self.stop_after = stop_after

    def wait(self, timeout: float | None = None) -> bool:
        self.waits.append(0.0 if timeout is None else timeout)
        if len(self.waits) >= self.stop_after:
            self.set()
        return self.is_set()


def outage_records(records: list[logging.LogRecord]) -> list[logging.LogRecord]:
    """Every WARNING-or-worse line of tocsin's loggers (what an outage may add to a log)."""
    return [r for r in records if r.name.startswith("tocsin") and r.levelno >= logging.WARNING]


class CuttableProxy:
    """127.0.0.1:<port> → the PostgreSQL server of ``url``; ``cut()`` / ``restore()``."""

    def __init__(self, url: str) -> None:
        parts = urlsplit(url)
        self._target = (parts.hostname or "127.0.0.1", parts.port or 5432)
        self._server = socket.create_server(("127.0.0.1", 0))
        self.port = self._server.getsockname()[1]
        host = parts.netloc.rsplit("@", 1)
        user = host[0] + "@" if len(host) == 2 else ""
        self.url = urlunsplit(parts._replace(netloc=f"{user}127.0.0.1:{self.port}"))
        self._up = True
        self._lock = threading.Lock()
        self._open: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._server.accept()
            except OSError:
                return  # closed
            with self._lock:
                if not self._up:
                    client.close()
                    continue
                upstream = socket.create_connection(self._target)
                self._open += [client, upstream]
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    @staticmethod
    def _pump(source: socket.socket, sink: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while data := source.recv(65536):
                sink.sendall(data)
        for sock in (source, sink):
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)

    def cut(self) -> None:
        with self._lock:
            self._up = False
            sockets, self._open = self._open, []
        for sock in sockets:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()

    def restore(self) -> None:
        with self._lock:
            self._up = True

    def __enter__(self) -> CuttableProxy:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.cut()
        self._server.close()
