"""The core is pure and nothing outside the edges reads the clock (DESIGN §2, STYLE R1).

- every module under ``src/tocsin/core`` imports only the standard library (plus ``tzdata``),
  ``tocsin.errors``, ``tocsin.messages`` and other ``tocsin.core`` modules — checked on the AST,
  so a conditional or function-level import is caught too;
- no core module calls ``__import__``/``importlib``, reads the clock or imports ``time``;
- in the whole package, clock reads (``datetime.now(``, ``time.time(``, ``date.today(``,
  ``utcnow(``, ``time.monotonic(``) appear only in the edge files of ``CLOCK_ALLOWED``.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src" / "tocsin"
CORE = SRC / "core"
ALLOWED_TOP_LEVEL = frozenset(sys.stdlib_module_names) | {"tzdata"}
ALLOWED_TOCSIN = ("tocsin.errors", "tocsin.messages", "tocsin.core")
CLOCK_ALLOWED = frozenset(
    {
        "service/base.py",
        "engine/ticker.py",
        "runs/worker.py",
        "api/deps.py",
        # a monotonic deadline on reading an outbound answer: an I/O timeout, not scheduling time
        "actions/net.py",
        # the total deadline of an outbound action (connect + headers + body): an I/O timeout
        "actions/deadline.py",
        # a monotonic deadline on an idle worker's wait for a wake (and the listener's
        # reconnect pause): an I/O timeout, not scheduling time
        "store/notify.py",
        # the time a step or run really took, added to the pass's explicit ``now``
        "runs/clock.py",
        # how long no slot took a run of a queue (a slot more after a look): execution time of
        # the worker's threads, not scheduling time
        "runs/pool.py",
    }
)
CLOCK_ALLOWED_DIRS = ("cli/",)
CLOCK = re.compile(r"datetime\.now\(|time\.time\(|date\.today\(|utcnow\(|time\.monotonic\(")
CLOCK_ATTRS = frozenset({"now", "utcnow", "today", "monotonic", "perf_counter", "time_ns"})
DYNAMIC_IMPORTS = frozenset({"__import__", "import_module"})


def core_files() -> list[Path]:
    files = sorted(CORE.rglob("*.py"))
    assert files, f"no core modules under {CORE}"
    return files


def module_name(path: Path) -> str:
    parts = path.relative_to(SRC.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(path: Path) -> list[str]:
    """Absolute names of everything ``path`` imports (relative imports resolved)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = (
        module_name(path) if path.name == "__init__.py" else module_name(path).rpartition(".")[0]
    )
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            if base == "tocsin":
                names.extend(f"tocsin.{alias.name}" for alias in node.names)
            else:
                names.append(base)
    return names


def is_allowed(name: str) -> bool:
    if name.startswith("tocsin"):
        return any(name == ok or name.startswith(ok + ".") for ok in ALLOWED_TOCSIN)
    return name.split(".")[0] in ALLOWED_TOP_LEVEL and name.split(".")[0] != "time"


@pytest.mark.parametrize("path", core_files(), ids=lambda p: str(p.relative_to(CORE)))
def test_core_imports_only_the_stdlib_and_root_modules(path: Path) -> None:
    bad = [name for name in imported_modules(path) if not is_allowed(name)]
    assert not bad, f"{path.relative_to(SRC)} imports {bad}"


@pytest.mark.parametrize("path", core_files(), ids=lambda p: str(p.relative_to(CORE)))
def test_core_never_reads_the_clock_or_imports_dynamically(path: Path) -> None:
    source = path.read_text(encoding="utf-8")
    assert not CLOCK.search(source), f"{path.relative_to(SRC)} reads the clock"
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        assert name not in CLOCK_ATTRS, f"{path.relative_to(SRC)}:{node.lineno} calls {name}()"
        assert name not in DYNAMIC_IMPORTS, (
            f"{path.relative_to(SRC)}:{node.lineno} imports dynamically"
        )


def test_clock_reads_only_at_the_edges() -> None:
    offenders = []
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        if rel in CLOCK_ALLOWED or rel.startswith(CLOCK_ALLOWED_DIRS):
            continue
        for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if CLOCK.search(line):
                offenders.append(f"{rel}:{lineno}: {line.strip()}")
    assert not offenders, "clock read outside the edges:\n" + "\n".join(offenders)


def test_the_checker_catches_violations(tmp_path: Path) -> None:
    """The AST walk sees nested, aliased and relative imports."""
    fake = CORE / "time" / "instants.py"
    assert (
        is_allowed("zoneinfo")
        and is_allowed("tocsin.messages")
        and is_allowed("tocsin.core.time.cron")
    )
    assert not is_allowed("sqlalchemy") and not is_allowed("tocsin.settings")
    assert not is_allowed("tocsin.store.tx") and not is_allowed("time")
    assert "tocsin.messages" in imported_modules(fake)
    sample = tmp_path / "sample.py"
    sample.write_text("def f():\n    import sqlalchemy as sa\n    from httpx import Client\n")
    assert imported_modules_of_text(sample) == ["sqlalchemy", "httpx"]


def imported_modules_of_text(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            out.append(node.module)
    return out


@pytest.mark.parametrize("path", core_files(), ids=lambda p: str(p.relative_to(CORE)))
def test_core_files_start_with_future_annotations(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    futures = [
        node
        for node in tree.body
        if isinstance(node, ast.ImportFrom) and node.module == "__future__"
    ]
    assert any(alias.name == "annotations" for node in futures for alias in node.names)
