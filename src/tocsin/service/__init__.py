"""The facade: ``tocsin.Tocsin``, the one object users embed (DESIGN §4).

The class is assembled from mixins by concern so each stays under the module budget:

- :mod:`tocsin.service.base`: opening the store, settings, ids, the clock default at the edge
- :mod:`tocsin.service.data`: tables, records, row events, triggers, tick, preview, runs listing
- :mod:`tocsin.service.execution`: work, retry, requeue, staged changes, messages, commands
- :mod:`tocsin.service.auth`: API tokens and per-scope roles
- :mod:`tocsin.service.health`: the readiness ping
- :mod:`tocsin.service.triggers`: one trigger at a time (get, merge-patch, delete), a scope's tables
- :mod:`tocsin.service.iac`: export, plan and apply trigger and schedule documents (SPEC §11)
- :mod:`tocsin.service.secrets`: per-scope webhook signing secrets
- :mod:`tocsin.service.workflows`: workflows, schedules and workflow runs (SPEC §12)
- :mod:`tocsin.service.lanes`: lanes and their run contracts (SPEC §14)
- :mod:`tocsin.service.whynot`: skips, next fires, the global dry run, run-now (issue 17)
"""

from __future__ import annotations

from tocsin.service.auth import AuthMixin
from tocsin.service.base import TocsinBase
from tocsin.service.data import DataMixin
from tocsin.service.execution import ExecutionMixin
from tocsin.service.health import HealthMixin
from tocsin.service.iac import IacMixin
from tocsin.service.lanes import LanesMixin
from tocsin.service.secrets import SecretsMixin
from tocsin.service.triggers import TriggersMixin
from tocsin.service.whynot import WhyNotMixin
from tocsin.service.workflows import WorkflowsMixin


class Tocsin(
    LanesMixin,
    IacMixin,
    WorkflowsMixin,
    WhyNotMixin,
    TriggersMixin,
    DataMixin,
    ExecutionMixin,
    AuthMixin,
    HealthMixin,
    SecretsMixin,
    TocsinBase,
):
    """A durable trigger and schedule engine on one database. See DESIGN §4."""


__all__ = ["Tocsin"]
