"""The linear renderer and the rendered-size cap.

``render`` must substitute exactly as the old per-column renderer did (``template_reference``,
checked by a Hypothesis property), reading the row's columns once per render (not tokens x
columns), and must refuse a value larger than ``max_bytes`` before building it. Its time, linear in
the template for every shape of token (an unclosed ``${row.`` too), is measured by
``bench/template_bench.py``, not asserted here.
"""

from __future__ import annotations

import json
import tracemalloc
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from template_reference import reference_render

from tocsin import messages
from tocsin.core.config.templates import (
    RenderTooLarge,
    TemplateContext,
    column_trie,
    longest_name,
    render,
)

PROPERTY = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
WHEN = datetime(2026, 8, 27, 5, 0, tzinfo=UTC)

# Column names that are prefixes of one another, hold spaces, hyphens, braces and CJK, or are "id".
NAMES = ["id", "i", "ide", "Due", "Due Date", "D", "a-b", "a", "x}y", "名", "名稱", "T", "$row"]
FRAGMENTS = [
    "$row.", "${row.", "}", "$trigger.", "$run.", "$", "{", ".", "id", "scheduled_for", "-",
    " ", "x", "\n", "é", "${", "row", "$$", *NAMES,
]  # fmt: skip
CELLS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 5),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
    st.text(st.sampled_from("ab $.{}é"), max_size=6),
    st.lists(st.integers(0, 3), max_size=3),
    st.dictionaries(st.sampled_from("kv"), st.integers(0, 3), max_size=2),
)
ROWS = st.one_of(st.none(), st.dictionaries(st.sampled_from(NAMES), CELLS, max_size=8))
TEMPLATES = st.lists(st.sampled_from(FRAGMENTS), max_size=14).map("".join)
VALUES = st.recursive(
    TEMPLATES | st.integers() | st.none(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEMPLATES, inner, max_size=3),
    max_leaves=6,
)


def context(row: Mapping[str, Any] | None, max_bytes: int | None = None) -> TemplateContext:
    return TemplateContext(
        row=row,
        record_id="rec-1",
        trigger_id="trg_1",
        run_id="run_1",
        scheduled_for=WHEN,
        max_bytes=max_bytes,
    )


def typed(value: Any) -> str:
    """A representation that tells 1 from True and 1.0 (``==`` does not)."""
    return repr(value)


@PROPERTY
@given(VALUES, ROWS)
def test_render_equals_the_old_renderer(value: Any, row: dict[str, Any] | None) -> None:
    ctx = context(row)
    assert typed(render(value, ctx)) == typed(reference_render(value, ctx))


def size_of(rendered: Any) -> int:
    """The size the cap counts for a rendered string template: its UTF-8 text."""
    if isinstance(rendered, str):
        return len(rendered.encode("utf-8"))
    if isinstance(rendered, bool):
        return 4 if rendered else 5
    if isinstance(rendered, int | float):
        return len(str(rendered))
    return len(json.dumps(rendered, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))


@PROPERTY
@given(TEMPLATES, ROWS, st.integers(0, 40))
def test_the_cap_refuses_exactly_the_values_past_it(
    template: str, row: dict[str, Any] | None, cap: int
) -> None:
    expected = reference_render(template, context(row))
    if size_of(expected) <= cap:
        assert typed(render(template, context(row, cap))) == typed(expected)
    else:
        with pytest.raises(RenderTooLarge) as err:
            render(template, context(row, cap))
        assert err.value.detail == messages.rendered_too_large(cap)


def test_the_cap_counts_utf8_bytes_across_a_whole_value() -> None:
    ctx = context({"T": "é" * 10}, max_bytes=40)  # 20 bytes per cell
    assert render(["$row.T", "$row.T"], ctx) == ["é" * 10] * 2
    with pytest.raises(RenderTooLarge):
        render({"a": "$row.T", "b": ["$row.T", "!"]}, ctx)


def test_repeating_a_large_cell_fails_before_building_the_string() -> None:
    """200 x $row.T over a 1 MB cell would be 200 MB: refused with a small peak of memory."""
    cell = "x" * 1_000_000
    ctx = context({"T": cell}, max_bytes=64 * 1024)
    template = "$row.T " * 200
    tracemalloc.start()
    try:
        with pytest.raises(RenderTooLarge):
            render(template, ctx)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 4_000_000
    assert render("$row.T", context({"T": cell}, max_bytes=1_000_000)) == cell


class CountingRow(Mapping[str, Any]):
    """A row that counts how many column names were handed out by iteration."""

    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data
        self.names_read = 0

    def __getitem__(self, key: str) -> Any:
        return self.data[key]

    def __iter__(self) -> Iterator[str]:
        for name in self.data:
            self.names_read += 1
            yield name

    def __len__(self) -> int:
        return len(self.data)


@pytest.mark.parametrize("tokens", [100, 400])
def test_columns_are_read_once_per_render_not_once_per_token(tokens: int) -> None:
    """3,000 columns x N tokens: the old renderer compared every column at every token."""
    row = CountingRow({f"c{i}": i for i in range(3000)})
    template = " ".join(f"$row.c{i * 7 % 3000}" for i in range(tokens))
    rendered = render(template, context(row))
    assert rendered == " ".join(str(i * 7 % 3000) for i in range(tokens))
    assert row.names_read == 3000


def test_the_trie_finds_the_longest_name() -> None:
    trie = column_trie(["Due", "Due Date", "D", "", 7, "名稱"])
    assert longest_name(trie, "$row.Due Date!", 5) == "Due Date"
    assert longest_name(trie, "Due Dat", 0) == "Due"
    assert longest_name(trie, "Dx", 0) == "D"
    assert longest_name(trie, "名稱", 0) == "名稱"
    assert longest_name(trie, "x", 0) == ""
    assert longest_name(trie, "Due", 3) == ""
