"""Defining a lane in code: ``Lane``, ``Candidate``, ``SourceUnavailable`` (SPEC §14).

```python
def fetch(window, ctx) -> list[Candidate]: ...      # may raise SourceUnavailable("timeout")
def policy(c: Candidate) -> bool: ...               # the versioned selection rule
def handle(accepted: list[Candidate], contract) -> None: ...
intake = Lane(id="content-intake", schedule=Schedule(cron="30 7 * * *", timezone="Asia/Taipei"),
              policy_version="policy-v1", source=fetch, select=policy, handler=handle)
```

- ``schedule`` is any object with ``cron`` and ``timezone`` (``tocsin.Schedule``); a scheduled
  lane must name its zone explicitly, because the zone's offset is part of every ``run_id``
  (a host-dependent default would change ids between hosts). A lane without a schedule runs only
  when triggered, and formats its instants in ``timezone`` (default ``UTC``).
- ``retry`` (the keys of a trigger's ``"retry"``) retries a failed handler: a new attempt of the
  run (kind ``retry``) waits ``pending`` until its ``next_attempt_at``; ``on_failure`` (a list of
  actions, or a callable taking the failed attempt) runs once when the handler failed for good.
  The handler may raise ``tocsin.NonRetryable`` to fail at once.
- ``catch_up`` says what a scheduled lane does with the instants it missed while down (the tick
  did not run): ``"all"`` (the default) runs each missed window in order, so no data window is
  lost; ``"latest"`` runs once over the merged window ``[end of the last processed window,
  latest instant)``; ``"none"`` runs none of them (recorded as skips) and goes on from the next
  instant (:mod:`tocsin.core.schedules.lane`).
- ``fetch(window, ctx)`` receives the :class:`~tocsin.core.contract.lane.Window` and a
  :class:`SourceContext` (lane id, run id, attempt, kind, scheduled_for, observed_at).

Pure: no I/O, no clock.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from tocsin import messages
from tocsin.core.config.run_policies import Alerts, checked_alerts, checked_retry
from tocsin.core.contract.lane import Window
from tocsin.core.schedules.lane import CATCH_UP, DEFAULT_CATCH_UP, LaneSchedule
from tocsin.core.time import cron
from tocsin.core.time.zones import is_known_zone
from tocsin.errors import ConfigError

MAX_LANE_ID = 64
MAX_POLICY_VERSION = 200
_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*", re.ASCII)


class SourceUnavailable(Exception):
    """Raised by a lane's source when it could not answer; ``category`` is recorded."""

    def __init__(self, category: str = "unavailable", detail: str | None = None) -> None:
        super().__init__(detail or category)
        self.category = category if isinstance(category, str) and category else "unavailable"
        self.detail = detail


@dataclass(frozen=True, slots=True)
class Candidate:
    """One item a source returned: placed in a window by its own ``occurred_at``."""

    ref: str
    occurred_at: datetime
    data: Any = None


@dataclass(frozen=True, slots=True, kw_only=True)
class SourceContext:
    lane_id: str
    run_id: str
    attempt: int
    kind: str
    scheduled_for: datetime
    observed_at: datetime


Fetch = Callable[[Window, SourceContext], Sequence[Candidate]]
Policy = Callable[[Candidate], bool]
Handler = Callable[[list[Candidate], dict[str, Any]], Any]


def _fail(name: str, value: object) -> ConfigError:
    return ConfigError(messages.lane_invalid(name, value), code="lane_invalid")


@dataclass(frozen=True, slots=True, kw_only=True)
class Lane:
    """A named intake pipeline over half-open windows, recording a run contract per run."""

    id: str
    policy_version: str
    source: Fetch
    select: Policy
    handler: Handler
    schedule: Any = None
    timezone: str | None = None
    retry: Any = None  # the handler's retry policy (the keys of a trigger's "retry")
    on_failure: Alerts | None = None  # actions or a callable, once per run failed for good
    catch_up: str = DEFAULT_CATCH_UP
    zone: str = field(init=False, default="UTC")

    def __post_init__(self) -> None:
        if not isinstance(self.id, str) or len(self.id) > MAX_LANE_ID or not _ID.fullmatch(self.id):
            raise _fail("id", self.id)
        version = self.policy_version
        if not isinstance(version, str) or not version or len(version) > MAX_POLICY_VERSION:
            raise _fail("policy_version", version)
        for name in ("source", "select", "handler"):
            if not callable(getattr(self, name)):
                raise _fail(name, getattr(self, name))
        if not isinstance(self.catch_up, str) or self.catch_up not in CATCH_UP:
            raise ConfigError(messages.catch_up_invalid(self.catch_up), code="catch_up")
        object.__setattr__(self, "zone", self._zone())
        owner = f"lane '{self.id}'"
        object.__setattr__(self, "retry", checked_retry(owner, self.retry, "lane_invalid"))
        checked_alerts(owner, self.on_failure, "lane_invalid")

    def _zone(self) -> str:
        zone: object
        if self.schedule is None:
            zone = self.timezone or "UTC"
        else:
            expression = getattr(self.schedule, "cron", None)
            zone = getattr(self.schedule, "timezone", None)
            if not isinstance(expression, str):
                raise _fail("schedule", self.schedule)
            cron.parse(expression, dialect="extended")  # raises CronError (a ConfigError)
            if zone is None:
                raise _fail(messages.LANE_ZONE_MISSING, None)
            if self.timezone is not None and self.timezone != zone:
                raise _fail(messages.LANE_ZONE_DIFFERS, self.timezone)
        if not isinstance(zone, str) or not is_known_zone(zone):
            raise _fail("timezone", zone)
        return zone

    @property
    def cron(self) -> str | None:
        return None if self.schedule is None else str(self.schedule.cron)

    @property
    def timing(self) -> LaneSchedule | None:
        """The lane's schedule for the decision (None without a schedule)."""
        if self.cron is None:
            return None
        return LaneSchedule(self.id, self.cron, self.zone, self.catch_up)


__all__ = ["Candidate", "Lane", "SourceContext", "SourceUnavailable"]
