"""``api_call``: an HTTP request with templated method, url, headers and body (SPEC §10).

Config: ``method`` (default GET), ``url``, ``headers``, ``body`` (a JSON value, sent as JSON; a
string is sent as-is), ``timeout_s``. Non-2xx is a failure; the same ``Idempotency-Key`` and
``User-Agent`` as ``webhook`` are sent, and the same headers cannot be configured.
The receipt detail carries the status and the start of the answer.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tocsin import messages
from tocsin.actions.base import ActionContext, ActionError, require_str
from tocsin.actions.net import send
from tocsin.actions.webhook import rendered_headers

METHODS = frozenset({"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD"})


class ApiCall:
    type = "api_call"

    def execute(self, ctx: ActionContext, config: Mapping[str, Any]) -> str:
        method = str(ctx.render(config.get("method", "GET"))).upper()
        if method not in METHODS:
            raise ActionError(messages.api_call_method_invalid(method, METHODS))
        url = str(ctx.render(require_str(config, "url", self.type)))
        body = ctx.render(config.get("body"))
        response = send(
            ctx.env,
            method=method,
            url=url,
            headers=rendered_headers(ctx, config, self.type),
            json_body=None if isinstance(body, str) else body,
            content=body if isinstance(body, str) else None,
            timeout_s=config.get("timeout_s"),
        )
        return f"{method} {url} → {response.status_code}: {response.text[:200]}"
