"""The one decision of workflow schedules (``core.decide``): a plain cron schedule and a tree of
one ``Cron`` leaf under the same DST policy decide identically, over random expressions, zones,
tick instants, pause windows, active runs and catch-up policies (Hypothesis); and the plain
decision's rules, table-driven."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tocsin.core.schedules.decide import (
    CRON_REPEATED,
    Decision,
    State,
    Timing,
    cron_trigger,
    decide,
    next_due,
)
from tocsin.core.schedules.manual import MANUAL
from tocsin.core.schedules.tree import AllOf, Cron, TableUpdated

EXPRESSIONS = (
    "* * * * *",
    "*/7 * * * *",
    "0 * * * *",
    "30 2 * * *",
    "15,45 1-3 * * *",
    "0 0 * * 0",
    "*/20 9-17 * * MON-FRI",
    "0 30 1 * * *",
    "0 0 L * *",
)
ZONES = (
    "UTC",
    "America/New_York",
    "Europe/Paris",
    "Australia/Lord_Howe",
    "Asia/Kolkata",
    "America/Santiago",
)
START = datetime(2026, 1, 1, tzinfo=UTC)


def _shape(d: Decision) -> tuple[Any, ...]:
    ranges = [(r.reason, r.first, r.last, r.count, r.after, r.at_least) for r in d.skips]
    return d.fires, ranges, d.next_due_at


step = st.tuples(
    st.integers(1, 4000),  # minutes since the previous step
    st.sampled_from(["tick", "tick", "tick", "resume"]),  # resume: paused since the last step
    st.booleans(),  # a run of the schedule still pending or running
)


@settings(max_examples=120, deadline=None)
@given(
    expression=st.sampled_from(EXPRESSIONS),
    zone=st.sampled_from(ZONES),
    days=st.integers(0, 364),
    steps=st.lists(step, min_size=1, max_size=8),
    catch_up=st.sampled_from(["latest", "none", "all"]),
    max_catch_up=st.integers(1, 4),
    overlap=st.sampled_from(["skip", "allow"]),
)
def test_a_plain_cron_and_its_one_leaf_tree_decide_identically(
    expression: str,
    zone: str,
    days: int,
    steps: list[tuple[int, str, bool]],
    catch_up: str,
    max_catch_up: int,
    overlap: str,
) -> None:
    plain_trigger = cron_trigger(expression, zone)
    tree = Cron(expression, timezone=zone, repeated=CRON_REPEATED)
    policy = {"catch_up": catch_up, "max_catch_up": max_catch_up, "overlap": overlap}
    now = START + timedelta(days=days, minutes=17)
    plain = State(next_due(plain_trigger, {}, now))
    treed = State(next_due(tree, {}, now), now)  # a tree row's instants: after ``evaluated_at``
    for minutes, kind, busy in steps:
        now += timedelta(minutes=minutes)
        paused = kind == "resume"
        got = []
        for trigger, state in ((plain_trigger, plain), (tree, treed)):
            due = state.next_due_at is not None and state.next_due_at <= now
            if not paused and not due:  # the tick claims due rows only
                got.append(None)
                continue
            sched = Timing("s", trigger, paused=paused, **policy)  # type: ignore[arg-type]
            state = State(state.next_due_at, state.evaluated_at, state.latches, busy)
            got.append(decide(sched, state, (), now))
        a, b = got
        assert (a is None) == (b is None)
        if a is None or b is None:
            continue
        assert _shape(a) == _shape(b)
        plain, treed = a.state, b.state


# --- the plain decision, table-driven -----------------------------------------------------------

NINE = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
HOURLY = cron_trigger("0 * * * *", "UTC")
ALL_2 = {"catch_up": "all", "max_catch_up": 2}


def _decide(state: State, now: datetime, **kw: Any) -> tuple[list[str], list[tuple[Any, ...]]]:
    d = decide(Timing("s", HOURLY, **kw), state, (), now)
    return (
        [f.strftime("%H:%M") for f in d.fires],
        [(r.reason, r.first.strftime("%H:%M"), r.last.strftime("%H:%M"), r.count) for r in d.skips],
    )


@pytest.mark.parametrize(
    ("kw", "busy", "fires", "skips"),
    [
        ({}, False, ["12:00"], [("coalesced", "09:00", "11:00", 3)]),
        ({"catch_up": "none"}, False, [], [("coalesced", "09:00", "12:00", 4)]),
        (ALL_2, False, ["11:00", "12:00"], [("coalesced", "09:00", "10:00", 2)]),
        ({}, True, [], [("active_run", "09:00", "12:00", 4)]),
        ({"overlap": "allow"}, True, ["12:00"], [("coalesced", "09:00", "11:00", 3)]),
        ({"paused": True}, False, [], [("paused", "09:00", "12:00", 4)]),
    ],
)  # fmt: skip
def test_the_plain_rules(kw: dict[str, Any], busy: bool, fires: list[str], skips: Any) -> None:
    state = State(NINE, active_run=busy)
    assert _decide(state, NINE.replace(hour=12, minute=30), **kw) == (fires, skips)


def test_on_time_fires_once_and_moves_to_the_next_instant() -> None:
    d = decide(Timing("s", HOURLY), State(NINE), (), NINE)
    assert d.fires == (NINE,) and d.skips == () and d.next_due_at == NINE.replace(hour=10)


def test_a_tree_waiting_for_its_event_is_unsatisfied_and_fires_once_latched() -> None:
    tree = AllOf(Cron("0 * * * *", timezone="UTC"), TableUpdated("a"))
    sched = Timing("s", tree, overlap="allow")
    first = decide(sched, State(None, NINE - timedelta(minutes=1)), (), NINE)
    assert first.fires == () and first.reasons() == ["compound_unsatisfied"]
    event = ("table_updated", "a", NINE + timedelta(minutes=5))
    then = decide(sched, first.state, [event], NINE.replace(hour=10))
    assert then.fires == (NINE.replace(hour=10),) and then.state.latches == {}


# --- run-now: a manual event -------------------------------------------------------------------


@pytest.mark.parametrize("kw", [{}, {"paused": True}, {"catch_up": "none"}, ALL_2])
@pytest.mark.parametrize("busy", [False, True])
def test_a_manual_event_fires_once_at_its_instant_and_moves_nothing(
    kw: dict[str, Any], busy: bool
) -> None:
    tree = AllOf(Cron("0 * * * *", timezone="UTC"), TableUpdated("a"))
    now = NINE.replace(hour=12, minute=30)
    for trigger, state in (
        (HOURLY, State(NINE, active_run=busy)),
        (tree, State(NINE, NINE, {"1": NINE}, busy)),
        (None, State(None)),  # no timing of its own (a table's date trigger)
    ):
        sched = Timing("s", trigger, **kw)
        d = decide(sched, state, [(MANUAL, "s", now)], now)
        assert d == Decision((now,), (), state.next_due_at, state)
        if trigger is not None:  # the scheduled decision after it is the one without it
            assert decide(sched, d.state, (), now) == decide(sched, state, (), now)


def test_manual_events_are_never_mixed_with_others() -> None:
    with pytest.raises(ValueError, match="manual events are decided alone"):
        decide(Timing("s", HOURLY), State(NINE), [(MANUAL, "other", NINE)], NINE)
    event = ("table_updated", "a", NINE)
    with pytest.raises(ValueError, match="manual events are decided alone"):
        decide(Timing("s", HOURLY), State(NINE), [(MANUAL, "s", NINE), event], NINE)


def test_a_schedule_without_timing_owes_nothing() -> None:
    d = decide(Timing("s", None), State(NINE), (), NINE)
    assert d.fires == () and d.skips == () and d.next_due_at is None
