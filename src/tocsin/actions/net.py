"""Outbound HTTP for ``webhook`` and ``api_call``: the private-address guard (SPEC §10).

A URL may be fetched only when every address its host resolves to is public. Loopback, private
(RFC 1918, ULA), link-local, unspecified, multicast, reserved, shared (``100.64.0.0/10``) and
IPv6 site-local addresses, and IPv6 forms embedding such an IPv4 address (IPv4-mapped, 6to4),
are refused unless the host name, the literal IP, or a CIDR that contains the address is listed
in ``Settings.outbound_allow`` (``TOCSIN_OUTBOUND_ALLOW``). An entry may name a port
(``127.0.0.1:9000``, ``hooks.local:8080``, ``[::1]:9000``, ``10.0.0.0/8:443``): it then admits
that port only, so allowing a local receiver does not open tocsin's own API; an entry without a
port admits every port.

Redirects are not followed (a public URL must not bounce a request onto a private address).
The name is resolved once, by the check, and the request connects to the vetted address (``Host``
and the TLS server name stay the name's), so a DNS answer that changes after the check
(rebinding) cannot move the request elsewhere. A host allow-listed by name is not pinned.

The lookup counts against the action's deadline: ``getaddrinfo`` has no timeout of its own, so it
runs on a daemon thread and is given up when the deadline passes (:func:`bounded_resolve`).
"""

from __future__ import annotations

import ipaddress
import math
import socket
import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import httpx

from tocsin import messages
from tocsin.actions.base import ActionEnv, ActionError, ActionTimeout, Resolver
from tocsin.actions.deadline import DeadlineTransport
from tocsin.core.config.allowlist import split_allow_entry

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


def system_resolve(host: str) -> list[str]:
    """Every address ``host`` resolves to (``socket.getaddrinfo``)."""
    try:
        infos = socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)
    except socket.gaierror as exc:
        raise ActionError(messages.host_unresolvable(host, exc)) from exc
    return sorted({str(info[4][0]) for info in infos})


def bounded_resolve(resolve: Resolver, *, deadline: float, on_timeout: str) -> Resolver:
    """``resolve`` given up at ``deadline`` (``time.monotonic``) with
    :class:`ActionTimeout` (``on_timeout``): a resolver that never answers must not hold a run
    past its deadline, nor a worker past its shutdown wait. The lookup runs on a daemon thread,
    left to end on its own (the system resolver's own timeouts end it)."""

    def lookup(host: str) -> list[str]:
        done = threading.Event()
        outcome: list[tuple[bool, Any]] = []

        def run() -> None:
            try:
                outcome.append((True, resolve(host)))
            except BaseException as exc:  # handed to the caller, raised there
                outcome.append((False, exc))
            finally:
                done.set()

        threading.Thread(target=run, name="tocsin-resolve", daemon=True).start()
        if not done.wait(max(0.0, deadline - time.monotonic())):
            raise ActionTimeout(on_timeout)
        ok, value = outcome[0]
        if not ok:
            raise value
        return list(value)

    return lookup


def is_blocked(address: IPAddress) -> bool:
    """True unless ``address`` is a public unicast address.

    Refused: loopback, private, link-local, unspecified, multicast, reserved, shared address
    space (``100.64.0.0/10``, home of some cloud metadata services), deprecated IPv6 site-local
    (``fec0::/10``) and anything else that is not globally routable. An IPv6 address that embeds
    an IPv4 one (IPv4-mapped ``::ffff:a.b.c.d``, 6to4 ``2002::/16``) is judged by the embedded
    address too.
    """
    if isinstance(address, ipaddress.IPv6Address):
        embedded = address.ipv4_mapped or address.sixtofour
        if embedded is not None and is_blocked(embedded):
            return True
        if address.ipv4_mapped is not None:
            return False  # judged by the IPv4 address it stands for
        if address.is_site_local:
            return True
    return (
        not address.is_global
        or address.is_loopback
        or address.is_private
        or address.is_link_local
        or address.is_unspecified
        or address.is_multicast
        or address.is_reserved
    )


def _allowed(address: IPAddress, allow: Iterable[str]) -> bool:
    for entry in allow:
        try:
            if address in ipaddress.ip_network(entry, strict=False):
                return True
        except ValueError:
            continue  # a host name entry: matched by name in check_url
    return False


DEFAULT_PORTS = {"http": 80, "https": 443}


def allowed_for_port(allow: Iterable[str], port: int) -> tuple[str, ...]:
    """The hosts, addresses and CIDRs of the entries of ``allow`` that admit ``port``."""
    hosts = []
    for entry in allow:
        host, entry_port = split_allow_entry(entry)
        if entry_port is None or entry_port == port:
            hosts.append(host)
    return tuple(hosts)


