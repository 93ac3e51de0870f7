"""Signed webhooks: the Standard-Webhooks / Stripe convention.

Every ``webhook`` request carries::

    User-Agent: tocsin/<version>
    X-Tocsin-Timestamp: <unix seconds of the attempt>
    X-Tocsin-Signature: v1=<hex HMAC-SHA256 of "<timestamp>.<body>">

keyed with the signing secret of the table's scope (UTF-8 text of the secret, as
``Tocsin.rotate_secret`` / ``tocsin secrets rotate`` print it). The body is the exact bytes sent
(compact JSON, UTF-8). A scope without a secret gets one on its first webhook; rotating replaces
it at once. Receivers should recompute the HMAC over the raw body, compare in constant time, and
refuse timestamps older than a few minutes (replay). ``api_call`` is not signed: it talks to
third-party APIs that authenticate with their own headers; it sends the same ``User-Agent``.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from tocsin.actions.base import ActionContext
from tocsin.store.secrets import ensure_secret

SIGNATURE_HEADER = "X-Tocsin-Signature"
TIMESTAMP_HEADER = "X-Tocsin-Timestamp"
SIGNATURE_VERSION = "v1"


def _version() -> str:
    try:
        return version("tocsin")
    except PackageNotFoundError:  # running from a source tree that was never installed
        return "0"


USER_AGENT = f"tocsin/{_version()}"


def new_secret() -> str:
    """A fresh signing secret: 32 random bytes as 64 hex characters, prefixed ``whsec_``."""
    return "whsec_" + secrets.token_hex(32)


def sign(secret: str, timestamp: str, body: bytes) -> str:
    """``v1=<hex HMAC-SHA256(secret, "<timestamp>." + body)>``."""
    mac = hmac.new(secret.encode(), timestamp.encode() + b"." + body, hashlib.sha256)
    return f"{SIGNATURE_VERSION}={mac.hexdigest()}"


def json_body(value: Any) -> bytes:
    """The exact bytes a JSON body is sent as (and signed over)."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return text.encode()


def scope_secret(ctx: ActionContext) -> str:
    """The signing secret of the run's table's scope, created on first use."""
    with ctx.env.store.begin() as tx:
        return ensure_secret(
            tx,
            scope=str(ctx.table.get("scope")),
            scope_id=str(ctx.table.get("scope_id")),
            candidate=new_secret(),
            now=ctx.now,
        )


def signature_headers(secret: str, timestamp: str, body: bytes) -> dict[str, str]:
    return {TIMESTAMP_HEADER: timestamp, SIGNATURE_HEADER: sign(secret, timestamp, body)}


__all__ = [
    "SIGNATURE_HEADER",
    "TIMESTAMP_HEADER",
    "USER_AGENT",
    "json_body",
    "new_secret",
    "scope_secret",
    "sign",
    "signature_headers",
]
