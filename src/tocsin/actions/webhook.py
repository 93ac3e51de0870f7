"""``webhook``: HTTP POST of a JSON payload to ``url`` (SPEC §10).

Config: ``url`` (templated), optional ``payload`` (templated JSON; default: the run's ids, its
scheduled instant and the row snapshot), ``headers`` (templated), ``timeout_s``. Non-2xx is a
failure. Every request carries ``Idempotency-Key: tocsin-<run id>-<action id>``, the same on
every attempt, so a receiver can drop a repeat sent after a crash before the receipt was stored.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tocsin.actions.base import ActionContext, require_str
from tocsin.actions.net import send
from tocsin.core.instants import to_rfc3339


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
    return headers


class Webhook:
    type = "webhook"

    def execute(self, ctx: ActionContext, config: Mapping[str, Any]) -> str:
        url = str(ctx.render(require_str(config, "url", self.type)))
        payload = ctx.render(config["payload"]) if "payload" in config else default_payload(ctx)
        response = send(
            ctx.env,
            method="POST",
            url=url,
            headers=rendered_headers(ctx, config),
            json_body=payload,
            timeout_s=config.get("timeout_s"),
        )
        return f"POST {url} → {response.status_code}"
