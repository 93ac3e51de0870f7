"""A schedule's time instants (its trigger tree's, a plain cron's one leaf's), memoised: the
instants the decision (:mod:`tocsin.core.schedules.decide`) owes, looks at, coalesces and counts.

An instant the tree *could fire* at is one of its time leaves' instants at which it would be
satisfied had every event leaf occurred (every instant of a one-leaf tree). Pure: no I/O, no
clock; a tree's :class:`Timeline` is shared by every schedule of that timing.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from functools import lru_cache

from tocsin.core.schedules import skips
from tocsin.core.schedules.skips import SkipRange
from tocsin.core.schedules.tree import Cron, Event, Node, leaves
from tocsin.core.schedules.tree_eval import fires_at, latest_in, next_of, satisfied
from tocsin.core.time import cron
from tocsin.core.time.cron.timeline import ZoneOffsets, resolve

#: tree instants walked to find one the tree could fire at (``AND(T1, T2)``: their coincidence)
SEARCH_STEPS = 512
_TICK = timedelta(microseconds=1)
_HORIZON = timedelta(days=800)  # how far back a previous instant is searched
_MEMO_SIZE = 4096
_MISS = object()


class Timeline:
    """A tree's time instants, memoised (a tree is shared by every schedule of its timing)."""

    def __init__(self, tree: Node) -> None:
        self.tree = tree
        self.times = [(p, leaf) for p, leaf in leaves(tree) if isinstance(leaf, Cron)]
        self.events = frozenset(p for p, leaf in leaves(tree) if isinstance(leaf, Event))
        self.single = isinstance(tree, Cron)  # every instant could fire
        self._memo: dict[tuple[str, datetime], object] = {}
        #: the time leaves whose spring-forward gaps swallow instants (``dst_gap``)
        self.gapped = [
            leaf
            for _, leaf in self.times
            if leaf.missing == "skip" and isinstance(resolve(leaf.timezone or "UTC"), ZoneOffsets)
        ]

    def _keep(self, key: tuple[str, datetime], value: object) -> object:
        if len(self._memo) >= _MEMO_SIZE:
            self._memo.clear()
        self._memo[key] = value
        return value

    def next(self, after: datetime) -> datetime | None:
        """The first instant of any time leaf strictly after ``after``."""
        hit = self._memo.get(("next", after), _MISS)
        if hit is _MISS:
            found = [at for _, leaf in self.times if (at := next_of(leaf, after)) is not None]
            hit = self._keep(("next", after), min(found) if found else None)
        return hit  # type: ignore[return-value]

    def prev(self, before: datetime) -> datetime | None:
        """The last instant of any time leaf strictly before ``before``."""
        hit = self._memo.get(("prev", before), _MISS)
        if hit is _MISS:
            found = [at for _, leaf in self.times if (at := _prev_of(leaf, before)) is not None]
            hit = self._keep(("prev", before), max(found) if found else None)
        return hit  # type: ignore[return-value]

    def active(self, at: datetime) -> frozenset[str]:
        """The time leaves ``at`` is an instant of."""
        if self.single:
            return frozenset({""})

        hit = self._memo.get(("active", at), _MISS)
        if hit is _MISS:
            found = frozenset(p for p, leaf in self.times if fires_at(leaf, at))
            hit = self._keep(("active", at), found)
        return hit  # type: ignore[return-value]

    def could(self, at: datetime) -> bool:
        """Would the tree be satisfied at ``at`` had every event leaf occurred?"""
        return self.single or satisfied(self.tree, self.events, self.active(at))

    def next_could(self, after: datetime) -> datetime | None:
        at = self.next(after)
        for _ in range(SEARCH_STEPS):
            if at is None or self.could(at):
                return at
            at = self.next(at)
        return None

    def prev_could(self, before: datetime) -> datetime | None:
        at = self.prev(before)
        for _ in range(SEARCH_STEPS):
            if at is None or self.could(at):
                return at
            at = self.prev(at)
        return None

    def latest_could(self, now: datetime) -> datetime | None:
        """The latest instant ``<= now`` the tree could fire at."""
        return self.prev_could(shifted(now, _TICK))

    def ranges(
        self, sid: str, reason: str, first: datetime, before: datetime, kind: str = skips.SCHEDULE
    ) -> list[SkipRange]:
        """The could-fire instants ``first ..`` strictly before ``before`` as one range of the
        target ``(kind, sid)``."""
        found = skips.span(first, before, self.next_could)
        if found is None:
            return []
        last, count, capped = found
        after = self.prev_could(first)
        return [SkipRange(kind, sid, reason, first, last, count, after, capped)]

    def gaps(
        self,
        sid: str,
        first: datetime,
        latest: datetime,
        since: datetime | None = None,
        kind: str = skips.SCHEDULE,
    ) -> list[SkipRange]:
        """The spring-forward gaps since ``since`` (default: the instant before ``first``) up
        to ``latest`` whose wall times a ``missing="skip"`` time leaf matches: those never fire
        (``dst_gap``)."""
        if not self.gapped:
            return []
        walls: dict[datetime, int] = {}
        since = since or self.prev_could(first) or first
        for leaf in self.gapped:
            zone = leaf.timezone or "UTC"
            spec = cron.parse(leaf.expression, dialect="extended")
            for at, count in skips.gap_walls(spec, zone, since, latest):
                walls[at] = walls.get(at, 0) + count
        return [
            SkipRange(kind, sid, skips.DST_GAP, at, at, count)
            for at, count in sorted(walls.items())
        ]


def _prev_of(leaf: Cron, before: datetime) -> datetime | None:
    """The leaf's last instant strictly before ``before`` (``missing="shift"`` included)."""
    return latest_in(leaf, shifted(before, -_HORIZON), shifted(before, -_TICK))


def shifted(at: datetime, delta: timedelta) -> datetime:
    """``at + delta``, held at the first / last instant at the edges of time."""
    try:
        return at + delta
    except OverflowError:
        if delta > timedelta(0):
            return datetime.max.replace(tzinfo=at.tzinfo)
        return datetime.min.replace(tzinfo=at.tzinfo)


@lru_cache(maxsize=_MEMO_SIZE)
def timeline(tree: Node) -> Timeline:
    """The (memoised) :class:`Timeline` of a tree."""
    return Timeline(tree)


__all__ = ["SEARCH_STEPS", "Timeline", "shifted", "timeline"]
