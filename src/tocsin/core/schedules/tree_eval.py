"""A compound trigger's predicates and instants (SPEC §13); the decision that uses them (what
fires, what is skipped) is :func:`tocsin.core.schedules.decide.decide`.

Semantics (the seed's compound table): a time trigger is satisfied only *at* its instants; an
event trigger is *latched* from its event until the whole tree is satisfied and the schedule
fires, then every latch resets. So ``AND(T1, E1)`` fires at T1 when E1 happened at or before
T1 since the last fire, ``OR(T1, E1)`` at T1 or when E1 happens, ``AND(T1, T2)`` only when both
instants coincide, ``AND(E1, E2)`` once both happened.

Unsatisfied instants (skip reason ``compound_unsatisfied``): an instant where the tree is not
satisfied but would be had every event leaf occurred (it passed waiting for events,
:func:`waits_for_events`); an instant that cannot satisfy the tree whatever the events
(``AND(T1, T2)`` off their coincidence) is not. :func:`waiting_for` names the event leaves a
tree still needs at an instant.

Pure: no I/O, no clock.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta

from tocsin.core.schedules.tree import Compound, Cron, Event, Node, leaves
from tocsin.core.time import cron
from tocsin.core.time.cron.timeline import ZoneOffsets, resolve

#: how far the spring-forward gaps of a ``missing="shift"`` trigger are searched
GAP_HORIZON = timedelta(days=800)
ONE_SECOND = timedelta(seconds=1)


@dataclass(frozen=True, slots=True)
class Occurrence:
    """An event that happened at ``at``, matched to the leaves at ``paths`` (it latches them
    all at once: an event counts once per trigger, however many leaves name it)."""

    paths: tuple[str, ...]
    at: datetime


def satisfied(
    node: Node, latched: Collection[str], active: Collection[str], path: str = ""
) -> bool:
    """Is the tree satisfied with the event leaves ``latched`` and time leaves ``active``?"""
    if isinstance(node, Cron):
        return path in active
    if isinstance(node, Event):
        return path in latched
    parts = (
        satisfied(c, latched, active, f"{path}.{i}" if path else str(i))
        for i, c in enumerate(node.children)
    )
    return all(parts) if node.op == "all" else any(parts)


def event_paths(node: Node) -> frozenset[str]:
    """The paths of the tree's event leaves."""
    return frozenset(p for p, leaf in leaves(node) if isinstance(leaf, Event))


def waits_for_events(node: Node, latched: Collection[str], active: Collection[str]) -> bool:
    """Not satisfied now, but satisfied had every event leaf occurred: the tree waits for
    events (not for another time leaf's instant)."""
    if satisfied(node, latched, active):
        return False
    return satisfied(node, event_paths(node), active)


def waiting_for(
    node: Node, latched: Collection[str], active: Collection[str]
) -> list[tuple[str, Event]]:
    """The event leaves not yet latched, when the tree waits for events at ``active`` (see
    :func:`waits_for_events`); empty otherwise."""
    if not waits_for_events(node, latched, active):
        return []
    return [(p, leaf) for p, leaf in leaves(node) if isinstance(leaf, Event) and p not in latched]


def match_events(node: Node, events: Iterable[tuple[str, str, datetime]]) -> list[Occurrence]:
    """Each ``(kind, subject, at)`` event as an occurrence on every leaf it satisfies."""
    by_key: dict[tuple[str, str], list[str]] = {}
    for path, leaf in leaves(node):
        if isinstance(leaf, Event):
            by_key.setdefault((leaf.kind, leaf.subject), []).append(path)
    out = [
        Occurrence(tuple(by_key[(kind, subject)]), at)
        for kind, subject, at in events
        if (kind, subject) in by_key
    ]
    return sorted(out, key=lambda o: o.at)


def subjects(node: Node) -> set[tuple[str, str]]:
    """The ``(kind, subject)`` pairs the tree listens to."""
    return {(leaf.kind, leaf.subject) for _, leaf in leaves(node) if isinstance(leaf, Event)}


# --- instants -------------------------------------------------------------------------------


