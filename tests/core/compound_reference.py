"""A small reference interpreter of the compound trigger semantics (SPEC §13, the seed's table),
written apart from the engine: trees are tuples — ``("T", i)`` a time leaf firing at the minutes
divisible by ``PERIODS[i]``, ``("E", j)`` an event leaf of subject ``SUBJECTS[j]``,
``("all"|"any", [children])`` — and time is whole minutes from ``BASE``."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from tocsin.core.schedules.tree import Compound, Cron, Event, Node

BASE = datetime(2026, 3, 2, 0, 0, tzinfo=UTC)
PERIODS = (2, 3, 5)  # time leaf i fires at minutes divisible by PERIODS[i]
SUBJECTS = ("a", "b", "c")


def node_of(ref: Any) -> Node:
    kind, arg = ref
    if kind == "T":
        return Cron(f"*/{PERIODS[arg]} * * * *", timezone="UTC")
    if kind == "E":
        return Event("table_updated", SUBJECTS[arg])
    return Compound(kind, tuple(node_of(c) for c in arg))


def _ref_leaves(ref: Any, path: str = "") -> list[tuple[str, Any]]:
    kind, arg = ref
    if kind in ("T", "E"):
        return [(path, ref)]
    out = []
    for i, child in enumerate(arg):
        out += _ref_leaves(child, f"{path}.{i}" if path else str(i))
    return out


def _ref_holds(ref: Any, path: str, latched: set[str], minute: int | None) -> bool:
    kind, arg = ref
    if kind == "T":
        return minute is not None and minute % PERIODS[arg] == 0
    if kind == "E":
        return path in latched
    kids = [
        _ref_holds(c, f"{path}.{i}" if path else str(i), latched, minute) for i, c in enumerate(arg)
    ]
    return all(kids) if kind == "all" else any(kids)


def reference(ref: Any, events: list[tuple[int, int]], ticks: list[int]) -> list[int]:
    """The fires of :func:`reference_run`."""
    return reference_run(ref, events, ticks)[0]


def reference_run(
    ref: Any, events: list[tuple[int, int]], ticks: list[int]
) -> tuple[list[int], list[int]]:
    """``(fires, unsatisfied)``: the seed's table, minute by minute: an event latches its leaves
    (and may fire at once); a time leaf holds only at its minutes; a fire resets every latch. A
    tick after downtime sees only the latest minute since the previous tick at which the tree
    could fire (would hold with every event latched): the older ones are coalesced. A minute looked
    at that does not fire but would with every event leaf latched is *unsatisfied* (it passed
    waiting for events)."""
    leaves = _ref_leaves(ref)
    every_event = {path for path, (kind, _) in leaves if kind == "E"}
    latched: set[str] = set()
    fires: list[int] = []
    unsatisfied: list[int] = []
    previous = 0
    for tick in ticks:
        window = range(previous + 1, tick + 1)
        latest = set()
        periods = [PERIODS[arg] for _, (kind, arg) in leaves if kind == "T"]
        instants = [m for m in window if any(m % p == 0 for p in periods)]
        hits = [m for m in instants if _ref_holds(ref, "", every_event, m)]
        if hits:
            latest.add(hits[-1])
        for minute in window:
            for ev_minute, subject in events:
                if ev_minute != minute:
                    continue
                for path, (kind, arg) in leaves:
                    if kind == "E" and arg == subject:
                        latched.add(path)
                if _ref_holds(ref, "", latched, None):
                    fires.append(minute)
                    latched = set()
            if minute in latest and _ref_holds(ref, "", latched, minute):
                fires.append(minute)
                latched = set()
            elif minute in latest and _ref_holds(ref, "", every_event, minute):
                unsatisfied.append(minute)
        previous = tick
    return fires, unsatisfied
