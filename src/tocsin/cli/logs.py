"""Structured logs: one JSON object per line on stderr, through stdlib logging (SPEC §16)."""

from __future__ import annotations

import json
import logging
import re
import sys
from datetime import UTC, datetime
from typing import Any

# attributes every LogRecord has; anything else was passed with ``extra=`` and is emitted
# (except uvicorn's ``color_message``: the same message with terminal colour codes)
_STANDARD = set(vars(logging.makeLogRecord({}))) | {
    "message",
    "asctime",
    "taskName",
    "color_message",
}
# Studio's one-click sign-in link (``/login?token=…``) must not leave its token in access logs
_TOKEN_IN_QUERY = re.compile(r"([?&]token=)[^&\s\"]+")


class JsonLinesFormatter(logging.Formatter):
    """``{"ts", "level", "logger", "msg", …extra, "exc"?}`` on one line."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(),
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": _TOKEN_IN_QUERY.sub(r"\1[redacted]", record.getMessage()),
        }
        for key, value in vars(record).items():
            if key not in _STANDARD and not key.startswith("_"):
                entry[key] = value
        if record.exc_info:
            entry["exc"] = self.formatException(record.exc_info)
        return json.dumps(entry, default=str)


def configure_logging(level: int = logging.INFO) -> None:
    """Route every logger (uvicorn's too) through one JSON-lines handler on stderr."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonLinesFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):
        logging.getLogger(name).handlers[:] = []
        logging.getLogger(name).propagate = True
    logging.getLogger("alembic").setLevel(logging.WARNING)  # migrations log every plugin
