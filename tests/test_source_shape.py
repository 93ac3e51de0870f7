"""The source's shape: no issue numbers in the source, its benches, scripts and tests, one name
per public concept, and every exception text from ``tocsin.messages``. (Sizes are for review:
``bench/tick_lines.py`` reports the tick's lines and the modules over 500 lines; no test asserts
them.)"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


# ---- the source says what it does, and names each concept once ----
PACKAGE = ROOT / "src" / "tocsin"
# "issue 17", "Issue 10.4", "issues 12, 14, 17", "issue-18", "issue #5"
ISSUE_REFERENCE = re.compile(r"\bissues?[\s#-]*\d", re.IGNORECASE)
# what says what the code does: the package, its benches, scripts and tests (this file's examples
# above aside)
SAYS = (PACKAGE, ROOT / "bench", ROOT / "scripts", ROOT / "tests")


def test_the_source_names_no_issue_numbers() -> None:
    found = [
        f"{p.relative_to(ROOT)}:{n}: {line.strip()}"
        for p in sorted(path for top in SAYS for path in top.rglob("*.py"))
        if p != Path(__file__).resolve()
        for n, line in enumerate(p.read_text().splitlines(), 1)
        if ISSUE_REFERENCE.search(line)
    ]
    assert found == []
    assert ISSUE_REFERENCE.search("(issue 17)") and ISSUE_REFERENCE.search("issues 12, 14")


def module_level_names(tree: ast.Module) -> list[str]:
    """The names a module defines at its top level: classes, functions, assignments."""
    names: list[str] = []
    for node in tree.body:
        if isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            names.append(node.name)
        elif isinstance(node, ast.Assign):
            names += [t.id for t in node.targets if isinstance(t, ast.Name)]
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.append(node.target.id)
    return names


def test_each_public_name_is_defined_once_in_the_package() -> None:
    """``tocsin.Cron`` and ``tocsin.Schedule`` (and every other public name) mean one thing: no
    internal class or alias shares their name (the table trigger's cron schedule is
    ``CronSchedule``, its schedule union ``ScheduleSpec``, its OpenAPI model
    ``CronScheduleDoc``)."""
    import tocsin

    defined: dict[str, list[str]] = {}
    for p in sorted(PACKAGE.rglob("*.py")):
        for name in module_level_names(ast.parse(p.read_text())):
            defined.setdefault(name, []).append(str(p.relative_to(PACKAGE)))
    public = [n for n in tocsin.__all__ if n != "errors"]
    assert {"Cron", "Schedule"} <= set(public)
    assert {n: defined.get(n, []) for n in public if len(defined.get(n, [])) != 1} == {}


# ---- every user-visible text lives in tocsin.messages ----
# files other branches are rewriting; emptied when they land
PENDING_INLINE_TEXTS: set[str] = set()
TEXT_BEARING_ROOTS = {"TocsinError", "ActionError"}  # their ``detail`` is what a user reads


def error_classes_taking_a_detail() -> set[str]:
    """The package's error classes whose first argument is the text a user reads: descendants
    of TocsinError (an API/CLI answer) and ActionError (a run's error), unless their own
    ``__init__`` takes something else first (``ContractMismatch(field, …)``)."""
    bases: dict[str, list[str]] = {}
    first_param: dict[str, str] = {}
    for p in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(p.read_text())):
            if isinstance(node, ast.ClassDef):
                bases[node.name] = [b.id for b in node.bases if isinstance(b, ast.Name)]
                for item in node.body:
                    if isinstance(item, ast.FunctionDef) and item.name == "__init__":
                        params = item.args.args[1:] + item.args.kwonlyargs
                        first_param[node.name] = params[0].arg if params else ""

    def descends(name: str) -> bool:
        return name in TEXT_BEARING_ROOTS or any(descends(b) for b in bases.get(name, []))

    def first_of(name: str) -> str | None:
        if name in first_param:
            return first_param[name]
        return next((f for b in bases.get(name, []) if (f := first_of(b)) is not None), None)

    return {name for name in bases if descends(name) and first_of(name) == "detail"}


def is_inline_text(node: ast.expr) -> bool:
    """Words written in place: a string literal or an f-string with a letter in its literal
    parts (``f"{path}: {detail}"`` only joins texts), or an expression built on one
    (``"a" + b``, ``"…".format(…)``)."""
    if isinstance(node, ast.JoinedStr):
        return any(is_inline_text(v) for v in node.values if isinstance(v, ast.Constant))
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str) and any(c.isalpha() for c in node.value)
    if isinstance(node, ast.BinOp):
        return is_inline_text(node.left) or is_inline_text(node.right)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        return is_inline_text(node.func.value)
    return False


TEXT_PARAMETERS = {"detail", "text", "reason"}


def error_factories(tree: ast.AST, classes: set[str]) -> dict[str, list[str]]:
    """A module's functions that make an error (``def _invalid(reason: str) -> ConfigError``,
    ``def _error(text: str) -> typer.Exit``): name → their positional parameters (the text
    ones are in :data:`TEXT_PARAMETERS`)."""
    found: dict[str, list[str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.returns is not None:
            returned = ast.unparse(node.returns).strip("'\"")
            if returned in classes or returned.endswith("Exit"):
                found[node.name] = [a.arg for a in node.args.args if a.arg != "self"]
    return found


def inline_texts(tree: ast.AST, classes: set[str]) -> list[str]:
    """``lineno: text`` of each inline text given as an error's detail or an error factory's
    text in the module ``tree``."""
    factories = error_factories(tree, classes)
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        callee = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", "")
        if callee in classes or callee == "HTTPException":
            params = ["detail"] if callee in classes else ["status_code", "detail"]
        elif callee in factories:
            params = factories[callee]
        else:
            continue
        given = dict(zip(params, node.args, strict=False)) | {
            k.arg: k.value for k in node.keywords if k.arg is not None
        }
        found += [
            f"{node.lineno}: {ast.unparse(value)}"
            for name, value in given.items()
            if name in TEXT_PARAMETERS and is_inline_text(value)
        ]
    return found


def test_errors_carry_texts_from_the_messages_package() -> None:
    classes = error_classes_taking_a_detail()
    assert {
        "TocsinError",
        "ValidationError",
        "ConfigError",
        "SettingsError",
        "ActionError",
    } <= classes
    assert "ContractMismatch" not in classes  # its first argument is a field name
    predicates = ast.parse((PACKAGE / "core" / "config" / "predicates.py").read_text())
    assert error_factories(predicates, classes) == {"_invalid": ["reason"]}
    found = [
        f"{p.relative_to(ROOT)}:{line}"
        for p in sorted(PACKAGE.rglob("*.py"))
        if "messages" not in p.relative_to(PACKAGE).parts
        and str(p.relative_to(ROOT)) not in PENDING_INLINE_TEXTS
        for line in inline_texts(ast.parse(p.read_text()), classes)
    ]
    assert found == []


def has_words(node: ast.expr) -> bool:
    """Words written in place: literal text with a letter and a space (``"no such lane"``,
    ``f"lane {id} vanished"``), or an expression built on it; a name (``"selection.rejected"``)
    or a separator (``"/".join(…)``) is not."""
    if isinstance(node, ast.JoinedStr):
        return any(has_words(v) for v in node.values if isinstance(v, ast.Constant))
    if isinstance(node, ast.Constant):
        text = node.value
        return isinstance(text, str) and any(c.isalpha() for c in text) and " " in text.strip()
    if isinstance(node, ast.BinOp):
        return has_words(node.left) or has_words(node.right)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        return has_words(node.func.value)
    return False


PRINTERS = {"echo", "secho", "print", "confirm"}  # typer's and Rich's: the command line's output


def raised(node: ast.AST) -> list[ast.expr]:
    """What an exception is raised with (any exception class or factory, a ``ValueError`` of
    the Python API as much as a ``TocsinError``); a ``code=`` is a machine word, not a text."""
    if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call):
        return [*node.exc.args, *(k.value for k in node.exc.keywords if k.arg != "code")]
    return []


def printed(node: ast.AST) -> list[ast.expr]:
    """What a command-line print (typer's, Rich's) prints."""
    if isinstance(node, ast.Call) and getattr(node.func, "attr", "") in PRINTERS:
        return [*node.args, *(k.value for k in node.keywords)]
    return []


def words_in_place(tree: ast.AST, given: Callable[[ast.AST], list[ast.expr]]) -> list[str]:
    """``lineno: code`` of each node whose ``given`` values hold words written in place."""
    return [
        f"{getattr(node, 'lineno', 0)}: {ast.unparse(node)}"
        for node in ast.walk(tree)
        if any(has_words(value) for value in given(node))
    ]


def lines_with_words(files: list[Path], given: Callable[[ast.AST], list[ast.expr]]) -> list[str]:
    return [
        f"{p.relative_to(ROOT)}:{line}"
        for p in files
        for line in words_in_place(ast.parse(p.read_text()), given)
    ]


def test_raised_exceptions_carry_texts_from_the_messages_package() -> None:
    sample = ast.parse(
        'raise ValueError(f"unknown role {role!r}")\n'
        'raise ConfigError(messages.X, code="tz invalid")\n'
        'raise ContractMismatch("selection.rejected", "/".join(KINDS), found)\n'
        'raise error("the deadline passed")\n'
    )
    assert [t.split(":")[0] for t in words_in_place(sample, raised)] == ["1", "4"]
    files = [
        p
        for p in sorted(PACKAGE.rglob("*.py"))
        if "messages" not in p.relative_to(PACKAGE).parts
        and str(p.relative_to(ROOT)) not in PENDING_INLINE_TEXTS
    ]
    assert lines_with_words(files, raised) == []


def test_the_command_line_prints_texts_from_the_messages_package() -> None:
    sample = ast.parse(
        'typer.echo(f"created table {name!r}")\n'
        "typer.echo(messages.paused_line(x))\n"
        'console.print(f"[bold]{messages.iac_plan_line(n)}[/]")\n'
        'typer.echo(f"error: {messages.X}", err=True)\n'
    )
    assert [t.split(":")[0] for t in words_in_place(sample, printed)] == ["1"]
    assert lines_with_words(sorted((PACKAGE / "cli").rglob("*.py")), printed) == []


def test_no_two_messages_modules_define_the_same_name() -> None:
    """``tocsin.messages`` star-imports its modules: a name defined twice would silently
    shadow the other text."""
    defined: dict[str, list[str]] = {}
    for p in sorted((PACKAGE / "messages").glob("*.py")):
        if p.name != "__init__.py":
            for name in module_level_names(ast.parse(p.read_text())):
                defined.setdefault(name, []).append(p.name)
    assert len(defined) > 100
    assert {n: where for n, where in defined.items() if len(where) > 1} == {}
