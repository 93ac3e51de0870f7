"""Sizes for review, not a test: the tick's lines (aimed at <= 900) and the modules of the package
over 500 lines (a hint to split by noun). Prints a report and exits 0 whatever the sizes.

Run: ``.venv/bin/python bench/tick_lines.py``. The tick counts (physical lines, docstrings and
comments included, as ``wc -l`` would):

- whole modules: ``engine/tick.py`` (claim, read, apply), ``engine/tick_plan.py`` (plan),
  ``store/claims.py`` (THE candidate claim), ``store/bulk.py``
  (the set-based statement helpers);
- of every other ``tocsin.store`` module those modules use as ``module.name``: the top-level
  definitions they name, and, transitively, the top-level definitions of the same module those
  refer to (the statement, its SQL text constants, its row types).

Not counted: the evaluator (``engine/evaluate.py``, shared with the preview), the core's window
and cron arithmetic, the recovery sweeps and the skip ranges' planning (``engine/tick_skips.py``).
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src" / "tocsin"
WHOLE = (
    "engine/tick.py",
    "engine/tick_plan.py",
    "store/claims.py",
    "store/bulk.py",
)
BUDGET = 900  # the tick's aim
MODULE_AIM = 500  # a module's aim

Span = tuple[int, int, ast.stmt]


def top_level(path: Path) -> dict[str, Span]:
    """Each top-level definition's name → (first line, decorators included; last line; node)."""
    out: dict[str, Span] = {}
    for node in ast.parse(path.read_text()).body:
        names: list[str] = []
        if isinstance(node, ast.FunctionDef | ast.ClassDef):
            names = [node.name]
        elif isinstance(node, ast.Assign):
            names = [t.id for t in node.targets if isinstance(t, ast.Name)]
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names = [node.target.id]
        decorators = getattr(node, "decorator_list", [])
        start = min([d.lineno for d in decorators] + [node.lineno])
        for name in names:
            out[name] = (start, node.end_lineno or node.lineno, node)
    return out


def store_names_used() -> dict[str, set[str]]:
    """``tocsin.store`` module → the names the whole modules use of it."""
    used: dict[str, set[str]] = {}
    for rel in WHOLE:
        tree = ast.parse((SRC / rel).read_text())
        aliases: dict[str, str] = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module == "tocsin.store":
                for alias in node.names:
                    aliases[alias.asname or alias.name] = alias.name
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id in aliases
            ):
                used.setdefault(aliases[node.value.id], set()).add(node.attr)
    return used


def counted() -> list[tuple[int, str]]:
    """``(lines, what)`` per counted module or module part."""
    out = [(len((SRC / rel).read_text().splitlines()), rel) for rel in WHOLE]
    whole_store = {Path(r).stem for r in WHOLE if r.startswith("store/")}
    for module, names in sorted(store_names_used().items()):
        if module in whole_store:
            continue
        defs = top_level(SRC / "store" / f"{module}.py")
        seen: set[str] = set()
        todo = [n for n in names if n in defs]
        while todo:
            name = todo.pop()
            if name in seen:
                continue
            seen.add(name)
            for sub in ast.walk(defs[name][2]):
                if isinstance(sub, ast.Name) and sub.id in defs and sub.id not in seen:
                    todo.append(sub.id)
        n = sum(defs[name][1] - defs[name][0] + 1 for name in seen)
        out.append((n, f"store/{module}.py: {', '.join(sorted(seen))}"))
    return out


def large_modules() -> list[tuple[int, str]]:
    """``(lines, path)`` of every module of the package over ``MODULE_AIM`` lines, largest first."""
    sizes = [
        (len(p.read_text().splitlines()), str(p.relative_to(SRC.parent))) for p in SRC.rglob("*.py")
    ]
    return sorted((s for s in sizes if s[0] > MODULE_AIM), reverse=True)


def main() -> int:
    print("the tick:")
    parts = counted()
    for n, what in parts:
        print(f"{n:5d}  {what}")
    total = sum(n for n, _ in parts)
    verdict = "within" if total <= BUDGET else "over"
    print(f"{total:5d}  total ({verdict} the aim of {BUDGET})")
    large = large_modules()
    print(f"modules over {MODULE_AIM} lines: {len(large) or 'none'}")
    for n, path in large:
        print(f"{n:5d}  {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
