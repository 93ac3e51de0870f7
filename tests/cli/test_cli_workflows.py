"""``tocsin schedules …``, ``tocsin workflows …``, ``tocsin scheduler --app`` and permission
tokens through Typer's runner (SPEC §12, §15, §16)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

from support.cli import invoke, runner
from tocsin import messages
from tocsin.cli import app
from tocsin.core.schedules.skips import SCHEDULE, SkipRange
from tocsin.service import Tocsin
from tocsin.store import skips as store_skips

APP = "workflows.sample_app:WORKFLOWS"


def test_tokens_create_with_a_permission(env: dict[str, str], tocsin: Tocsin) -> None:
    result = invoke("tokens", "create", "--permission", "schedules:write")
    assert result.exit_code == 0, result.output
    assert "with schedules:write" in result.output
    principal = tocsin.verify_token(result.output.strip().splitlines()[-1])
    assert principal is not None and principal.has("schedules:read")
    assert principal.permissions == frozenset({"schedules:write"})
    bad = invoke("tokens", "create", "--permission", "schedules:admin")
    assert bad.exit_code == 2 and "invalid permission 'schedules:admin'" in bad.output
    assert invoke("tokens", "create").exit_code == 2


def test_scheduler_syncs_and_ticks_at_the_instants_it_is_given(
    env: dict[str, str], tocsin: Tocsin
) -> None:
    stdin = "2026-03-02T12:00:30+00:00\n2026-03-02T12:01:00+00:00\n2026-03-02T12:01:00+00:00\n"
    result = invoke("scheduler", "--app", APP, "--clock-stdin", stdin=stdin)
    assert result.exit_code == 0, result.output
    lines = [json.loads(line) for line in result.output.splitlines() if line.startswith("{")]
    counts = [c for c in lines if "tables_scanned" in c]  # stderr's JSON logs are mixed in
    assert [c["schedules_fired"] for c in counts] == [0, 1, 0]
    assert {s["id"] for s in tocsin.schedules.list()["items"]} == {
        "wf_daily-report",
        "wf_tick-tock",
    }


def test_schedules_commands(env: dict[str, str], tocsin: Tocsin) -> None:
    invoke(
        "scheduler",
        "--app",
        APP,
        "--clock-stdin",
        stdin="2026-03-02T12:00:30Z\n2026-03-02T12:01:00Z\n",
    )
    listed = invoke("schedules", "list")
    assert (
        listed.exit_code == 0
        and "wf_tick-tock" in listed.output
        and "2 schedule(s)" in listed.output
    )
    shown = json.loads(invoke("schedules", "show", "wf_tick-tock", "--json").output)
    assert shown["cron"] == "* * * * *" and shown["last_fire"]["run_status"] == "pending"
    assert shown["paused"] is False and shown["paused_at"] is None
    assert "paused wf_tick-tock" in invoke("schedules", "pause", "wf_tick-tock").output
    assert tocsin.schedules.get("wf_tick-tock")["paused"] is True
    paused = json.loads(invoke("schedules", "show", "wf_tick-tock", "--json").output)
    assert paused["paused"] is True and paused["paused_at"] is not None
    assert "paused_at" in invoke("schedules", "show", "wf_tick-tock").output
    assert "resumed wf_tick-tock" in invoke("schedules", "resume", "wf_tick-tock").output
    fires = invoke("schedules", "fires", "wf_tick-tock")
    assert "1 fire(s) of wf_tick-tock" in fires.output and "published" in fires.output
    at = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)  # skips on both sides of the 12:01 fire
    sid, later = "wf_tick-tock", at.replace(minute=2)
    ranges = [
        SkipRange(SCHEDULE, sid, "paused", at, at, 1),
        SkipRange(SCHEDULE, sid, "coalesced", later, later + timedelta(minutes=7), 8),
    ]
    with tocsin.store.begin() as tx:
        store_skips.record_skips(tx, ranges=ranges, now=at)
    wide = runner.invoke(app, ["schedules", "fires", "wf_tick-tock"], env={"COLUMNS": "200"})
    lines = wide.output.splitlines()  # a wide terminal: one line per row
    coalesced, fire, paused = (
        next(n for n, line in enumerate(lines) if all(w in line for w in words))
        for words in (
            ("2026-03-02 12:02:00+00:00 … 2026-03-02 12:09:00+00:00", "skipped (8)", "coalesced"),
            ("2026-03-02 12:01:00+00:00", "published"),
            ("2026-03-02 12:00:00+00:00", "skipped", "paused"),
        )
    )
    assert coalesced < fire < paused  # newest first, the skips between the fires by time
    as_json = json.loads(invoke("schedules", "fires", "wf_tick-tock", "--json").output)
    assert as_json["total"] == 1 and len(as_json["items"]) == 1  # --json: the fires, as before
    missing = invoke("schedules", "show", "nope")
    assert missing.exit_code == 1 and "error (404): schedule not found" in missing.output


def test_workflows_commands(env: dict[str, str], tocsin: Tocsin) -> None:
    listed = invoke("workflows", "list", "--app", APP)
    assert (
        listed.exit_code == 0
        and "daily-report" in listed.output
        and "wf_tick-tock" in listed.output
    )
    started = invoke(
        "workflows", "start", "daily-report", "--app", APP, "--input", '{"user_id": "c"}'
    )
    assert started.exit_code == 0, started.output
    run = json.loads(started.output.splitlines()[0])  # a stale log handler may add lines
    assert run["status"] == "success" and run["output"] == {"ok": True, "user_id": "c"}
    runs = invoke("workflows", "runs", "--workflow", "daily-report")
    assert "1 run(s)" in runs.output and "success" in runs.output
    unknown = invoke("workflows", "start", "nope", "--app", APP)
    assert unknown.exit_code == 1 and "unknown workflow 'nope'" in unknown.output


def test_a_bad_app_is_one_line_and_exit_2(env: dict[str, str]) -> None:
    for spec, text in (
        ("nomodule_xyz:app", "cannot import 'nomodule_xyz'"),
        ("workflows.sample_app:MISSING", "has no attribute 'MISSING'"),
        ("workflows.sample_app:NOT_WORKFLOWS", "must name a Tocsin, a workflow or a list"),
        ("no-colon", "--app must be 'module:attr'"),
    ):
        result = invoke("workflows", "list", "--app", spec)
        assert result.exit_code == 2 and text in result.output, result.output


def test_tokens_create_with_a_permission_and_an_expiry(env: dict[str, str], tocsin: Tocsin) -> None:
    result = invoke("tokens", "create", "--permission", "schedules:read", "--expires-in", "2h")
    assert result.exit_code == 0, result.output
    assert "with schedules:read, expires " in result.output
    principal = tocsin.verify_token(result.output.strip().splitlines()[-1])
    assert principal is not None and principal.permissions == frozenset({"schedules:read"})
    listed = invoke("tokens", "list")
    assert listed.exit_code == 0 and "schedules:read" in listed.output and "active" in listed.output


def test_workflows_list_without_app_lists_what_the_database_knows(
    env: dict[str, str], tocsin: Tocsin
) -> None:
    """The schedules synced and the runs started by a process with the code; then listed by one
    without it: each workflow with its schedules and runs, said to have no code loaded."""
    synced = invoke("scheduler", "--app", APP, "--clock-stdin", stdin="2026-03-02T12:00:30Z\n")
    assert synced.exit_code == 0, synced.output
    invoke("workflows", "start", "daily-report", "--app", APP, "--input", '{"user_id": "c"}')
    listed = invoke("workflows", "list")
    assert listed.exit_code == 0, listed.output
    assert "2 workflow(s)" in listed.output
    assert messages.workflows_code_not_loaded(2) in " ".join(listed.output.split())
    items = {w["id"]: w for w in json.loads(invoke("workflows", "list", "--json").output)}
    assert set(items) == {"daily-report", "tick-tock"}
    daily = items["daily-report"]
    assert (daily["code_loaded"], daily["schedules"], daily["runs"]) == (
        False,
        ["wf_daily-report"],
        1,
    )
    assert daily["steps"] is None and items["tick-tock"]["runs"] == 0
    with_code = json.loads(invoke("workflows", "list", "--app", APP, "--json").output)
    assert all(w["code_loaded"] for w in with_code) and len(with_code) == 2
    assert "code not loaded" not in invoke("workflows", "list", "--app", APP).output


def test_workflows_runs_takes_the_workflow_id_positionally(
    env: dict[str, str], tocsin: Tocsin
) -> None:
    for user in ("a", "b"):
        invoke(
            "workflows",
            "start",
            "daily-report",
            "--app",
            APP,
            "--input",
            f'{{"user_id": "{user}"}}',
        )
    invoke("workflows", "start", "tick-tock", "--app", APP)
    positional = json.loads(invoke("workflows", "runs", "daily-report", "--json").output)
    option = json.loads(invoke("workflows", "runs", "--workflow", "daily-report", "--json").output)
    assert positional["total"] == option["total"] == 2
    assert {r["workflow_id"] for r in positional["items"]} == {"daily-report"}
    assert json.loads(invoke("workflows", "runs", "--json").output)["total"] == 3
    both = invoke("workflows", "runs", "daily-report", "--workflow", "tick-tock")
    assert both.exit_code == 2 and "two workflows given" in both.output
