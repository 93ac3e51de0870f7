"""tocsin: a durable trigger and schedule engine. Every occurrence fires at most once."""

from __future__ import annotations

from tocsin import errors
from tocsin.errors import ConfigError, Conflict, NotFound, PermissionDenied, TocsinError
from tocsin.lanes import Candidate, Lane, SourceUnavailable
from tocsin.service import Tocsin
from tocsin.workflows import Schedule, StepContext, step, workflow

__all__ = [
    "Candidate",
    "ConfigError",
    "Conflict",
    "Lane",
    "NotFound",
    "PermissionDenied",
    "Schedule",
    "SourceUnavailable",
    "StepContext",
    "Tocsin",
    "TocsinError",
    "errors",
    "step",
    "workflow",
]
