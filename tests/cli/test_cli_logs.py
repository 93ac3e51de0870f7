"""Structured logs (SPEC §16): one JSON object per line, extras kept, exceptions included."""

from __future__ import annotations

import json
import logging

from tocsin.cli.logs import JsonLinesFormatter


def record(msg: str, **extra: object) -> logging.LogRecord:
    rec = logging.makeLogRecord({"name": "tocsin.ticker", "levelname": "INFO", "msg": msg})
    for key, value in extra.items():
        setattr(rec, key, value)
    return rec


def test_a_log_line_is_one_json_object_with_its_extras() -> None:
    line = JsonLinesFormatter().format(record("tick", runs_created=2, duration_s=0.01))
    assert "\n" not in line
    entry = json.loads(line)
    assert entry["msg"] == "tick" and entry["logger"] == "tocsin.ticker"
    assert entry["level"] == "info" and entry["runs_created"] == 2
    assert entry["ts"].endswith("+00:00")


def test_exceptions_are_kept_in_the_line() -> None:
    try:
        raise RuntimeError("boom")
    except RuntimeError:
        import sys

        rec = record("failed")
        rec.exc_info = sys.exc_info()
    entry = json.loads(JsonLinesFormatter().format(rec))
    assert "RuntimeError: boom" in entry["exc"]


def test_uvicorns_coloured_copy_of_the_message_is_not_emitted() -> None:
    rec = record("Started server process [%d]", color_message="Started \x1b[36m%d\x1b[0m")
    rec.args = (42,)
    entry = json.loads(JsonLinesFormatter().format(rec))
    assert entry["msg"] == "Started server process [42]"
    assert "color_message" not in entry
