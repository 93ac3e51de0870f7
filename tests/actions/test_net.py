"""SPEC §10: outbound HTTP refuses loopback, private and link-local addresses unless allowed."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest

from tocsin.actions import net as net_module
from tocsin.actions.base import ActionEnv, ActionError
from tocsin.actions.net import check_url, send


def public(host: str) -> list[str]:
    return ["93.184.216.34"]


def resolves_to(address: str):  # type: ignore[no-untyped-def]
    return lambda host: [address]


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1/x",
        "http://[::1]/x",
        "http://10.1.2.3/x",
        "http://172.16.0.1/x",
        "http://192.168.1.1/x",
        "http://169.254.169.254/latest/meta-data",
        "http://0.0.0.0/x",
        "http://[fe80::1]/x",
        "http://[fd00::1]/x",
        "http://[::ffff:127.0.0.1]/x",
        "http://[::ffff:a9fe:a9fe]/x",  # IPv4-mapped 169.254.169.254, hex form
        "http://100.100.100.200/latest/meta-data",  # shared space (a cloud metadata service)
        "http://100.64.0.1/x",
        "http://[2002:7f00:1::]/x",  # 6to4 wrapping 127.0.0.1
        "http://[2002:a9fe:a9fe::1]/x",  # 6to4 wrapping 169.254.169.254
        "http://[fec0::1]/x",  # deprecated IPv6 site-local
        "http://[64:ff9b::7f00:1]/x",  # NAT64 wrapping 127.0.0.1
        "http://[::127.0.0.1]/x",  # IPv4-compatible
        "http://[fe80::1%25eth0]/x",
        "http://224.0.0.1/x",
        "http://240.0.0.1/x",
    ],
)
def test_private_literal_addresses_are_refused(url: str) -> None:
    with pytest.raises(ActionError, match="refused"):
        check_url(url, allow=(), resolve=public)


@pytest.mark.parametrize(
    "address", ["93.184.216.34", "2606:4700::1111", "::ffff:93.184.216.34", "2002:5db8:d822::1"]
)
def test_public_addresses_pass_in_every_form(address: str) -> None:
    check_url("https://hooks.example/x", allow=(), resolve=resolves_to(address))


def test_one_private_answer_among_public_ones_refuses() -> None:
    with pytest.raises(ActionError, match=r"refused: 100\.100\.100\.200"):
        check_url(
            "https://hooks.example/x",
            allow=(),
            resolve=lambda host: ["93.184.216.34", "100.100.100.200"],
        )


def test_names_are_resolved_before_deciding() -> None:
    with pytest.raises(ActionError, match=r"refused: 127\.0\.0\.1"):
        check_url("https://localhost:8443/x", allow=(), resolve=resolves_to("127.0.0.1"))
    with pytest.raises(ActionError, match=r"refused: 10\.0\.0\.7"):
        check_url("https://internal.example/x", allow=(), resolve=resolves_to("10.0.0.7"))
    check_url("https://hooks.example/x", allow=(), resolve=public)


def test_allow_list_by_host_ip_or_cidr() -> None:
    check_url("http://127.0.0.1:9/x", allow=("127.0.0.1",), resolve=public)
    check_url(
        "http://internal.example/x", allow=("internal.example",), resolve=resolves_to("10.0.0.7")
    )
    check_url("http://internal.example/x", allow=("10.0.0.0/8",), resolve=resolves_to("10.0.0.7"))
    with pytest.raises(ActionError):
        check_url(
            "http://internal.example/x", allow=("192.168.0.0/16",), resolve=resolves_to("10.0.0.7")
        )


def test_only_http_urls_with_a_host() -> None:
    for url in ("file:///etc/passwd", "ftp://hooks.example/", "http:///nohost"):
        with pytest.raises(ActionError, match="http"):
            check_url(url, allow=(), resolve=public)


def test_a_pinned_request_reaches_the_vetted_address_over_a_real_socket() -> None:
    """Through httpx's real transport: the name never goes to the system resolver; the request
    connects to the vetted address and carries the name in ``Host``."""
    seen: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            seen.append(self.headers["Host"])
            self.send_response(204)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        port = server.server_address[1]
        env = ActionEnv(
            store=None,  # type: ignore[arg-type]
            records=None,  # type: ignore[arg-type]
            commands={},
            outbound_allow=("127.0.0.0/8",),  # allowed by address, so the name is pinned
            resolve=resolves_to("127.0.0.1"),
        )
        url = f"http://no-such-host.invalid:{port}/x"
        response = send(env, method="GET", url=url, headers={"host": "evil.example"})
    finally:
        server.shutdown()
        server.server_close()
    assert response.status_code == 204
    assert seen == [f"no-such-host.invalid:{port}"]


def test_a_dripping_answer_is_read_for_at_most_the_timeout(monkeypatch: pytest.MonkeyPatch) -> None:
    class FakeTime:
        now = 0.0

        def monotonic(self) -> float:
            self.now += 1.0  # every look at the clock: one more second went by
            return self.now

    monkeypatch.setattr(net_module, "time", FakeTime())
    sent: list[int] = []

    def drip() -> Iterator[bytes]:
        for _ in range(1000):
            sent.append(1)
            yield b"x"

    env = ActionEnv(
        store=None,  # type: ignore[arg-type]
        records=None,  # type: ignore[arg-type]
        commands={},
        http_transport=httpx.MockTransport(lambda r: httpx.Response(200, content=drip())),
        resolve=resolves_to("93.184.216.34"),
        http_timeout_s=10.0,
    )
    answer = send(env, method="GET", url="https://slow.example/", headers={})
    assert answer.status_code == 200 and len(sent) <= 12 and answer.text == "x" * len(sent)
