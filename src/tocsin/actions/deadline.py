"""One total deadline for an outbound HTTP exchange, enforced on the socket (SPEC §10).

httpx's timeouts bound each connect, read and write; a receiver that drips its answer one byte
at a time never trips them and holds the worker for as long as it likes. The transport built
here connects through a network backend whose every socket operation is given at most the time
left until ``deadline`` (a ``time.monotonic()`` instant): connect, TLS handshake, request,
response headers and body end by then together, with httpx's ``ConnectTimeout``,
``ReadTimeout`` or ``WriteTimeout``. Each call waits on one socket operation at a time, so a
byte that trickles in cannot reset anything: the time left only shrinks.

Requests connect directly (environment proxy variables are not used): the private-address guard
already pins the request to a vetted address.
"""

from __future__ import annotations

import functools
import ssl
import time
from collections.abc import Iterable
from typing import Any

import httpcore
import httpx

from tocsin import messages

WRITE_SLICE = 64 * 1024
"""A request body is written a slice at a time, each with the time left at its start."""

_Error = type[httpcore.TimeoutException]


def _left(deadline: float, timeout: float | None, error: _Error) -> float:
    """Seconds the next socket operation may wait: ``timeout`` at most, never past ``deadline``."""
    left = deadline - time.monotonic()
    if left <= 0:
        raise error(messages.ACTION_DEADLINE_REACHED)
    return left if timeout is None else min(timeout, left)


class DeadlineStream(httpcore.NetworkStream):
    """A network stream whose reads, writes and TLS handshake all end by ``deadline``."""

    def __init__(self, inner: httpcore.NetworkStream, deadline: float) -> None:
        self.inner = inner
        self.deadline = deadline

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self.inner.read(max_bytes, _left(self.deadline, timeout, httpcore.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        for start in range(0, len(buffer), WRITE_SLICE):
            part = buffer[start : start + WRITE_SLICE]
            self.inner.write(part, _left(self.deadline, timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self.inner.close()

    def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.NetworkStream:
        wait = _left(self.deadline, timeout, httpcore.ConnectTimeout)
        return DeadlineStream(
            self.inner.start_tls(ssl_context, server_hostname, wait), self.deadline
        )

    def get_extra_info(self, info: str) -> Any:
        return self.inner.get_extra_info(info)


class DeadlineBackend(httpcore.NetworkBackend):
    """``httpcore.SyncBackend`` whose connections and streams end by ``deadline``."""

    def __init__(self, deadline: float) -> None:
        self.deadline = deadline
        self.inner = httpcore.SyncBackend()

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.NetworkStream:
        wait = _left(self.deadline, timeout, httpcore.ConnectTimeout)
        stream = self.inner.connect_tcp(host, port, wait, local_address, socket_options)
        return DeadlineStream(stream, self.deadline)

    def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.NetworkStream:
        wait = _left(self.deadline, timeout, httpcore.ConnectTimeout)
        return DeadlineStream(
            self.inner.connect_unix_socket(path, wait, socket_options), self.deadline
        )

    def sleep(self, seconds: float) -> None:
        self.inner.sleep(min(seconds, max(0.0, self.deadline - time.monotonic())))


@functools.cache
def _ssl_context() -> ssl.SSLContext:
    """httpx's default context (certifi, or ``SSL_CERT_FILE``), built once per process: it is
    safe to share between threads and costs milliseconds to build."""
    return httpx.create_ssl_context()


class DeadlineTransport(httpx.HTTPTransport):
    """httpx's own transport (request mapping, error mapping) over a deadline-bound pool.

    ``HTTPTransport`` takes no network backend, so its connection pool is set here to the one
    its defaults would build, connecting through :class:`DeadlineBackend`. A test against a
    real dripping server guards this.
    """

    def __init__(self, deadline: float) -> None:  # replaces HTTPTransport's pool, not extends
        self._pool = httpcore.ConnectionPool(
            ssl_context=_ssl_context(), network_backend=DeadlineBackend(deadline)
        )
