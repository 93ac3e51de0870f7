"""``HeadAsGet``: a HEAD request is answered as its GET, without the body (RFC 9110 §9.3.2).

FastAPI routes declared with ``@router.get`` answer HEAD with 405, so ``curl -I``, uptime
probes and load balancers that check ``/healthz`` or ``/readyz`` with HEAD saw a failure. This
pure ASGI middleware runs the GET route and sends its status and headers (``Content-Length``
included: the size the GET body would have) with an empty body. The OpenAPI schema is left as
it is: HEAD is no separate operation.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send


class HeadAsGet:
    """See the module docstring."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "HEAD":
            await self.app(scope, receive, send)
            return

        async def headers_only(message: Message) -> None:
            if message["type"] == "http.response.body":
                if message.get("more_body", False):
                    return  # the GET body's next chunk: not sent
                message = {"type": "http.response.body", "body": b""}
            await send(message)

        await self.app({**scope, "method": "GET"}, receive, headers_only)


__all__ = ["HeadAsGet"]
