"""The ``tocsin`` command line (SPEC §16, DESIGN §4b CLI shapes), through Typer's runner.

Every command reads ``TOCSIN_DATABASE_URL``; here it points at the conftest database.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest

from support.cli import invoke, runner
from tocsin.cli import app
from tocsin.errors import TransientStoreError
from tocsin.service import Tocsin

INTERVAL = {
    "name": "hourly",
    "on": "schedule",
    "schedule": {"type": "interval", "every_seconds": 3600},
    "actions": [{"type": "notify", "message": "hi"}],
}


@pytest.fixture
def env(env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    monkeypatch.setenv("TOCSIN_ADMIN_TOKEN", "cli-admin-token-of-32-characters")
    return env


def scheduled_table(tocsin: Tocsin) -> str:
    table = tocsin.create_table(
        scope="chatroom", scope_id=str(uuid.uuid4()), name="Cases", columns={"Due": "date"}
    )
    tocsin.set_triggers(table["id"], [INTERVAL])
    table_id: str = table["id"]
    return table_id


def test_tokens_create_prints_the_token_alone_on_its_last_line(
    env: dict[str, str], tocsin: Tocsin
) -> None:
    scope_id = str(uuid.uuid4())
    result = invoke("tokens", "create", "--scope", f"chatroom:{scope_id}", "--role", "moderator")
    assert result.exit_code == 0, result.output
    token = result.output.strip().splitlines()[-1]
    assert " " not in token and len(token) >= 32
    principal = tocsin.verify_token(token)
    assert principal is not None
    assert (principal.scope, principal.scope_id, principal.role) == (
        "chatroom",
        scope_id,
        "moderator",
    )


@pytest.mark.parametrize(
    "args",
    [
        ["--scope", "team:6f1c2a9e-0b7d-4c1e-9a53-2f0e8d7c4b11"],
        ["--scope", "chatroom:not-a-uuid"],
        ["--scope", "chatroom:6f1c2a9e-0b7d-4c1e-9a53-2f0e8d7c4b11", "--role", "owner"],
    ],
    ids=["scope-kind", "scope-id", "role"],
)
def test_tokens_create_refuses_bad_scopes_and_roles(env: dict[str, str], args: list[str]) -> None:
    result = runner.invoke(app, ["tokens", "create", *args])
    assert result.exit_code == 2
    assert "invalid" in result.output


def test_tick_prints_its_counts_as_json(env: dict[str, str], tocsin: Tocsin) -> None:
    scheduled_table(tocsin)
    result = invoke("tick", "--table-limit", "10", "--record-limit", "10")
    assert result.exit_code == 0, result.output
    counts = json.loads(result.output)
    assert counts["runs_created"] == 1 and counts["tables_with_schedules"] == 1


def test_tick_limits_are_bounded(env: dict[str, str]) -> None:
    assert runner.invoke(app, ["tick", "--table-limit", "0"]).exit_code == 2
    assert runner.invoke(app, ["tick", "--record-limit", "10001"]).exit_code == 2


def test_runs_list_and_retry(env: dict[str, str], tocsin: Tocsin) -> None:
    table_id = scheduled_table(tocsin)
    invoke("tick")
    listed = invoke("runs", "list", "--table", table_id, "--json")
    assert listed.exit_code == 0, listed.output
    page = json.loads(listed.output)
    assert page["total"] == 1
    run_id = page["items"][0]["id"]
    assert invoke("runs", "list", "--table", table_id, "--status", "pending").exit_code == 0
    retried = invoke("runs", "retry", "--table", table_id, run_id)
    assert retried.exit_code == 0, retried.output
    assert json.loads(retried.output)["status"] == "pending"
    missing = runner.invoke(app, ["runs", "retry", "--table", table_id, str(uuid.uuid4())])
    assert missing.exit_code == 1
    assert "404" in missing.output


def test_preview_prints_the_document(env: dict[str, str], tocsin: Tocsin) -> None:
    table_id = scheduled_table(tocsin)
    result = invoke("preview", "--table", table_id)
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    assert doc["table_id"] == table_id and doc["triggers"][0]["kind"] == "interval"
    assert json.loads(invoke("runs", "list", "--table", table_id, "--json").output)["total"] == 0


def test_an_unknown_table_is_an_error_not_a_traceback(env: dict[str, str]) -> None:
    result = runner.invoke(app, ["preview", "--table", "nope"])
    assert result.exit_code == 1
    assert "404" in result.output


@pytest.mark.parametrize(
    ("url", "args"),
    [
        ("bogus://nowhere", ["tick"]),
        ("postgresql://tocsin:s3cret@127.0.0.1:1/tocsin", ["runs", "list", "--table", "t"]),
        ("postgresql://tocsin:s3cret@127.0.0.1:1/tocsin", ["worker"]),
        ("postgresql://tocsin:s3cret@127.0.0.1:1/tocsin", ["serve", "--port", "0"]),
    ],
    ids=["unknown-dialect", "no-server", "worker", "serve"],
)
def test_a_database_that_cannot_be_opened_is_one_line_and_exit_1(
    monkeypatch: pytest.MonkeyPatch, url: str, args: list[str]
) -> None:
    """Not a traceback, and the password in the URL is not printed."""
    monkeypatch.setenv("TOCSIN_DATABASE_URL", url)
    result = runner.invoke(app, args)
    assert result.exit_code == 1, result.output
    assert "error: cannot open the database" in result.output
    assert "Traceback" not in result.output and "s3cret" not in result.output


def test_a_failing_tick_is_an_error_line_not_a_traceback(
    env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def locked(self: Tocsin, **_: Any) -> dict[str, int]:
        raise TransientStoreError("database is locked")

    monkeypatch.setattr(Tocsin, "tick", locked)
    result = runner.invoke(app, ["tick"])
    assert result.exit_code == 1
    assert "error (503): database is locked" in result.output


def test_tokens_expire_list_without_secrets_and_revoke(env: dict[str, str], tocsin: Tocsin) -> None:
    """``--expires-in``, ``tokens list`` (ids, no secret) and ``tokens revoke``."""
    scope = f"chatroom:{uuid.uuid4()}"
    made = invoke("tokens", "create", "--scope", scope, "--expires-in", "12h")
    assert made.exit_code == 0, made.output
    assert ", expires " in made.output
    token = made.output.strip().splitlines()[-1]
    assert tocsin.verify_token(token) is not None
    listed = invoke("tokens", "list")
    assert listed.exit_code == 0, listed.output
    assert token not in listed.output and "active" in listed.output
    (row,) = tocsin.list_tokens()
    assert row["expires_at"] is not None and row["id"] in listed.output
    revoked = invoke("tokens", "revoke", row["id"])
    assert revoked.exit_code == 0 and row["id"] in revoked.output
    assert tocsin.verify_token(token) is None
    assert "revoked" in invoke("tokens", "list").output
    assert runner.invoke(app, ["tokens", "revoke", "no-such-token"]).exit_code == 1
    for bad in ("0d", "12", "3y", "-1h"):
        refused = runner.invoke(app, ["tokens", "create", "--scope", scope, "--expires-in", bad])
        assert refused.exit_code == 2 and "--expires-in" in refused.output
