"""``TOCSIN_OUTBOUND_ALLOW`` entries (SPEC §10): their form, read once. Pure.

An entry is a host name, an IP address or a CIDR, optionally with ``:port`` (an IPv6 address
with a port in brackets: ``[::1]:9000``). :func:`split_allow_entry` is how the outbound guard
reads one; :func:`allow_entry_problem` says why one is malformed, so a typo is refused when the
settings are read instead of silently allowing nothing.
"""

from __future__ import annotations

import ipaddress
import re

_LABEL = re.compile(r"(?!-)[a-z0-9-]{1,63}(?<!-)", re.ASCII)


def split_allow_entry(entry: str) -> tuple[str, int | None]:
    """``"host:port"`` → ``("host", port)``; ``"[v6]:port"`` and ``"[v6]"`` unbracketed; an
    entry without a port (a name, an IPv4 or bare IPv6 address, a CIDR) → ``(entry, None)``."""
    entry = entry.strip().lower()
    if entry.startswith("["):
        host, _, rest = entry[1:].partition("]")
        port = rest.removeprefix(":")
        return host, int(port) if port.isdigit() else None
    host, sep, port = entry.rpartition(":")
    if sep and ":" not in host and port.isdigit():
        return host, int(port)
    return entry, None


def _is_host_name(host: str) -> bool:
    name = host.removesuffix(".")
    return 0 < len(name) <= 253 and all(_LABEL.fullmatch(p) for p in name.split("."))


def allow_entry_problem(entry: str) -> str | None:
    """Why ``entry`` is not a host name, IP address or CIDR with an optional port in
    1-65535; None when it is well formed."""
    host, port = split_allow_entry(entry)
    if port is not None and not 1 <= port <= 65535:
        return f"port {port} is not in 1-65535"
    if entry.strip().startswith("[") and port is None and not entry.strip().endswith("]"):
        return "a bracketed IPv6 address takes a numeric :port"
    try:
        ipaddress.ip_network(host, strict=False)
        return None
    except ValueError:
        pass
    if _is_host_name(host):
        return None
    return "not a host name, an IP address or a CIDR (optionally with :port)"


__all__ = ["allow_entry_problem", "split_allow_entry"]
