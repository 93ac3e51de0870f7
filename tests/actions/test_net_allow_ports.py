"""``TOCSIN_OUTBOUND_ALLOW`` entries may name a port.

Allowing a local receiver (``127.0.0.1:9000``) must not open every local port, tocsin's own API
among them; an entry without a port keeps admitting every port.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from tocsin.actions.base import ActionEnv, ActionError
from tocsin.actions.net import check_url, send, split_allow_entry


class Ok(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, *args: Any) -> None:
        return


@pytest.fixture
def two_servers() -> Iterator[tuple[int, int]]:
    """A receiver and a stand-in for tocsin's own API, both on 127.0.0.1."""
    servers = [ThreadingHTTPServer(("127.0.0.1", 0), Ok) for _ in range(2)]
    for server in servers:
        threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield servers[0].server_port, servers[1].server_port
    finally:
        for server in servers:
            server.shutdown()
            server.server_close()


def env(*allow: str) -> ActionEnv:
    return ActionEnv(store=None, records=None, commands={}, outbound_allow=allow)  # type: ignore[arg-type]


def test_a_host_port_entry_admits_that_port_only(two_servers: tuple[int, int]) -> None:
    receiver, api = two_servers
    allow = env(f"127.0.0.1:{receiver}")
    answer = send(allow, method="GET", url=f"http://127.0.0.1:{receiver}/hook", headers={})
    assert (answer.status_code, answer.text) == (200, "ok")
    with pytest.raises(ActionError, match=r"refused: 127\.0\.0\.1 is a loopback"):
        send(allow, method="GET", url=f"http://127.0.0.1:{api}/private/module", headers={})


def test_an_entry_without_a_port_still_admits_every_port(two_servers: tuple[int, int]) -> None:
    for port in two_servers:
        assert send(env("127.0.0.1"), method="GET", url=f"http://127.0.0.1:{port}/", headers={})


@pytest.mark.parametrize(
    ("entry", "url", "admitted"),
    [
        ("localhost:9000", "http://localhost:9000/x", True),
        ("localhost:9000", "http://localhost:9001/x", False),
        ("LOCALHOST:9000", "http://localhost:9000/x", True),
        ("[::1]:9000", "http://[::1]:9000/x", True),
        ("[::1]:9000", "http://[::1]:8000/x", False),
        ("[::1]", "http://[::1]:8000/x", True),
        ("::1", "http://[::1]:8000/x", True),
        ("10.0.0.0/8:443", "https://10.1.2.3/x", True),  # the scheme's default port
        ("10.0.0.0/8:443", "http://10.1.2.3/x", False),
        ("10.0.0.0/8:80", "http://10.1.2.3/x", True),
        ("10.0.0.0/8", "http://10.1.2.3:6543/x", True),
    ],
)
def test_ports_of_names_addresses_and_cidrs(entry: str, url: str, admitted: bool) -> None:
    resolve = lambda host: ["127.0.0.1"]  # noqa: E731
    if admitted:
        check_url(url, allow=(entry,), resolve=resolve)
    else:
        with pytest.raises(ActionError, match="refused"):
            check_url(url, allow=(entry,), resolve=resolve)


def test_split_allow_entry() -> None:
    assert split_allow_entry("hooks.local:8080") == ("hooks.local", 8080)
    assert split_allow_entry("hooks.local") == ("hooks.local", None)
    assert split_allow_entry("fd00::1") == ("fd00::1", None)
    assert split_allow_entry("[fd00::1]:443") == ("fd00::1", 443)
