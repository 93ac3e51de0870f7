"""The pause rule of every schedule (SPEC §5): an instant that falls due inside a pause (its
bounds included) never fires, not even after the resume; it is skipped ``paused``. Pure.

Two callers apply it to what they own:

- the one decision (:func:`tocsin.core.schedules.decide.decide`) of a paused schedule, taken at
  its resume: the pause runs from its first owed instant to ``now`` (:func:`owed_pause`), every
  owed instant lies inside it and is skipped, one range of the counted instants;
- a ``date_column_reached`` trigger's per-record scan (``engine.evaluate``): a record's fire
  instant inside one of the trigger's pauses (:func:`pauses_at`: its past pauses, and the
  current one while paused) is consumed without a run (:func:`pause_of`), and the values a tick
  consumed count into one range per pause, its bounds the pause's (:func:`value_skips`).

Both build the range through :func:`paused_range`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime, timedelta

from tocsin.core.schedules.skips import PAUSED, TRIGGER, SkipRange
from tocsin.core.schedules.timeline import shifted

Pause = tuple[datetime, datetime]  # (from, until), bounds included
Pauses = Sequence[Pause]
#: a timeline's counting of its instants ``first ..`` before ``before`` as ranges of a target:
#: ``(target id, reason, first, before, target kind) -> ranges``
Counter = Callable[[str, str, datetime, datetime, str], list[SkipRange]]
_TICK = timedelta(microseconds=1)


def pause_of(pauses: Pauses, at: datetime) -> Pause | None:
    """The pause ``at`` falls inside, bounds included (``at`` never fires); None when none."""
    for start, until in pauses:
        if start <= at <= until:
            return start, until
    return None


def pauses_at(pauses: Pauses, paused_at: datetime | None, now: datetime) -> tuple[Pause, ...]:
    """A schedule's pauses as seen at ``now``: its past ones, and while it is paused the pause
    so far (``paused_at .. now``)."""
    if paused_at is None:
        return tuple(pauses)
    return (*pauses, (min(paused_at, now), now))


def owed_pause(first: datetime | None, now: datetime) -> Pause | None:
    """The pause a decision taken at resume (``now``) skips: from its first owed instant."""
    return None if first is None or first > now else (first, now)


def paused_range(
    target: tuple[str, str, str | None],
    first: datetime,
    last: datetime,
    count: int,
    after: datetime | None,
    at_least: bool = False,
) -> SkipRange:
    """``count`` instants ``first .. last`` of the target ``(kind, id, table id)`` that fell due
    inside a pause: one ``paused`` range, merged into a row ending at ``after``."""
    kind, target_id, table_id = target
    return SkipRange(kind, target_id, PAUSED, first, last, count, after, at_least, table_id)


def owed_skips(
    ranges: Counter,
    target: tuple[str, str],
    first: datetime,
    latest: datetime,
    now: datetime,
) -> list[SkipRange]:
    """The decision's side: the owed instants ``first .. latest`` of the target ``(kind, id)``
    inside the pause a decision at resume (``now``) skips (:func:`owed_pause`), counted on the
    schedule's timeline (``ranges``: its ``Timeline.ranges``), skipped ``paused``."""
    pause = owed_pause(first, now)
    if pause is None:
        return []
    kind, sid = target
    return [
        paused_range((kind, sid, None), r.first, r.last, r.count, r.after, r.at_least)
        for r in ranges(sid, PAUSED, first, shifted(latest, _TICK), kind)
        if pause_of((pause,), r.first) and pause_of((pause,), r.last)
    ]


def value_skips(table_id: str, trigger_id: str, pause: Pause, count: int) -> SkipRange:
    """The date trigger's side: ``count`` values whose fire instants fell inside ``pause`` and
    that a tick consumed, as one range per pause, its bounds the pause's. Its ``after`` is its
    own ``last``, so the values a later tick consumes for the same pause add to that one row."""
    start, until = pause
    return paused_range((TRIGGER, trigger_id, table_id), start, until, count, until)


__all__ = [
    "Counter",
    "Pause",
    "Pauses",
    "owed_pause",
    "owed_skips",
    "pause_of",
    "paused_range",
    "pauses_at",
    "value_skips",
]
