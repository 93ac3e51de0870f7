"""JSON columns' text (``store.jsontext``): what ``json_text`` writes is ``json.dumps``' text of
the value, and what it cannot write fails as ``json.dumps`` does (no cycle check: a cycle is a
``RecursionError``)."""

from __future__ import annotations

import json
import math
from decimal import Decimal
from enum import IntEnum
from typing import Any

import pytest

from tocsin.store.jsontext import json_text, json_value


class Level(IntEnum):
    HIGH = 3


VALUES: list[Any] = [
    "plain",
    'quote " backslash \\ tab \t nul \x00',
    "é ü 中文 \u2028 🙂",
    0,
    -17,
    10**30,
    1.5,
    -0.0,
    1e300,
    math.nan,
    math.inf,
    -math.inf,
    True,
    False,
    [1, "a", None, [True, {"b": [None, False]}]],
    (1, "two"),
    {"id": "step", "status": "success", "output": {"n": 1}, "error": None},
    {1: "int key", 2.5: "float key", None: "none key", False: "bool key"},
    Level.HIGH,
    {"level": Level.HIGH},
    [{}],
    {"a": []},
]


@pytest.mark.parametrize("value", VALUES, ids=repr)
def test_json_text_is_json_dumps_text(value: Any) -> None:
    assert json_text(value) == json.dumps(value)


def test_none_and_the_empty_containers() -> None:
    assert json_text(None) is None
    assert [json_text(v) for v in ([], (), {})] == ["[]", "[]", "{}"]
    assert json_value(json_text([{"n": 1}])) == [{"n": 1}]


@pytest.mark.parametrize(
    "value",
    [object(), Decimal(1), {(1, 2): 1}, {"k": {1, 2}}],
    ids=["object", "decimal", "tuple-key", "set-value"],  # the same on every xdist worker
)
def test_what_json_dumps_refuses_fails_alike(value: Any) -> None:
    with pytest.raises(TypeError) as dumps:
        json.dumps(value)
    with pytest.raises(TypeError) as text:
        json_text(value)
    assert str(text.value) == str(dumps.value)


def test_a_cycle_is_not_looked_for() -> None:
    loop: list[Any] = []
    loop.append(loop)
    with pytest.raises(RecursionError):
        json_text(loop)
