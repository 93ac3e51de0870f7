"""The whole stack (outbox, tick, durable latches, ledger, restarts) against the reference
interpreter of ``tests/core/test_compound.py``, over seeded random trees, event sequences, tick
instants and restarts, on SQLite and PostgreSQL."""

from __future__ import annotations

import random
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from core.compound_reference import PERIODS, SUBJECTS, node_of, reference
from tocsin import Schedule, workflow
from tocsin.service import Tocsin
from tocsin.settings import Settings
from workflows.helpers import ReportIn, ReportOut, send_report

BASE = datetime(2026, 3, 2, 0, 0, tzinfo=UTC)


def random_tree(rng: random.Random, depth: int = 0) -> Any:
    if depth >= 2 or (depth > 0 and rng.random() < 0.5):
        if rng.random() < 0.5:
            return ("T", rng.randrange(len(PERIODS)))
        return ("E", rng.randrange(len(SUBJECTS)))
    kids = [random_tree(rng, depth + 1) for _ in range(rng.randint(1 + (depth == 0), 3))]
    return (rng.choice(["all", "any"]), kids)


def _subjects(tree: Any, tables: list[str]) -> Any:
    kind, arg = tree
    if kind in ("T", "E"):
        return tree
    return (kind, [_subjects(c, tables) for c in arg])


@pytest.mark.parametrize("seed", range(8))
def test_stack_matches_the_reference(store_url: str, settings: Settings, seed: int) -> None:
    rng = random.Random(seed)
    tree = random_tree(rng)
    t = Tocsin.open(store_url, settings=settings)
    tables = [
        str(t.create_table("chatroom", str(uuid.uuid4()), f"E{i}", {"N": "number"})["id"])
        for i in range(len(SUBJECTS))
    ]
    node = node_of(tree)
    mapping = dict(zip(SUBJECTS, tables, strict=True))
    node = _rename(node, mapping)
    sched = Schedule(trigger=node, timezone="UTC", overlap="allow", input_data={"user_id": "x"})
    wf = workflow(id="diff", input=ReportIn, output=ReportOut, schedule=sched)
    app = wf.then(send_report).commit()
    t.register_workflows([app])
    t.sync_schedules(now=BASE)
    # events at minute u + 30 s (distinct units): the reference sees them at u + 1, before
    # that minute's instants
    units = sorted(rng.sample(range(0, 40), rng.randint(0, 10)))
    events = [(u, rng.randrange(len(SUBJECTS))) for u in units]
    ticks, total = [], 0
    while total < 42:
        total += rng.randint(1, 6)
        ticks.append(total)
    pending = list(events)
    try:
        for tick in ticks:
            while pending and pending[0][0] + 0.5 <= tick:
                unit, subject = pending.pop(0)
                at = BASE + timedelta(minutes=unit, seconds=30)
                t.insert_record(tables[subject], {"N": unit}, now=at)
            t.tick(now=BASE + timedelta(minutes=tick))
            if rng.random() < 0.3:
                t.close()
                t = Tocsin.open(store_url, settings=settings, workflows=[app])
        items = t.schedules.fires("wf_diff", limit=500)["items"]
    finally:
        t.close()
    got = sorted(_unit(i["scheduled_for"]) for i in items)
    expected = reference(tree, [(u + 1, s) for u, s in events], ticks)
    assert got == sorted(expected), (tree, events, ticks)


def _unit(at: datetime) -> int:
    delta = at - BASE
    minutes, rest = divmod(int(delta.total_seconds()), 60)
    return minutes + (1 if rest else 0)


def _rename(node: Any, mapping: dict[str, str]) -> Any:
    from tocsin.core.schedules.tree import Compound, Event

    if isinstance(node, Event):
        return Event(node.kind, mapping[node.subject])
    if isinstance(node, Compound):
        return Compound(node.op, tuple(_rename(c, mapping) for c in node.children))
    return node
