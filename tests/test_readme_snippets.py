"""The Python examples of README.md and docs/ that import from ``tocsin`` import every public
``tocsin`` name they use, so they run when pasted (the compound-trigger example once used
``DefinitionChanged`` without importing it: a NameError)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import tocsin

ROOT = Path(__file__).resolve().parents[1]
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def imports_from_tocsin(tree: ast.AST) -> bool:
    return any(
        isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "tocsin"
        for node in ast.walk(tree)
    )


def python_blocks() -> list[tuple[str, int, str]]:
    """The examples that import from ``tocsin`` (fragments that import nothing from it, such as
    a line to add to an existing program, have nothing to check)."""
    out = []
    for path in DOCUMENTS:
        text = path.read_text(encoding="utf-8")
        for match in re.finditer(r"```python\n(.*?)```", text, re.DOTALL):
            line = text[: match.start()].count("\n") + 1
            if imports_from_tocsin(ast.parse(match.group(1))):
                out.append((path.name, line, match.group(1)))
    return out


def bound_names(tree: ast.AST) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            names.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
    return names


@pytest.mark.parametrize(("doc", "line", "code"), python_blocks())
def test_python_examples_import_the_tocsin_names_they_use(doc: str, line: int, code: str) -> None:
    tree = ast.parse(code)
    used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    missing = sorted(name for name in used - bound_names(tree) if name in tocsin.__all__)
    assert not missing, f"{doc}:{line}: uses {missing} without importing them"


def test_the_examples_are_found() -> None:
    """The parametrization above is not silently empty."""
    assert len(python_blocks()) >= 3
