"""Library code leaves interpreter-wide state alone.

tocsin is embedded in applications (uvicorn, the worker threads, a host's own code): switching
the garbage collector off, freezing it, changing its thresholds or the thread switch interval
would reach all of them. Two proofs:

- static: no module under ``src/tocsin`` calls (or assigns) a process-global setter of ``gc``,
  ``sys``, ``threading``, ``warnings``, ``logging``, ``locale``, ``socket``, ``os``, ``time``,
  ``faulthandler`` or ``multiprocessing``, nor writes ``os.environ``; signal handlers and
  environment writes only in ``tocsin.cli`` (the ``tocsin`` program's own process, not library
  code an application imports);
- dynamic: a tick of many tables, ``work()`` and a preview through the facade leave the
  collector's state, thresholds, freeze count, switch interval, recursion limit, trace and profile
  hooks as they found them; a tick starts no thread; and an application that disabled the
  collector finds it still disabled after a tick.
"""

from __future__ import annotations

import ast
import gc
import signal
import sys
import threading
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

import tocsin
from tocsin.service import Tocsin

SRC = Path(tocsin.__file__).resolve().parent
NOW = datetime(2026, 8, 27, 5, 2, 13, tzinfo=UTC)
N_TABLES = 40

# module -> functions that change process-wide state
FORBIDDEN_CALLS: dict[str, set[str]] = {
    "gc": {"disable", "enable", "freeze", "unfreeze", "set_threshold", "set_debug"},
    "sys": {
        "setswitchinterval",
        "setrecursionlimit",
        "settrace",
        "setprofile",
        "set_int_max_str_digits",
        "setdlopenflags",
        "set_asyncgen_hooks",
        "set_coroutine_origin_tracking_depth",
        "activate_stack_trampoline",
    },
    "threading": {"setprofile", "settrace", "stack_size", "setprofile_all_threads"},
    "warnings": {"simplefilter", "filterwarnings", "resetwarnings"},
    "logging": {"basicConfig", "disable", "setLoggerClass", "setLogRecordFactory"},
    "locale": {"setlocale"},
    "socket": {"setdefaulttimeout"},
    "os": {"umask", "putenv", "unsetenv", "chdir", "nice"},
    "time": {"tzset"},
    "faulthandler": {"enable", "disable", "register"},
    "multiprocessing": {"set_start_method", "set_executable", "set_forkserver_preload"},
    "signal": {"signal", "setitimer", "set_wakeup_fd"},
}
# modules whose attributes library code must never assign (``sys.excepthook = ...``)
NO_ASSIGN = {"gc", "sys", "threading", "os", "socket", "logging", "warnings", "signal"}
PROGRAM_SAMPLE = "import os, signal\nsignal.signal(2, None)\nos.environ.update(X='1')\n"
ENVIRON_WRITES = {"update", "setdefault", "pop", "popitem", "clear", "__setitem__"}
PROGRAM = SRC / "cli"  # the CLI's process owns its signals and environment


