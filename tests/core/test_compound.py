"""SPEC §13 compound trigger trees in the core: JSON form and validation, DST per time trigger,
and a Hypothesis property comparing the decision (``core.decide``) with a small reference
interpreter."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tocsin.core.schedules.decide import State, Timing, decide
from tocsin.core.schedules.skips import COMPOUND_UNSATISFIED
from tocsin.core.schedules.tree import (
    AllOf,
    AnyOf,
    Cron,
    TableUpdated,
    WorkflowSucceeded,
    and_of_times,
    from_json,
    to_json,
)
from tocsin.core.schedules.tree_eval import (
    fires_at,
    latest_in,
    next_instant,
    next_of,
    previous_instant,
    waiting_for,
)
from tocsin.errors import ConfigError

from compound_reference import BASE as REF_BASE  # isort: skip
from compound_reference import PERIODS, SUBJECTS, node_of, reference  # isort: skip
from compound_reference import reference_run  # isort: skip

NY = "America/New_York"


# --- JSON form and validation ---------------------------------------------------------------


def test_json_round_trip_with_defaults_written_out() -> None:
    tree = AllOf(Cron("0  9 * * *", timezone="Europe/Berlin"), TableUpdated("t1"))
    raw = to_json(tree)
    assert raw == {
        "all": [
            {
                "cron": "0 9 * * *",
                "timezone": "Europe/Berlin",
                "repeated": "both",
                "missing": "skip",
            },
            {"event": "table_updated", "table_id": "t1"},
        ]
    }
    assert from_json(raw) == tree
    nested = {
        "any": [
            {"cron": "0 2 * * *"},
            {"all": [{"event": "workflow_succeeded", "workflow_id": "a"}]},
        ]
    }
    assert to_json(from_json(nested))["any"][1] == {
        "all": [{"event": "workflow_succeeded", "workflow_id": "a"}]
    }


@pytest.mark.parametrize(
    ("raw", "text"),
    [
        ({"all": []}, "an AND trigger ('all') needs at least one trigger inside, got none"),
        ({"any": []}, "an OR trigger ('any') needs at least one trigger inside, got none"),
        (
            {"event": "data_changed", "table_id": "x"},
            "unknown event 'data_changed'; known events: definition_changed, schedule_succeeded, "
            "table_updated, workflow_succeeded",
        ),
        (
            {"event": "table_updated"},
            "event 'table_updated' needs 'table_id': a non-empty string of at most 64 "
            "characters, got None",
        ),
        (
            {"event": "table_updated", "workflow_id": "x"},
            "unknown keys in a 'event' trigger: workflow_id; allowed: event, table_id",
        ),
        (
            {"cron": "0 9 * * *", "repeated": "twice"},
            "a time trigger's repeated must be 'both' or 'first', got 'twice'",
        ),
        (
            {"cron": "0 9 * * *", "missing": "later"},
            "a time trigger's missing must be 'skip' or 'shift', got 'later'",
        ),
        ({"cron": 5}, "a time trigger's cron must be a string, got 5"),
        ({"all": {"cron": "0 9 * * *"}}, "'all' must be a list of triggers"),
        ({"all": [], "any": []}, "unknown keys in a 'all' trigger: all, any; allowed: all"),
        ([1], "a trigger must be a time trigger"),
    ],
)
def test_bad_trees_are_refused_with_exact_texts(raw: object, text: str) -> None:
    with pytest.raises(ConfigError) as info:
        from_json(raw)
    assert info.value.detail.startswith(text)


def test_bad_cron_and_zone_are_refused() -> None:
    with pytest.raises(ConfigError, match="cron schedule invalid"):
        from_json({"cron": "61 * * * *"})
    with pytest.raises(ConfigError, match="not a known IANA zone"):
        Cron("0 9 * * *", timezone="Mars/Olympus")
    with pytest.raises(ConfigError, match="at least one trigger"):
        AnyOf()


def test_and_of_times_is_found_at_any_depth() -> None:
    t1, t2 = Cron("0 9 * * *"), Cron("0 * * * *")
    assert and_of_times(AllOf(t1, t2))
    assert and_of_times(AnyOf(TableUpdated("x"), AllOf(t1, t2)))
    assert not and_of_times(AnyOf(t1, t2))
    assert not and_of_times(AllOf(t1, TableUpdated("x")))


# --- DST per time trigger (SPEC §13) ----------------------------------------------------------


def _day(leaf: Cron, y: int, m: int, d: int) -> list[datetime]:
    start = datetime(y, m, d, tzinfo=UTC) + timedelta(hours=4)  # local midnight-ish in NY
    out, at = [], start
    while (at := next_of(leaf, at)) is not None and at < start + timedelta(days=1):  # type: ignore[assignment]
        out.append(at)
    return out


FALL_BACK = (2026, 11, 1)
SPRING_FORWARD = (2026, 3, 8)


def test_repeated_both_fires_a_repeated_wall_time_twice() -> None:
    leaf = Cron("30 1 * * *", timezone=NY)  # repeated="both" is the default
    assert _day(leaf, *FALL_BACK) == [
        datetime(2026, 11, 1, 5, 30, tzinfo=UTC),  # 01:30 EDT
        datetime(2026, 11, 1, 6, 30, tzinfo=UTC),  # 01:30 EST
    ]


def test_repeated_first_fires_it_once() -> None:
    leaf = Cron("30 1 * * *", timezone=NY, repeated="first")
    assert _day(leaf, *FALL_BACK) == [datetime(2026, 11, 1, 5, 30, tzinfo=UTC)]


@pytest.mark.parametrize("repeated", ["both", "first"])
def test_a_wall_time_in_the_gap_never_fires(repeated: Any) -> None:
    # New York springs forward from 02:00 to 03:00: 02:30 never happens that day
    leaf = Cron("30 2 * * *", timezone=NY, repeated=repeated)
    assert _day(leaf, *SPRING_FORWARD) == []
    assert len(_day(leaf, 2026, 3, 9)) == 1


def test_missing_shift_fires_at_the_first_valid_instant_after_the_gap() -> None:
    leaf = Cron("30 2 * * *", timezone=NY, missing="shift")
    three_edt = datetime(2026, 3, 8, 7, 0, tzinfo=UTC)  # 03:00 EDT
    assert _day(leaf, *SPRING_FORWARD) == [three_edt]
    assert (
        latest_in(leaf, three_edt - timedelta(hours=5), three_edt + timedelta(hours=1)) == three_edt
    )
    tree = AllOf(leaf, Cron("0 3 * * *", timezone=NY))  # coincides with 03:00 that day only
    assert fires_at(tree.children[0], three_edt) and fires_at(tree.children[1], three_edt)
    assert _fires(tree, three_edt - timedelta(minutes=1), three_edt) == [three_edt]
    assert len(_day(leaf, 2026, 3, 9)) == 1  # an ordinary day: 02:30


def test_next_instant_is_the_earliest_time_leaf() -> None:
    after = datetime(2026, 3, 2, 8, 0, tzinfo=UTC)
    tree = AnyOf(
        Cron("0 9 * * *", timezone="UTC"), TableUpdated("x"), Cron("30 8 * * *", timezone="UTC")
    )
    assert next_instant(tree, after) == after.replace(minute=30)
    assert next_instant(TableUpdated("x"), after) is None


# --- the engine against a reference interpreter -----------------------------------------------

BASE = REF_BASE

leaf_strategy = st.one_of(
    st.tuples(st.just("T"), st.sampled_from(range(len(PERIODS)))),
    st.tuples(st.just("E"), st.sampled_from(range(len(SUBJECTS)))),
)
tree_strategy = st.recursive(
    leaf_strategy,
    lambda kids: st.tuples(st.sampled_from(["all", "any"]), st.lists(kids, min_size=1, max_size=3)),
    max_leaves=6,
)


def engine(ref: Any, events: list[tuple[int, int]], ticks: list[int]) -> list[int]:
    return engine_run(ref, events, ticks)[0]


def engine_run(
    ref: Any, events: list[tuple[int, int]], ticks: list[int]
) -> tuple[list[int], list[int]]:
    """``(fires, unsatisfied instants)`` of the decision over ``ticks``, in minutes."""
    schedule = Timing("s", node_of(ref), overlap="allow")
    state = State(None, BASE)
    fires: list[int] = []
    unsatisfied: list[int] = []
    previous = 0
    for tick in ticks:
        now = BASE + timedelta(minutes=tick)
        seen = [
            ("table_updated", SUBJECTS[s], BASE + timedelta(minutes=m))
            for m, s in events
            if previous < m <= tick
        ]
        decision = decide(schedule, state, seen, now)
        state = decision.state
        fires += [int((f - BASE).total_seconds() // 60) for f in decision.fires]
        unsatisfied += [
            int((r.first - BASE).total_seconds() // 60)
            for r in decision.skips
            if r.reason == COMPOUND_UNSATISFIED
        ]
        previous = tick
    return fires, unsatisfied


def _fires(tree: Any, after: datetime, now: datetime, seen: Any = ()) -> list[datetime]:
    return list(decide(Timing("s", tree), State(None, after), seen, now).fires)


@settings(max_examples=150, deadline=None)
@given(
    tree=tree_strategy,
    events=st.lists(st.tuples(st.integers(1, 40), st.integers(0, len(SUBJECTS) - 1)), max_size=10),
    gaps=st.lists(st.integers(1, 7), min_size=1, max_size=12),
)
def test_engine_matches_the_reference_interpreter(
    tree: Any, events: list[tuple[int, int]], gaps: list[int]
) -> None:
    ticks, total = [], 0
    for gap in gaps:
        total += gap
        ticks.append(total)
    events = sorted(events)
    assert engine_run(tree, events, ticks) == reference_run(tree, events, ticks)


def test_the_reference_agrees_with_the_seed_rows() -> None:
    t1, e1, e2 = ("T", 1), ("E", 0), ("E", 1)  # T1 every 3 minutes
    every = list(range(1, 10))
    assert reference(("all", [t1, e1]), [(1, 0)], every) == [3]
    assert reference(("any", [t1, e1]), [(1, 0)], every) == [1, 3, 6, 9]
    assert reference(("all", [e1, e2]), [(1, 0), (4, 1)], every) == [4]
    assert reference(("all", [("T", 0), t1]), [], every) == [6]
    assert engine(("all", [t1, ("any", [e1, e2])]), [(4, 1)], every) == [6]


def test_an_event_at_the_instant_counts_for_it() -> None:
    tree = AllOf(Cron("0 9 * * *", timezone="UTC"), WorkflowSucceeded("w"))
    nine = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
    decision = decide(
        Timing("s", tree),
        State(None, nine - timedelta(minutes=1)),
        [("workflow_succeeded", "w", nine)],
        nine,
    )
    assert decision.fires == (nine,) and decision.state.latches == {}


def test_unsatisfied_instants_are_those_waiting_for_events() -> None:
    t0, t1, e1 = ("T", 0), ("T", 1), ("E", 0)  # T0 every 2 minutes, T1 every 3
    every = list(range(1, 10))
    assert reference_run(("all", [t1, e1]), [(4, 0)], every) == ([6], [3, 9])
    assert engine_run(("all", [t1, e1]), [(4, 0)], every) == ([6], [3, 9])
    assert engine_run(("any", [t1, e1]), [], every) == ([3, 6, 9], [])  # never waits
    # AND(T0, T1) off their coincidence waits for a time, not for events: not unsatisfied
    assert engine_run(("all", [t0, t1]), [], every) == ([6], [])
    assert engine_run(("all", [t0, ("any", [t1, e1])]), [], every) == ([6], [2, 4, 8])


def test_waiting_for_names_the_missing_event_leaves() -> None:
    tree = AllOf(Cron("0 9 * * *", timezone="UTC"), WorkflowSucceeded("w"), WorkflowSucceeded("v"))
    nine = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
    active = frozenset({"0"}) if fires_at(tree.children[0], nine) else frozenset()
    assert [leaf.subject for _, leaf in waiting_for(tree, {"1"}, active)] == ["v"]
    assert waiting_for(tree, {"1", "2"}, active) == []  # satisfied: waits for nothing
    assert previous_instant(tree, nine) == nine - timedelta(days=1)