def check_url(
    url: str, *, allow: tuple[str, ...], resolve: Resolver | None = None
) -> list[IPAddress]:
    """Refuse ``url`` unless it is http(s) and its host is public or allow-listed.

    Returns the vetted addresses of the host (empty when the host name itself is allow-listed).
    The URL is parsed by httpx, the same parser the request uses.
    """
    try:
        parts = httpx.URL(url)
        host = parts.raw_host.decode("ascii").lower()
    except (httpx.InvalidURL, UnicodeDecodeError) as exc:
        raise ActionError(messages.outbound_url_invalid(url, exc)) from exc
    if parts.scheme not in ("http", "https") or not host:
        raise ActionError(messages.outbound_url_not_http(url))
    allow = allowed_for_port(allow, parts.port or DEFAULT_PORTS[parts.scheme])
    if host in allow:
        return []
    try:
        addresses = [ipaddress.ip_address(host)]
    except ValueError:
        addresses = [ipaddress.ip_address(a) for a in (resolve or system_resolve)(host)]
    if not addresses:
        raise ActionError(messages.host_unresolvable(host))
    for address in addresses:
        if is_blocked(address) and not _allowed(address, allow):
            raise ActionError(messages.outbound_address_refused(host, address))
    return addresses


def pinned(
    url: str, headers: Mapping[str, str], addresses: list[IPAddress]
) -> tuple[httpx.URL, dict[str, str], dict[str, Any]]:
    """The request aimed at the first vetted address instead of the host name.

    The name is not resolved a second time at connect time, so a DNS answer that changes after
    the check (rebinding) cannot move the request onto a private address. ``Host`` and, for
    https, the TLS server name (certificate checked against it) stay the host name's. A
    ``Host`` in ``headers`` is never sent (the actions refuse configuring one).
    """
    target = httpx.URL(url)
    out = {k: v for k, v in headers.items() if k.lower() != "host"}
    host = target.raw_host.decode("ascii")
    if not addresses or _is_literal(host):
        return target, out, {}  # httpx writes the URL's own Host
    out["Host"] = target.netloc.decode("ascii")
    extensions: dict[str, Any] = {"sni_hostname": host} if target.scheme == "https" else {}
    return target.copy_with(host=str(addresses[0])), out, extensions


def _is_literal(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


ANSWER_LIMIT = 4096
"""Bytes of an answer read, for receipts and errors; the rest is never downloaded."""


@dataclass(frozen=True, slots=True)
class Answer:
    """What a request answered: its status and at most ``ANSWER_LIMIT`` bytes of body as text."""

    status_code: int
    text: str


def deadline_s(env: ActionEnv, timeout_s: object = None) -> float:
    """An outbound action's total deadline in seconds: its ``timeout_s`` (a positive number),
    else ``env.http_timeout_s``, capped by ``env.http_timeout_max_s``."""
    if timeout_s is None:
        seconds = env.http_timeout_s
    elif isinstance(timeout_s, int | float) and not isinstance(timeout_s, bool):
        seconds = float(timeout_s)
        if not 0 < seconds < math.inf:
            raise ActionError(messages.ACTION_TIMEOUT_INVALID)
    else:
        raise ActionError(messages.ACTION_TIMEOUT_INVALID)
    return min(seconds, env.http_timeout_max_s)


def _head(response: httpx.Response, *, deadline: float) -> str:
    """The start of the (decoded) body, read until ``deadline`` at most: a huge, endless or
    dripping answer cannot exhaust or hold the worker. The status is known by then, so a body
    cut off by the deadline still answers with what came."""
    head = bytearray()
    try:
        for chunk in response.iter_bytes():
            head += chunk
            if len(head) >= ANSWER_LIMIT or time.monotonic() > deadline:
                break
    except httpx.TimeoutException:
        pass  # the deadline passed while the body trickled in
    return bytes(head[:ANSWER_LIMIT]).decode(response.encoding or "utf-8", errors="replace")


def send(
    env: ActionEnv,
    *,
    method: str,
    url: str,
    headers: Mapping[str, str],
    json_body: Any = None,
    content: str | bytes | None = None,
    timeout_s: object = None,
) -> Answer:
    """One guarded request, pinned to the vetted address, that ends by its deadline
    (:func:`deadline_s`, counted from the call: name lookup, connect, headers and body).

    Transport errors and non-2xx answers raise ActionError; the deadline passing before the
    answer's status raises :class:`ActionTimeout`. Only the first ``ANSWER_LIMIT`` bytes of the
    answer are read. An injected ``env.http_transport`` (tests) is used as is: only the body is
    then read against the deadline.
    """
    seconds = deadline_s(env, timeout_s)
    deadline = time.monotonic() + seconds
    late = messages.action_deadline_passed(method, url, seconds, "NameResolutionTimeout")
    resolve = bounded_resolve(env.resolve or system_resolve, deadline=deadline, on_timeout=late)
    addresses = check_url(url, allow=env.outbound_allow, resolve=resolve)
    target, sent_headers, extensions = pinned(url, headers, addresses)
    kwargs: dict[str, Any] = {"headers": sent_headers, "extensions": extensions}
    if content is not None:
        kwargs["content"] = content
    elif json_body is not None:
        kwargs["json"] = json_body
    transport = env.http_transport or DeadlineTransport(deadline)
    try:
        with (
            httpx.Client(transport=transport, timeout=seconds, follow_redirects=False) as client,
            client.stream(method, target, **kwargs) as response,
        ):
            answer = Answer(response.status_code, _head(response, deadline=deadline))
    except httpx.TimeoutException as exc:
        detail = messages.action_deadline_passed(method, url, seconds, type(exc).__name__)
        raise ActionTimeout(detail) from exc
    except httpx.HTTPError as exc:
        raise ActionError(messages.request_failed(method, url, exc)) from exc
    if not 200 <= answer.status_code < 300:
        raise ActionError(messages.request_answered(method, url, answer.status_code, answer.text))
    return answer
