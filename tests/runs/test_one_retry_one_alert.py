"""One implementation of retries and of failure alerts for every kind of run (table, workflow,
lane): a look at the source's imports and calls shows no second copy."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "src" / "tocsin"
POLICY = "tocsin/core/schedules/retry.py"
ALERTS = "tocsin/runs/alerts.py"


def _modules() -> dict[str, ast.Module]:
    return {
        str(p.relative_to(PACKAGE.parent)): ast.parse(p.read_text())
        for p in sorted(PACKAGE.rglob("*.py"))
    }


def _imports(tree: ast.Module) -> set[str]:
    return {
        f"{node.module}.{alias.name}"
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module
        for alias in node.names
    }


def _calls(tree: ast.AST) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            fn = node.func
            names.add(fn.attr if isinstance(fn, ast.Attribute) else getattr(fn, "id", ""))
    return names


def _functions(tree: ast.Module) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    kinds = (ast.FunctionDef, ast.AsyncFunctionDef)
    return [n for n in ast.walk(tree) if isinstance(n, kinds)]


def test_one_module_computes_every_next_attempt() -> None:
    modules = _modules()
    defining = sorted(
        path
        for path, tree in modules.items()
        for fn in _functions(tree)
        if fn.name in ("next_attempt_at", "delay_s", "jitter_fraction")
    )
    assert defining == [POLICY] * 3
    callers = sorted(p for p, tree in modules.items() if "next_attempt_at" in _calls(tree))
    assert callers == [
        "tocsin/lanes/execute.py",
        "tocsin/runs/worker.py",
        "tocsin/workflows/runner.py",
    ]
    for path in callers:  # each gets its policy from the one module
        assert {
            "tocsin.core.schedules.retry.policy_of",
            "tocsin.core.schedules.retry.retry_policy",
        } & (_imports(modules[path])), path


def test_one_module_runs_every_failure_alert() -> None:
    modules = _modules()
    senders = sorted(
        path
        for path, tree in modules.items()
        if path != ALERTS and _calls(tree) & {"send_action", "alert_failed_run"}
    )
    assert senders == [
        "tocsin/lanes/execute.py",
        "tocsin/runs/worker.py",
        "tocsin/workflows/runner.py",
    ]
    for path in senders:
        assert any(i.startswith("tocsin.runs.alerts.") for i in _imports(modules[path])), path
    # no other function that handles on_failure runs an action itself
    for path, tree in modules.items():
        for fn in _functions(tree):
            text = ast.unparse(fn)
            if "on_failure" in text and path != ALERTS:
                assert "get_action" not in _calls(fn), f"{path}:{fn.name}"
