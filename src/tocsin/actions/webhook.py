"""``webhook``: HTTP POST of a JSON payload to ``url`` (SPEC §10), signed (issue 18).

Config: ``url`` (templated), optional ``payload`` (templated JSON; default: the run's ids, its
scheduled instant and the row snapshot), ``headers`` (templated), ``method`` (POST, PUT or
PATCH; default POST), ``timeout_s``. Non-2xx is a failure. Every request is signed with the
scope's secret (``actions.signing``: ``X-Tocsin-Timestamp``, ``X-Tocsin-Signature``) and says
``User-Agent: tocsin/<version>``; configured headers cannot override those. Every request
carries ``Idempotency-Key: tocsin-<run id>-<action id>``, the same on
every attempt, so a receiver can drop a repeat sent after a crash before the receipt was stored.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tocsin.actions.base import ActionContext, require_str
from tocsin.actions.net import send
from tocsin.actions.signing import (
    SIGNATURE_HEADER,
    TIMESTAMP_HEADER,
    USER_AGENT,
    json_body,
    scope_secret,
    signature_headers,
)
from tocsin.core.instants import to_rfc3339

_OWN_HEADERS = frozenset(
    h.lower()
    for h in ("Idempotency-Key", SIGNATURE_HEADER, TIMESTAMP_HEADER, "User-Agent", "Content-Type")
)


def default_payload(ctx: ActionContext) -> dict[str, Any]:
    scheduled = ctx.run.get("scheduled_for")
    return {
        "run_id": ctx.run.get("id"),
        "table_id": ctx.run.get("table_id"),
        "trigger_id": ctx.run.get("trigger_id"),
        "action_id": ctx.action_id,
        "record_id": ctx.run.get("record_id"),
        "source": ctx.run.get("source"),
        "scheduled_for": to_rfc3339(scheduled) if scheduled is not None else None,
        "row": dict(ctx.row) if ctx.row is not None else {},
    }


def rendered_headers(ctx: ActionContext, config: Mapping[str, Any]) -> dict[str, str]:
    """The configured headers, rendered; ``Idempotency-Key`` is always tocsin's own.

    A configured header of that name (in any case) is dropped: receivers deduplicate on it, so
    it must stay ``tocsin-<run id>-<action id>`` on every attempt.
    """
    raw = config.get("headers") or {}
    rendered = dict(ctx.render(raw)).items()
    headers = {str(k): str(v) for k, v in rendered if str(k).lower() != "idempotency-key"}
    headers["Idempotency-Key"] = ctx.idempotency_key
    headers["User-Agent"] = USER_AGENT
    return headers


class Webhook:
    type = "webhook"

    def execute(self, ctx: ActionContext, config: Mapping[str, Any]) -> str:
        url = str(ctx.render(require_str(config, "url", self.type)))
        method = str(config.get("method", "POST"))
        payload = ctx.render(config["payload"]) if "payload" in config else default_payload(ctx)
        body = json_body(payload)
        timestamp = str(int(ctx.now.timestamp()))
        own = {
            k: v for k, v in rendered_headers(ctx, config).items() if k.lower() not in _OWN_HEADERS
        }
        headers = {
            **own,
            "Idempotency-Key": ctx.idempotency_key,
            "User-Agent": USER_AGENT,
            "Content-Type": "application/json",
            **signature_headers(scope_secret(ctx), timestamp, body),
        }
        response = send(
            ctx.env,
            method=method,
            url=url,
            headers=headers,
            content=body,
            timeout_s=config.get("timeout_s"),
        )
        return f"{method} {url} → {response.status_code}"
