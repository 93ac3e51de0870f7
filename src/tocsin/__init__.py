"""tocsin: a durable trigger and schedule engine. Every occurrence fires at most once."""

from __future__ import annotations

from tocsin import errors
from tocsin.errors import ConfigError, Conflict, NotFound, PermissionDenied, TocsinError
from tocsin.service import Tocsin
from tocsin.workflows import Schedule, StepContext, step, workflow

__all__ = [
    "ConfigError",
    "Conflict",
    "NotFound",
    "PermissionDenied",
    "Schedule",
    "StepContext",
    "Tocsin",
    "TocsinError",
    "errors",
    "step",
    "workflow",
]
