"""``webhook``: HTTP POST of a JSON payload to ``url`` (SPEC §10), signed (``actions.signing``).

Config: ``url`` (templated), optional ``payload`` (templated JSON; default: the run's ids, its
scheduled instant and the row snapshot), ``headers`` (templated), ``method`` (POST, PUT or
PATCH; default POST), ``timeout_s``. Non-2xx is a failure. Every request is signed with the
scope's secret (``actions.signing``: ``X-Tocsin-Timestamp``, ``X-Tocsin-Signature``) and says
``User-Agent: tocsin/<version>``. Every request carries ``Idempotency-Key: tocsin-<run id>-<action
id>``, the same on every attempt, so a receiver can drop a repeat sent after a crash before the
receipt was stored. The headers tocsin sets (``core.config.action_checks.reserved_header``) cannot
be configured: refused at save, and a stored config naming one fails its run before anything is
sent. A configured ``Content-Type`` is replaced by ``application/json``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tocsin import messages
from tocsin.actions.base import ActionContext, ActionError, require_str
from tocsin.actions.net import send
from tocsin.actions.signing import (
    USER_AGENT,
    json_body,
    scope_secret,
    signature_headers,
)
from tocsin.core.config.action_checks import reserved_header
from tocsin.core.time.instants import to_rfc3339


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


def rendered_headers(ctx: ActionContext, config: Mapping[str, Any], kind: str) -> dict[str, str]:
    """The configured headers, rendered, plus tocsin's ``Idempotency-Key`` (receivers
    deduplicate on it: ``tocsin-<run id>-<action id>`` on every attempt) and ``User-Agent``.

    A configured header tocsin sets itself (a config stored before such headers were refused at
    save) fails the action before anything is sent.
    """
    raw = config.get("headers") or {}
    if (name := reserved_header(raw)) is not None:
        raise ActionError(messages.header_reserved(kind, name))
    headers = {str(k): str(v) for k, v in dict(ctx.render(raw)).items()}
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
        configured = rendered_headers(ctx, config, self.type)
        headers = {
            **{k: v for k, v in configured.items() if k.lower() != "content-type"},
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
