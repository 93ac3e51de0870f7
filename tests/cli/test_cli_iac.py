"""``tocsin export | plan | apply`` (SPEC §11).

The exit codes are the contract (``terraform plan -detailed-exitcode``): 0 no changes, 2
changes, 1 error. Each command runs against the conftest database (SQLite file or PostgreSQL
schema) through ``TOCSIN_DATABASE_URL`` and no other ``TOCSIN_*`` variable: in this process
through Typer's runner (``Cli.run``), and, where the process boundary is what is tested (the
answer read from a real stdin, ``--yes``, a malformed setting read at start), as the console
script in a subprocess (``Cli.run(..., process=True)``). Both return the exit code, stdout and
stderr.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from support.cli import runner
from tocsin import iac, messages
from tocsin.cli import app
from tocsin.service import Tocsin

NOW = datetime(2026, 8, 27, 5, 2, 13, tzinfo=UTC)
TOCSIN = Path(sys.executable).with_name("tocsin")
REMINDER = {
    "name": "remind",
    "on": "schedule",
    "schedule": {"type": "date_column_reached", "column": "Due", "offset_minutes": -60},
    "actions": [{"type": "notify", "message": "due"}],
}
HOURLY = {
    "name": "hourly",
    "on": "schedule",
    "schedule": {"type": "cron", "expression": "0 * * * *", "timezone": "Asia/Taipei"},
    "actions": [{"type": "notify", "message": "tick"}],
}


class Cli:
    def __init__(self, store_url: str, scope_id: str, tmp: Path) -> None:
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("TOCSIN_")}
        self.env["TOCSIN_DATABASE_URL"] = store_url
        self.scope = f"chatroom:{scope_id}"
        self.tmp = tmp

    def run(
        self, *args: str, stdin: str = "", process: bool = False
    ) -> subprocess.CompletedProcess[str]:
        if process:
            return subprocess.run(
                [str(TOCSIN), *args],
                input=stdin,
                capture_output=True,
                text=True,
                env=self.env,
                timeout=120,
                check=False,
            )
        # os.environ as the subprocess would see it: other TOCSIN_* variables unset
        env: dict[str, str | None] = {k: None for k in os.environ if k.startswith("TOCSIN_")}
        env.update((k, v) for k, v in self.env.items() if k.startswith("TOCSIN_"))
        result = runner.invoke(app, list(args), input=stdin, env=env, catch_exceptions=False)
        return subprocess.CompletedProcess(
            ["tocsin", *args], result.exit_code, result.stdout, result.stderr
        )

    def write(self, documents: list[dict[str, Any]]) -> str:
        path = self.tmp / f"triggers-{uuid.uuid4().hex[:6]}.jsonl"
        path.write_text(iac.dumps(documents), encoding="utf-8")
        return str(path)


@pytest.fixture
def setup(tocsin: Tocsin, store_url: str, tmp_path: Path) -> tuple[Cli, str]:
    scope_id = str(uuid.uuid4())
    table = tocsin.create_table("chatroom", scope_id, "Cases", {"Due": "datetime"}, now=NOW)
    tocsin.set_triggers(table["id"], [REMINDER, HOURLY], now=NOW)
    return Cli(store_url, scope_id, tmp_path), str(table["id"])


def test_export_plan_apply_exit_codes_and_json(setup: tuple[Cli, str], tocsin: Tocsin) -> None:
    cli, table_id = setup
    exported = cli.run("export", "--scope", cli.scope)
    assert exported.returncode == 0, exported.stderr
    assert cli.run("export", "--scope", cli.scope, "--table", "Cases").stdout == exported.stdout
    documents = iac.loads(exported.stdout)
    assert [d["name"] for d in documents] == ["remind", "hourly"]
    path = cli.write(documents)

    unchanged = cli.run("plan", path, "--scope", cli.scope)
    assert unchanged.returncode == 0, unchanged.stderr
    assert "2 unchanged" in unchanged.stdout
    as_json = cli.run("plan", path, "--scope", cli.scope, "--json")
    assert as_json.returncode == 0
    assert [e["action"] for e in json.loads(as_json.stdout)["plan"]] == ["noop", "noop"]

    remind, hourly = documents
    hourly["schedule"]["expression"] = "30 * * * *"
    changed = cli.write([hourly])
    plan = cli.run("plan", changed, "--scope", cli.scope)
    assert plan.returncode == 2, plan.stderr
    assert "schedule.expression" in plan.stdout and "1 to update, 1 to delete" in plan.stdout
    entries = json.loads(cli.run("plan", changed, "--scope", cli.scope, "--json").stdout)["plan"]
    assert [(e["action"], e["trigger_id"]) for e in entries] == [
        ("update", hourly["id"]),
        ("delete", remind["id"]),
    ]

    refused = cli.run("apply", changed, "--scope", cli.scope, stdin="n\n", process=True)
    assert refused.returncode == 1
    assert len(tocsin.get_triggers(table_id)) == 2  # nothing applied
    applied = cli.run("apply", changed, "--scope", cli.scope, "--yes", process=True)
    assert applied.returncode == 0, applied.stderr
    assert "Apply complete: 0 created, 1 updated, 1 deleted." in applied.stdout
    [stored] = tocsin.get_triggers(table_id)
    assert stored["schedule"]["expression"] == "30 * * * *"
    assert cli.run("plan", changed, "--scope", cli.scope).returncode == 0
    again = cli.run("apply", changed, "--scope", cli.scope)
    assert again.returncode == 0 and "No changes" in again.stdout


def test_errors_exit_1_with_the_text(setup: tuple[Cli, str], tocsin: Tocsin) -> None:
    cli, table_id = setup
    documents = iac.loads(cli.run("export", "--scope", cli.scope).stdout)
    documents[0]["schedule"]["offset_minutes"] = True
    boolean = cli.write(documents)
    planned = cli.run("plan", boolean, "--scope", cli.scope)
    assert planned.returncode == 1  # what apply refuses fails the plan too
    assert messages.OFFSET_MINUTES_INVALID in planned.stdout
    assert messages.iac_plan_invalid(1) in planned.stderr
    failed = cli.run("apply", boolean, "--scope", cli.scope, "--yes")
    assert failed.returncode == 1
    assert messages.iac_plan_invalid(1) in failed.stderr  # refused before asking or writing
    assert tocsin.get_triggers(table_id)[0]["schedule"]["offset_minutes"] == -60

    unknown = cli.write([{"table": "Nope", **HOURLY}])
    result = cli.run("plan", unknown, "--scope", cli.scope, "--json")
    assert result.returncode == 1
    assert "table 'Nope' is not a live table" in result.stderr
    missing = cli.run("plan", str(cli.tmp / "absent.jsonl"), "--scope", cli.scope)
    assert missing.returncode == 1 and "cannot read" in missing.stderr
    (cli.tmp / "bad.jsonl").write_text('{"table": "Cases"}\nnot json\n', encoding="utf-8")
    bad = cli.run("plan", str(cli.tmp / "bad.jsonl"), "--scope", cli.scope)
    assert bad.returncode == 1 and "line 2" in bad.stderr
    assert cli.run("plan", boolean, "--scope", "chatroom:nope").returncode == 1


def test_a_malformed_setting_is_exit_1_not_2(setup: tuple[Cli, str]) -> None:
    cli, _ = setup
    path = cli.write([{"table": "Cases", **HOURLY}])
    assert cli.run("plan", path, "--scope", cli.scope, process=True).returncode == 2
    cli.env["TOCSIN_STUCK_AFTER_S"] = "abc"
    result = cli.run("plan", path, "--scope", cli.scope, process=True)
    assert result.returncode == 1
    assert "TOCSIN_STUCK_AFTER_S" in result.stderr


def test_plan_exits_1_when_any_document_is_invalid(setup: tuple[Cli, str], tocsin: Tocsin) -> None:
    """A CI gate that only plans is a real gate: what apply would refuse fails the plan."""
    cli, table_id = setup
    documents = tocsin.export(*cli.scope.split(":"))
    ftp = {"type": "webhook", "url": "ftp://files.example/in"}
    bad = {"table": "Cases", "id": "trg_ftp", "on": "created", "actions": [ftp]}
    good = {
        "table": "Cases",
        "id": "trg_new",
        "on": "created",
        "actions": [ftp | {"url": "https://x.example/in"}],
    }
    detail = (
        "table 'Cases', trigger 'trg_ftp': action invalid: webhook action url must be an "
        "http:// or https:// URL with a host (got 'ftp://files.example/in')"
    )
    mixed = cli.write([*documents, good, bad])
    plan = cli.run("plan", mixed, "--scope", cli.scope)
    assert plan.returncode == 1, plan.stderr
    assert "! invalid Cases / trg_ftp" in plan.stdout and f"refused: {detail}" in plan.stdout
    assert "1 to create, 0 to update, 0 to delete, 2 unchanged, 1 invalid." in plan.stdout
    assert plan.stderr == f"error: {messages.iac_plan_invalid(1)}\n"
    as_json = cli.run("plan", mixed, "--scope", cli.scope, "--json")
    assert as_json.returncode == 1
    entries = json.loads(as_json.stdout)["plan"]
    assert [e["action"] for e in entries] == ["noop", "noop", "create", "invalid"]
    assert entries[3]["detail"] == detail
    pending = cli.run("plan", cli.write([*documents, good]), "--scope", cli.scope)
    assert pending.returncode == 2, pending.stderr  # the documented "changes pending"
    refused = cli.run("apply", mixed, "--scope", cli.scope, "--yes")
    assert refused.returncode == 1 and messages.iac_plan_invalid(1) in refused.stderr
    assert len(tocsin.get_triggers(table_id)) == 2  # nothing applied
