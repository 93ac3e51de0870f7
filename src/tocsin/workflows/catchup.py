"""What a due workflow schedule fires, and what it skips, at ``now``. Pure.

The instants owed are ``next_fire_at .. latest`` (``latest``: the latest instant ``<= now``, or
``next_fire_at`` itself when later). Then:

- ``overlap="skip"`` with a run still pending or running: nothing fires, every owed instant is
  skipped (``active_run``);
- ``catch_up="latest"`` (default, the coalescing of SPEC §5.3): ``latest`` fires, the older
  owed instants are skipped (``coalesced``);
- ``catch_up="none"``: ``latest`` fires only when it is the only instant owed (the schedule
  is on time); after downtime every owed instant is skipped (``coalesced``);
- ``catch_up="all"``: the newest ``max_catch_up`` owed instants fire, oldest first; older ones
  are skipped (``coalesced``);
- a fire also records the spring-forward gaps it passed whose wall times the cron matches
  (``dst_gap``: a wall time that does not exist never fires).

Used by the tick's schedule pass (:mod:`tocsin.workflows.firing`) and the global dry run
(``Tocsin.due``): one copy of the rules.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from tocsin.core.schedules import skips
from tocsin.core.time import cron
from tocsin.core.time.cron.timeline import Timeline, resolve
from tocsin.workflows.timing import latest_due, next_fire_after

CATCH_UP = ("latest", "none", "all")
DEFAULT_MAX_CATCH_UP = 100
MAX_MAX_CATCH_UP = 10_000
_TICK = timedelta(microseconds=1)


@dataclass(slots=True)
class Decision:
    """The instants to fire (oldest first) and the skipped ranges."""

    fire: list[datetime] = field(default_factory=list)
    skips: list[skips.SkipRange] = field(default_factory=list)


def decide(row: Mapping[str, Any], due: datetime | None, *, busy: bool, now: datetime) -> Decision:
    """The decision for a claimed due ``row`` (``due``: its latest instant ``<= now``)."""
    first: datetime = row["next_fire_at"]
    latest = max(due, first) if due is not None else first
    out = Decision()
    if busy:
        out.skips += owed_range(row, first, latest, skips.ACTIVE_RUN, inclusive=True)
        return out
    policy = row["catch_up"]
    if policy == "none" and first < latest:
        out.skips += owed_range(row, first, latest, skips.COALESCED, inclusive=True)
        return out
    fire = [latest]
    if policy == "all":
        limit = int(row["max_catch_up"])
        while len(fire) < limit:
            before = latest_due(row["cron"], row["timezone"], fire[0] - _TICK)
            if before is None or before < first:
                break
            fire.insert(0, before)
    out.fire = fire
    out.skips += owed_range(row, first, fire[0], skips.COALESCED, inclusive=False)
    out.skips += dst_gaps(row, first, latest)
    return out


def dst_gaps(row: Mapping[str, Any], first: datetime, latest: datetime) -> list[skips.SkipRange]:
    """The spring-forward gaps since the instant before ``first`` up to ``latest`` whose wall
    times the schedule matches: those never fire (``dst_gap``). Fixed-offset zones: none."""
    tz = row["timezone"]
    if not isinstance(resolve(tz), Timeline):
        return []
    spec = cron.parse(row["cron"], dialect="extended")
    since = latest_due(row["cron"], tz, first - _TICK) or first
    return [
        skips.SkipRange(skips.SCHEDULE, str(row["id"]), skips.DST_GAP, at, at, walls)
        for at, walls in skips.gap_walls(spec, tz, since, latest)
    ]


def owed_range(
    row: Mapping[str, Any], first: datetime, end: datetime, reason: str, *, inclusive: bool
) -> list[skips.SkipRange]:
    """The schedule's instants ``first ..`` up to ``end`` (included or not) as one range."""
    cron, tz = row["cron"], row["timezone"]
    before = end + _TICK if inclusive else end
    found = skips.span(first, before, lambda at: next_fire_after(cron, tz, at))
    if found is None:
        return []
    last, count, capped = found
    after = latest_due(cron, tz, first - _TICK)
    rng = skips.SkipRange(skips.SCHEDULE, str(row["id"]), reason, first, last, count, after, capped)
    return [rng]


__all__ = [
    "CATCH_UP",
    "DEFAULT_MAX_CATCH_UP",
    "MAX_MAX_CATCH_UP",
    "Decision",
    "decide",
    "owed_range",
]