def next_instant(node: Node, after: datetime) -> datetime | None:
    """The first instant strictly after ``after`` at which some time leaf is satisfied."""
    found = next_leaf_instant(node, after)
    return None if found is None else found[0]


def next_leaf_instant(node: Node, after: datetime) -> tuple[datetime, Cron] | None:
    """:func:`next_instant` and the time leaf it is an instant of (the first in tree order
    when several share it): its zone is the one to read the instant in."""
    found = [
        (at, leaf)
        for _, leaf in leaves(node)
        if isinstance(leaf, Cron) and (at := next_of(leaf, after))
    ]
    return min(found, key=lambda pair: pair[0]) if found else None


def previous_instant(node: Node, before: datetime) -> datetime | None:
    """The last instant strictly before ``before`` at which some time leaf is satisfied
    (searched back :data:`GAP_HORIZON`): a skip range's merge point."""
    low, high = before - GAP_HORIZON, before - timedelta(microseconds=1)
    found = [
        at
        for _, leaf in leaves(node)
        if isinstance(leaf, Cron) and (at := latest_in(leaf, low, high)) is not None
    ]
    return max(found) if found else None


def next_of(leaf: Cron, after: datetime) -> datetime | None:
    spec = cron.parse(leaf.expression, dialect="extended")
    plain = cron.next_after(spec, after, tz=leaf.timezone, repeated=leaf.repeated)
    if leaf.missing == "shift":
        shifted = next(iter(_shifted(leaf, after, after + GAP_HORIZON)), None)
        if shifted is not None and (plain is None or shifted < plain):
            return shifted
    return plain


def latest_in(leaf: Cron, after: datetime, now: datetime) -> datetime | None:
    """The latest instant of ``leaf`` in ``(after, now]``, or None."""
    spec = cron.parse(leaf.expression, dialect="extended")
    found = cron.prev_at_or_before(spec, now, tz=leaf.timezone, repeated=leaf.repeated)
    if leaf.missing == "shift":
        low = max(after, now - GAP_HORIZON)
        shifted = list(_shifted(leaf, low, now))
        if shifted and (found is None or shifted[-1] > found):
            found = shifted[-1]
    return found if found is not None and found > after else None


def fires_at(leaf: Cron, at: datetime) -> bool:
    """Is ``at`` one of the leaf's instants?"""
    spec = cron.parse(leaf.expression, dialect="extended")
    if cron.prev_at_or_before(spec, at, tz=leaf.timezone, repeated=leaf.repeated) == at:
        return True
    return leaf.missing == "shift" and at in _shifted(leaf, at - ONE_SECOND, at)


def _shifted(leaf: Cron, low: datetime, high: datetime) -> Iterator[datetime]:
    """``missing="shift"``: the end of each spring-forward gap in ``(low, high]`` that swallowed
    a wall time of the leaf (the first valid instant after the gap)."""
    spec = cron.parse(leaf.expression, dialect="extended")
    for end, wall_from, wall_to in _gaps(leaf.timezone, low, high):
        wall = cron.next_after(spec, wall_from - ONE_SECOND, tz=None)
        if wall is not None and wall < wall_to:
            yield end


def _gaps(
    tz: str | None, low: datetime, high: datetime
) -> Iterator[tuple[datetime, datetime, datetime]]:
    """``(instant, first skipped wall, first wall after)`` of each forward jump in ``(low, high]``;
    walls are UTC-tagged datetimes."""
    zone = resolve(tz)
    if not isinstance(zone, ZoneOffsets):
        return
    instant = low
    for _ in range(64):
        _start, end, offset, _before = zone.segment(instant)
        if end > high:
            return
        following = zone.segment(end)[2]
        if following > offset and end > low:
            yield end, end + offset, end + following
        instant = end


__all__ = [
    "Compound",
    "Occurrence",
    "event_paths",
    "fires_at",
    "latest_in",
    "match_events",
    "next_instant",
    "next_leaf_instant",
    "next_of",
    "previous_instant",
    "satisfied",
    "subjects",
    "waiting_for",
    "waits_for_events",
]
