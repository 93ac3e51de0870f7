"""Issue 10's shape bars, kept: the tick's modules within their line budget
(``bench/tick_lines.py``) and no module of the package over 500 lines."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def load_counter() -> Any:
    spec = importlib.util.spec_from_file_location("tick_lines", ROOT / "bench" / "tick_lines.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_tick_modules_stay_within_their_line_budget() -> None:
    counter = load_counter()
    parts = counter.counted()
    names = [what for _, what in parts]
    assert "engine/tick.py" in names and "engine/tick_plan.py" in names
    assert any(what.startswith("store/ledger.py:") for what in names)  # the statements it uses
    total = sum(n for n, _ in parts)
    assert total <= counter.BUDGET, f"{total} lines: over the budget of {counter.BUDGET}"


def test_no_module_is_over_500_lines() -> None:
    sizes = {
        str(p.relative_to(ROOT)): len(p.read_text().splitlines())
        for p in (ROOT / "src" / "tocsin").rglob("*.py")
    }
    assert len(sizes) > 100
    assert {p: n for p, n in sizes.items() if n > 500} == {}
