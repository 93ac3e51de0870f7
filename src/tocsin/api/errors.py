"""Error rendering: every error is JSON ``{"detail": …}`` (SPEC §15).

- :class:`~tocsin.errors.TocsinError` → its ``.status`` and ``.detail`` (401 adds
  ``WWW-Authenticate: Bearer``)
- request validation → 422 in FastAPI's shape
- anything else is a bug: logged with its traceback, answered 500 ``internal server error``
"""

from __future__ import annotations

import logging

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from tocsin import messages
from tocsin.errors import TocsinError

log = logging.getLogger("tocsin.api")


async def tocsin_error(request: Request, exc: Exception) -> JSONResponse:
    if not isinstance(exc, TocsinError):  # registered for TocsinError only
        raise exc
    headers = {"WWW-Authenticate": "Bearer"} if exc.status == 401 else None
    if exc.status >= 500:
        log.warning("store error", extra={"path": request.url.path, "detail": exc.detail})
    return JSONResponse({"detail": exc.detail}, status_code=exc.status, headers=headers)


async def unexpected_error(request: Request, exc: Exception) -> JSONResponse:
    log.error(
        "unhandled error",
        exc_info=(type(exc), exc, exc.__traceback__),
        extra={"path": request.url.path, "method": request.method},
    )
    return JSONResponse({"detail": messages.INTERNAL_ERROR}, status_code=500)


def install_error_handlers(app: FastAPI) -> None:
    app.add_exception_handler(TocsinError, tocsin_error)
    app.add_exception_handler(Exception, unexpected_error)
