"""The command line's common surface: no command but ``serve`` and ``demo`` creates a database
by accident (``--create`` allows it), tables fit a narrow terminal without splitting a word or an
id, and ``tocsin --version``."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import uuid
from importlib.metadata import version
from pathlib import Path
from typing import Any

import click
import pytest
import typer
from rich.cells import cell_len
from typer.testing import CliRunner

from tocsin import messages
from tocsin.cli import app
from tocsin.service import Tocsin

runner = CliRunner()
APP = "workflows.sample_app:WORKFLOWS"
SCOPE = f"chatroom:{uuid.uuid4()}"
CREATES = {("serve",), ("demo",)}  # they create their database: that is what they are for
NO_DATABASE = {("lanes", "verify")}  # reads a file only
TOCSIN = str(Path(sys.executable).parent / "tocsin")
# every command that opens the database, with arguments that get it as far as opening it
OPENING: dict[tuple[str, ...], list[str]] = {
    ("secrets", "rotate"): ["--scope", SCOPE],
    ("tokens", "create"): ["--permission", "schedules:read"],
    ("tokens", "list"): [],
    ("tokens", "revoke"): ["tok_x"],
    ("tick",): [],
    ("scheduler",): ["--clock-stdin"],
    ("schedules", "list"): [],
    ("schedules", "show"): ["sch_x"],
    ("schedules", "create"): ["--workflow", "w", "--cron", "* * * * *"],
    ("schedules", "pause"): ["sch_x"],
    ("schedules", "resume"): ["sch_x"],
    ("schedules", "fires"): ["sch_x"],
    ("schedules", "skips"): ["sch_x"],
    ("schedules", "next"): ["sch_x"],
    ("schedules", "backfill"): [
        "sch_x",
        "--from",
        "2026-01-01T00:00Z",
        "--to",
        "2026-01-02T00:00Z",
    ],
    ("workflows", "list"): [],
    ("workflows", "start"): ["w"],
    ("workflows", "runs"): [],
    ("lanes", "list"): [],
    ("lanes", "contracts"): ["lane"],
    ("lanes", "fires"): ["lane"],
    ("lanes", "next"): ["lane"],
    ("lanes", "pause"): ["lane"],
    ("lanes", "resume"): ["lane"],
    ("lanes", "requeue"): ["lane", "att_x"],
    ("due",): [],
    ("export",): ["--schedules"],
    ("plan",): ["-"],
    ("apply",): ["-", "--yes"],
    ("tables", "list"): ["--scope", SCOPE],
    ("tables", "show"): ["t"],
    ("tables", "create"): ["--scope", SCOPE, "--name", "A"],
    ("triggers", "list"): ["--table", "t"],
    ("triggers", "show"): ["--table", "t", "trg_x"],
    ("triggers", "set"): ["--table", "t", "--file", "-"],
    ("triggers", "pause"): ["--table", "t", "trg_x"],
    ("triggers", "resume"): ["--table", "t", "trg_x"],
    ("triggers", "fires"): ["--table", "t", "trg_x"],
    ("triggers", "skips"): ["--table", "t", "trg_x"],
    ("triggers", "next"): ["--table", "t", "trg_x"],
    ("triggers", "run"): ["--table", "t", "trg_x"],
    ("runs", "list"): ["--table", "t"],
    ("runs", "retry"): ["--table", "t", "run_x"],
    ("preview",): ["--table", "t"],
    ("messages",): ["--chatroom", str(uuid.uuid4())],
}


def commands() -> dict[tuple[str, ...], click.Command]:
    found: dict[tuple[str, ...], click.Command] = {}

    def walk(command: click.Command, path: tuple[str, ...]) -> None:
        subs = getattr(command, "commands", None)
        if subs is None:
            found[path] = command
        for name, sub in (subs or {}).items():
            walk(sub, (*path, name))

    walk(typer.main.get_command(app), ())
    return found


def test_every_command_that_opens_the_database_takes_create() -> None:
    """The list below is every command there is (a new one must join it), and each one that
    opens the database accepts ``--create``."""
    every = commands()
    assert set(every) == set(OPENING) | {("worker",)} | CREATES | NO_DATABASE
    for path in [*OPENING, ("worker",)]:
        options = {opt for p in every[path].params for opt in getattr(p, "opts", ())}
        assert "--create" in options, path


@pytest.mark.parametrize("path", sorted(OPENING), ids=" ".join)
def test_no_command_creates_a_database_by_accident(
    path: tuple[str, ...], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TOCSIN_DATABASE_URL", raising=False)
    monkeypatch.delenv("TOCSIN_APP", raising=False)
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, [*path, *OPENING[path]], input="")
    assert result.exit_code == 1, result.output
    assert messages.no_database("tocsin.db") in " ".join(result.output.split())
    assert not (tmp_path / "tocsin.db").exists()


def test_a_worker_refuses_instead_of_serving_a_new_database(tmp_path: Path) -> None:
    """A real process: refused, it would otherwise run until stopped."""
    env = {k: v for k, v in os.environ.items() if k not in ("TOCSIN_DATABASE_URL", "TOCSIN_APP")}
    done = subprocess.run(
        [TOCSIN, "worker"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=30
    )
    assert done.returncode == 1, done.stderr
    assert messages.no_database("tocsin.db") in done.stderr
    assert not (tmp_path / "tocsin.db").exists()


@pytest.mark.parametrize(
    "args",
    [
        ["secrets", "rotate", "--scope", SCOPE],
        ["tokens", "create", "--permission", "schedules:read"],
        ["tick"],
        ["schedules", "list"],
    ],
    ids=lambda a: " ".join(a[:2]),
)
def test_create_allows_a_new_database(
    args: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TOCSIN_DATABASE_URL", raising=False)
    monkeypatch.chdir(tmp_path)
    created = runner.invoke(app, [*args, "--create"])
    assert created.exit_code == 0, created.output
    assert (tmp_path / "tocsin.db").exists()
    again = runner.invoke(app, args)  # it exists now: no --create needed
    assert again.exit_code == 0, again.output


def test_version_prints_the_package_version() -> None:
    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0, result.output
    assert result.output.strip() == f"tocsin {version('tocsin')}"


# --- narrow terminals ---------------------------------------------------------------------------

WIDTH = 60


@pytest.fixture
def seeded(store_url: str, monkeypatch: pytest.MonkeyPatch, tocsin: Tocsin) -> dict[str, Any]:
    """Tables, triggers, tokens, schedules and workflow runs with long ids and several words."""
    monkeypatch.setenv("TOCSIN_DATABASE_URL", store_url)
    monkeypatch.delenv("TOCSIN_APP", raising=False)
    scope_id = str(uuid.uuid4())
    table = tocsin.create_table(
        "chatroom", scope_id, "Quarterly chatroom follow-ups", {"Title": "text", "Due": "date"}
    )
    notify = {"type": "notify", "message": "m"}
    tocsin.set_triggers(
        table["id"],
        [
            {
                "id": "trg_created",
                "name": "Welcome every new row",
                "on": "created",
                "actions": [notify],
            }
        ],
    )
    tocsin.create_token(scope="chatroom", scope_id=scope_id, role="moderator")
    tocsin.create_token(permissions=["schedules:write"])
    synced = runner.invoke(
        app, ["scheduler", "--app", APP, "--clock-stdin"], input="2026-03-02T12:00:30Z\n"
    )
    assert synced.exit_code == 0, synced.output
    started = runner.invoke(
        app, ["workflows", "start", "daily-report", "--app", APP, "--input", '{"user_id": "c"}']
    )
    assert started.exit_code == 0, started.output
    return {"scope_id": scope_id, "table": table["id"]}


def narrow(*args: str) -> str:
    result = runner.invoke(app, list(args), env={"COLUMNS": str(WIDTH)})
    assert result.exit_code == 0, result.output
    output: str = result.output
    return output


def json_of(*args: str) -> Any:
    result = runner.invoke(app, [*args, "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def assert_fits(output: str, ids: list[str], words: list[str]) -> None:
    """No line wider than the terminal; each id whole on one line; each word unsplit."""
    lines = output.splitlines()
    assert max(cell_len(line) for line in lines) <= WIDTH, output
    for text in (*ids, *words):
        pattern = rf"(?<![\w-]){re.escape(text)}(?![\w-])"
        assert any(re.search(pattern, line) for line in lines), (text, output)


def test_tables_fit_60_columns_with_whole_words_and_ids(seeded: dict[str, Any]) -> None:
    scope_id, table_id = seeded["scope_id"], seeded["table"]
    tables = narrow("tables", "list", "--scope", f"chatroom:{scope_id}")
    assert_fits(tables, [table_id, scope_id], ["chatroom", "Quarterly", "follow-ups"])

    tokens = narrow("tokens", "list")
    token_ids = [line.split()[1] for line in tokens.splitlines() if line.startswith("id ")]
    assert len(token_ids) == 2
    assert_fits(tokens, [*token_ids, f"chatroom:{scope_id}"], ["moderator", "schedules:write"])

    schedules = narrow("schedules", "list")
    assert_fits(
        schedules, ["wf_daily-report", "wf_tick-tock"], ["America/New_York", "UTC", "False"]
    )

    runs = json_of("workflows", "runs")["items"]
    listed = narrow("workflows", "runs")
    assert_fits(listed, [runs[0]["id"], "daily-report"], ["success", "manual"])

    triggers = narrow("triggers", "list", "--table", table_id)
    assert_fits(triggers, ["trg_created"], ["Welcome", "every", "created", "notify"])

    workflows = narrow("workflows", "list", "--app", APP)
    assert_fits(workflows, ["daily-report", "wf_tick-tock"], ["loaded"])
