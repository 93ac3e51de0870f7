"""tocsin: a durable trigger and schedule engine. Every occurrence fires at most once."""

from __future__ import annotations

from tocsin import errors
from tocsin.core.schedules.tree import (
    AllOf,
    AnyOf,
    Cron,
    DefinitionChanged,
    ScheduleSucceeded,
    TableUpdated,
    WorkflowSucceeded,
)
from tocsin.errors import (
    ConfigError,
    Conflict,
    NonRetryable,
    NotFound,
    PermissionDenied,
    TocsinError,
)
from tocsin.lanes import Candidate, Lane, SourceUnavailable
from tocsin.service import Tocsin
from tocsin.workflows import Schedule, StepContext, step, workflow

__all__ = [
    "AllOf",
    "AnyOf",
    "Candidate",
    "ConfigError",
    "Conflict",
    "Cron",
    "DefinitionChanged",
    "Lane",
    "NonRetryable",
    "NotFound",
    "PermissionDenied",
    "Schedule",
    "ScheduleSucceeded",
    "SourceUnavailable",
    "StepContext",
    "TableUpdated",
    "Tocsin",
    "TocsinError",
    "WorkflowSucceeded",
    "errors",
    "step",
    "workflow",
]
