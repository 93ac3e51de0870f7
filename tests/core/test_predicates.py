"""`when` predicates: validation and a truth table (SPEC §3)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tocsin import messages
from tocsin.core.config.predicates import OPS, matches, validate_when
from tocsin.errors import ConfigError

COLUMNS = {"Status": "text", "Score": "number", "Done": "boolean", "Due": "date", "Tags": "json"}


def p(column: str, op: str, value: Any = None, *, unary: bool = False) -> dict[str, Any]:
    return {"column": column, "op": op} if unary else {"column": column, "op": op, "value": value}


def test_ops() -> None:
    assert OPS == (
        "eq", "neq", "gt", "gte", "lt", "lte", "contains", "in", "is_empty", "is_not_empty",
    )  # fmt: skip


def test_validate_normalizes() -> None:
    when = [p("Status", "neq", "Done"), p("Score", "gte", 3), p("Status", "is_empty", unary=True)]
    assert validate_when(when, COLUMNS) == when
    assert validate_when(None, COLUMNS) == []
    assert validate_when([], COLUMNS) == []


def test_unknown_column() -> None:
    with pytest.raises(ConfigError) as info:
        validate_when([p("Nope", "eq", 1)], COLUMNS)
    assert info.value.code == "when_column_missing"
    # the SPEC text, exactly, then the table's columns
    seed = "when predicate column 'Nope' does not exist on this table"
    assert seed == messages.when_column_missing("Nope")
    assert info.value.detail == f"{seed}. columns: {', '.join(COLUMNS)}"


@pytest.mark.parametrize(
    "when",
    [
        "Status = Done",
        {"column": "Status", "op": "eq", "value": "x"},
        ["Status"],
        [{"column": "Status", "op": "like", "value": "x"}],
        [{"column": "Status", "op": None, "value": "x"}],
        [{"column": "Status", "value": "x"}],
        [{"column": "Status", "op": "eq"}],
        [{"column": "Status", "op": "eq", "value": "x", "extra": 1}],
        [{"column": "Status", "op": "in", "value": "x"}],
        [{"column": "Status", "op": "in", "value": [["x"]]}],
        [{"column": "Score", "op": "gt", "value": True}],
        [{"column": "Score", "op": "gt", "value": None}],
        [{"column": "Status", "op": "eq", "value": {"a": 1}}],
        [{"column": "Status", "op": "contains", "value": ["x"]}],
    ],
)
def test_bad_predicates(when: object) -> None:
    with pytest.raises(ConfigError) as info:
        validate_when(when, COLUMNS)
    assert info.value.code == "when_predicate_invalid"
    assert info.value.detail.startswith("when predicate invalid: ")


ROW = {"Status": "Open", "Score": 5, "Done": False, "Due": "2026-09-01", "Tags": ["a", "b"]}

TRUTH = [
    (p("Status", "eq", "Open"), True),
    (p("Status", "eq", "open"), False),
    (p("Status", "neq", "Done"), True),
    (p("Missing", "neq", "Done"), True),
    (p("Missing", "eq", None), True),
    (p("Score", "eq", 5.0), True),
    (p("Score", "eq", "5"), False),
    (p("Done", "eq", False), True),
    (p("Done", "eq", 0), False),  # booleans only equal booleans
    (p("Score", "eq", True), False),
    (p("Score", "gt", 4), True),
    (p("Score", "gt", 5), False),
    (p("Score", "gte", 5), True),
    (p("Score", "lt", 5.5), True),
    (p("Score", "lte", 4), False),
    (p("Score", "gt", "4"), False),  # type mismatch is false, never an error
    (p("Due", "lt", "2026-10-01"), True),
    (p("Due", "gte", "2026-09-02"), False),
    (p("Done", "gt", 0), False),
    (p("Status", "contains", "pe"), True),
    (p("Status", "contains", "PE"), False),
    (p("Tags", "contains", "a"), True),
    (p("Tags", "contains", "z"), False),
    (p("Score", "contains", 5), False),
    (p("Status", "in", ["Open", "New"]), True),
    (p("Status", "in", ["Done"]), False),
    (p("Score", "in", [1, 5]), True),
    (p("Status", "is_empty", unary=True), False),
    (p("Status", "is_not_empty", unary=True), True),
    (p("Missing", "is_empty", unary=True), True),
    (p("Missing", "is_not_empty", unary=True), False),
]


@pytest.mark.parametrize(("predicate", "expected"), TRUTH)
def test_truth_table(predicate: dict[str, Any], expected: bool) -> None:
    assert matches([predicate], ROW) is expected


@pytest.mark.parametrize("cell", [None, "", "  ", [], {}])
def test_empty_cells(cell: object) -> None:
    assert matches([p("X", "is_empty", unary=True)], {"X": cell})
    assert not matches([p("X", "is_not_empty", unary=True)], {"X": cell})


def test_and_semantics() -> None:
    assert matches([p("Status", "eq", "Open"), p("Score", "gt", 1)], ROW)
    assert not matches([p("Status", "eq", "Open"), p("Score", "gt", 9)], ROW)
    assert matches([], ROW)
    assert matches(None, ROW)


def test_malformed_stored_predicates_are_false() -> None:
    assert not matches("Status", ROW)
    assert not matches(["Status"], ROW)
    assert not matches([{"column": "Status", "op": "like", "value": "x"}], ROW)
    assert not matches([{"column": 3, "op": "eq", "value": "x"}], ROW)
    assert matches([p("Status", "neq", "Done")], None)


cells = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner),
    max_leaves=5,
)


@settings(max_examples=300)
@given(op=st.sampled_from(OPS), cell=cells, value=cells)
def test_matches_never_raises(op: str, cell: object, value: object) -> None:
    result = matches([{"column": "X", "op": op, "value": value}], {"X": cell})
    assert isinstance(result, bool)
