"""Error rendering: every error is JSON ``{"detail": …}`` (SPEC §15).

- :class:`~tocsin.errors.TocsinError` → its ``.status`` and ``.detail`` (401 adds
  ``WWW-Authenticate: Bearer``, 503 ``Retry-After: 1``)
- request validation → 422 in FastAPI's shape (inputs JSON cannot echo are spelled as strings,
  an ``input`` longer than ``INPUT_ECHO_CHARS`` as JSON is cut to that many characters: a
  megabyte body is not echoed back whole)
- an unreachable database (``StoreUnavailable``) → 503 with ``Retry-After``
- anything else is a bug: logged with its traceback, answered 500 ``internal server error``
"""

from __future__ import annotations

import json
import logging
import math
from typing import Any

from fastapi import FastAPI, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse

from tocsin import messages
from tocsin.errors import StoreUnavailable, TocsinError

log = logging.getLogger("tocsin.api")


# 401 names the scheme; 503 (a lock conflict that outlived its retries) is worth retrying soon
HEADERS_BY_STATUS = {401: {"WWW-Authenticate": "Bearer"}, 503: {"Retry-After": "1"}}
# a database that does not answer is likely down for a few seconds at least
UNAVAILABLE_RETRY_AFTER_S = "5"


def error_headers(exc: TocsinError) -> dict[str, str] | None:
    """The headers an error is answered with (``WWW-Authenticate``, ``Retry-After``)."""
    if isinstance(exc, StoreUnavailable):
        return {"Retry-After": UNAVAILABLE_RETRY_AFTER_S}
    return HEADERS_BY_STATUS.get(exc.status)


async def tocsin_error(request: Request, exc: Exception) -> JSONResponse:
    if not isinstance(exc, TocsinError):  # registered for TocsinError only
        raise exc
    headers = error_headers(exc)
    if exc.status >= 500:
        log.warning("store error", extra={"path": request.url.path, "detail": exc.detail})
    return JSONResponse({"detail": exc.detail}, status_code=exc.status, headers=headers)


def json_safe(value: Any) -> Any:
    """``value`` with non-finite floats spelled as strings and lone surrogates escaped
    (``\\ud800``), so it renders as strict UTF-8 JSON."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, str):
        return value.encode("utf-8", "backslashreplace").decode("utf-8")
    if isinstance(value, dict):
        return {json_safe(key): json_safe(item) for key, item in value.items()}
    if isinstance(value, list):
        return [json_safe(item) for item in value]
    return value


INPUT_ECHO_CHARS = 200
TRUNCATED = "…"


def short_input(value: Any) -> Any:
    """``value`` when it is short; otherwise its first ``INPUT_ECHO_CHARS`` characters (of the
    string, or of the JSON text of anything else) followed by ``…``."""
    if isinstance(value, str):
        text = value
    elif isinstance(value, dict | list):
        text = json.dumps(value, default=str, ensure_ascii=False)
    else:
        return value
    return value if len(text) <= INPUT_ECHO_CHARS else text[:INPUT_ECHO_CHARS] + TRUNCATED


def _shortened(error: Any) -> Any:
    if isinstance(error, dict) and "input" in error:
        return {**error, "input": short_input(error["input"])}
    return error


async def validation_error(request: Request, exc: Exception) -> JSONResponse:
    """FastAPI's 422 shape, safe for inputs JSON cannot echo (``NaN``, ``Infinity``), with long
    inputs cut short."""
    if not isinstance(exc, RequestValidationError):
        raise exc
    detail = json_safe([_shortened(error) for error in jsonable_encoder(exc.errors())])
    return JSONResponse({"detail": detail}, status_code=422)


async def unexpected_error(request: Request, exc: Exception) -> JSONResponse:
    log.error(
        "unhandled error",
        exc_info=(type(exc), exc, exc.__traceback__),
        extra={"path": request.url.path, "method": request.method},
    )
    return JSONResponse({"detail": messages.INTERNAL_ERROR}, status_code=500)


def install_error_handlers(app: FastAPI) -> None:
    app.add_exception_handler(TocsinError, tocsin_error)
    app.add_exception_handler(RequestValidationError, validation_error)
    app.add_exception_handler(Exception, unexpected_error)