def _module_aliases(tree: ast.Module) -> tuple[dict[str, str], dict[str, tuple[str, str]]]:
    """``import x as y`` → {y: x}; ``from x import f as g`` → {g: (x, f)} (watched ones)."""
    modules: dict[str, str] = {}
    functions: dict[str, tuple[str, str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                root = alias.name.split(".")[0]
                if root in FORBIDDEN_CALLS or root in NO_ASSIGN:
                    modules[alias.asname or root] = root
        elif isinstance(node, ast.ImportFrom) and node.module in FORBIDDEN_CALLS:
            for alias in node.names:
                functions[alias.asname or alias.name] = (node.module, alias.name)
    return modules, functions


def _attr_of(node: ast.AST, modules: dict[str, str]) -> tuple[str, str] | None:
    """``(module, attribute)`` when ``node`` is ``<watched module alias>.<attribute>``."""
    if (
        isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id in modules
    ):
        return modules[node.value.id], node.attr
    return None


def _is_environ(node: ast.AST, modules: dict[str, str]) -> bool:
    return _attr_of(node, modules) == ("os", "environ")


def process_state_writes(path: Path, text: str | None = None) -> list[str]:
    """Every process-global write in one source file (or ``text`` as if it were that file), as
    ``path:line: what``."""
    source = path.read_text(encoding="utf-8") if text is None else text
    tree = ast.parse(source, filename=str(path))
    modules, functions = _module_aliases(tree)
    program = PROGRAM in path.parents
    found: list[str] = []

    def flag(node: ast.AST, what: str) -> None:
        found.append(f"{path.relative_to(SRC.parent)}:{getattr(node, 'lineno', '?')}: {what}")

    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            target = _attr_of(node.func, modules)
            if target is None and isinstance(node.func, ast.Name) and node.func.id in functions:
                target = functions[node.func.id]
            allowed = target is not None and target[0] == "signal" and program
            if target and target[1] in FORBIDDEN_CALLS.get(target[0], set()) and not allowed:
                flag(node, f"{target[0]}.{target[1]}()")
            func = node.func
            if (
                isinstance(func, ast.Attribute)
                and func.attr in ENVIRON_WRITES
                and _is_environ(func.value, modules)
                and not program
            ):
                flag(node, f"os.environ.{func.attr}()")
        elif isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign | ast.Delete):
            targets = node.targets if isinstance(node, ast.Assign | ast.Delete) else [node.target]
            for t in targets:
                attr = _attr_of(t, modules)
                if attr and attr[0] in NO_ASSIGN:
                    flag(node, f"assigns {attr[0]}.{attr[1]}")
                if isinstance(t, ast.Subscript) and _is_environ(t.value, modules) and not program:
                    flag(node, "writes os.environ[...]")
    return found


def test_the_scanner_sees_what_it_must() -> None:
    """The static check is not vacuous: each form it forbids is found in a sample."""
    sample = (
        "import gc, sys as s, os\nfrom gc import freeze as fz\nimport signal\n"
        "gc.disable()\ngc.set_threshold(1)\nfz()\ns.setswitchinterval(1)\ns.excepthook = None\n"
        "os.environ['X'] = '1'\nos.environ.update(X='1')\nsignal.signal(2, None)\n"
        "gc.collect()\ngc.isenabled()\ns.getswitchinterval()\n"
    )
    found = process_state_writes(SRC / "engine" / "sample.py", sample)  # parsed, never written
    found.sort(key=lambda hit: int(hit.split(":")[1]))
    assert [hit.split(": ", 1)[1] for hit in found] == [
        "gc.disable()",
        "gc.set_threshold()",
        "gc.freeze()",
        "sys.setswitchinterval()",
        "assigns sys.excepthook",
        "writes os.environ[...]",
        "os.environ.update()",
        "signal.signal()",
    ]
    assert process_state_writes(SRC / "cli" / "sample.py", PROGRAM_SAMPLE) == []


def test_no_library_module_changes_process_state() -> None:
    sources = sorted(SRC.rglob("*.py"))
    assert len(sources) > 50  # the package, not an empty directory
    found = [hit for path in sources for hit in process_state_writes(path)]
    assert found == []


# --- dynamic -----------------------------------------------------------------------------------


def snapshot() -> dict[str, Any]:
    """The interpreter-wide settings a library could change."""
    return {
        "gc.isenabled": gc.isenabled(),
        "gc.get_threshold": gc.get_threshold(),
        "gc.get_debug": gc.get_debug(),
        "gc.get_freeze_count": gc.get_freeze_count(),
        "sys.getswitchinterval": sys.getswitchinterval(),
        "sys.getrecursionlimit": sys.getrecursionlimit(),
        "sys.get_int_max_str_digits": sys.get_int_max_str_digits(),
        "sys.gettrace": sys.gettrace(),
        "sys.getprofile": sys.getprofile(),
        "sys.excepthook": sys.excepthook,
        "threading.excepthook": threading.excepthook,
        "signal.SIGINT": signal.getsignal(signal.SIGINT),
        "signal.SIGTERM": signal.getsignal(signal.SIGTERM),
    }


def _notify() -> list[dict[str, Any]]:
    return [{"type": "notify", "message": "x"}]


def _busy_tables(t: Tocsin) -> list[str]:
    """``N_TABLES`` tables, each with a due interval trigger and a date trigger with due rows."""
    ids = []
    for k in range(N_TABLES):
        table_id = t.create_table(
            "chatroom", str(uuid.uuid4()), f"T{k}", {"Due": "datetime"}, now=NOW
        )["id"]
        t.insert_records(
            table_id, [{"Due": "2026-08-27T00:00"}, {"Due": "2026-08-28T00:00"}], now=NOW
        )
        t.set_triggers(
            table_id,
            [
                {
                    "on": "schedule",
                    "schedule": {"type": "interval", "every_seconds": 60},
                    "actions": _notify(),
                },
                {
                    "on": "schedule",
                    "schedule": {"type": "date_column_reached", "column": "Due"},
                    "actions": _notify(),
                },
            ],
            now=NOW,
        )
        ids.append(str(table_id))
    return ids


@pytest.fixture
def thread_starts(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Names of the threads started while the test runs (``threading.Thread.start`` observed)."""
    started: list[str] = []
    original: Callable[[threading.Thread], None] = threading.Thread.start

    def start(self: threading.Thread) -> None:
        started.append(self.name)
        original(self)

    monkeypatch.setattr(threading.Thread, "start", start)
    yield started


def test_tick_work_and_preview_leave_process_state_alone(
    tocsin: Tocsin, thread_starts: list[str]
) -> None:
    table_ids = _busy_tables(tocsin)
    before = snapshot()
    report = tocsin.tick(now=NOW + timedelta(seconds=1), table_limit=2000)
    assert report["tables_scanned"] == N_TABLES
    assert report["runs_created"] == 2 * N_TABLES  # one interval window + one due row each
    assert thread_starts == []  # no threads inside the tick
    assert snapshot() == before
    assert tocsin.work(now=NOW + timedelta(seconds=2)) == 2 * N_TABLES
    assert snapshot() == before
    preview = tocsin.preview(table_ids[0], now=NOW + timedelta(seconds=3))
    assert [arm["kind"] for arm in preview["triggers"]] == ["interval", "date_column_reached"]
    tocsin.tick(now=NOW + timedelta(minutes=2), table_limit=2000)
    assert snapshot() == before


def test_an_application_that_disabled_the_collector_keeps_it_disabled(tocsin: Tocsin) -> None:
    _busy_tables(tocsin)
    was_enabled, threshold = gc.isenabled(), gc.get_threshold()
    gc.disable()
    gc.set_threshold(12_345, 17, 19)
    try:
        report = tocsin.tick(now=NOW + timedelta(seconds=1), table_limit=2000)
        assert report["runs_created"] == 2 * N_TABLES
        assert not gc.isenabled()
        assert gc.get_threshold() == (12_345, 17, 19)
        tocsin.work(now=NOW + timedelta(seconds=2))
        assert not gc.isenabled()
        assert gc.get_threshold() == (12_345, 17, 19)
    finally:
        gc.set_threshold(*threshold)
        if was_enabled:
            gc.enable()
