"""``tocsin export --schedules | plan | apply`` with schedule documents (SPEC §11, §13).

Exit codes as for trigger documents: 0 no changes, 2 changes, 1 error. Runs on SQLite and
PostgreSQL (the conftest ``store_url``); the workflows come from ``--app``.
"""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from support.cli import invoke
from tocsin import iac, messages
from tocsin.service import Tocsin
from workflows.helpers import daily, every_minute

APP = "workflows.sample_app:WORKFLOWS"
NOW = datetime(2026, 3, 2, 8, 0, tzinfo=UTC)


def write(tmp: Path, documents: list[dict[str, Any]]) -> str:
    path = tmp / f"schedules-{uuid.uuid4().hex[:6]}.jsonl"
    path.write_text(iac.dumps(documents), encoding="utf-8")
    return str(path)


def test_export_plan_apply_schedule_documents(
    env: dict[str, str], tocsin: Tocsin, tmp_path: Path
) -> None:
    tocsin.register_workflows([daily(), every_minute()])
    tocsin.sync_schedules(now=NOW)  # declared schedules: never exported, never planned
    table = str(tocsin.create_table("chatroom", str(uuid.uuid4()), "T", {"N": "number"})["id"])
    tree = {
        "all": [
            {"cron": "0 9 * * *", "timezone": "Europe/Berlin"},
            {"event": "table_updated", "table_id": table},
        ]
    }
    made = tocsin.schedules.create(
        workflow_id="daily-report", trigger=tree, timezone="UTC", now=NOW
    )
    plain = tocsin.schedules.create(workflow_id="tick-tock", cron="*/5 * * * *", timezone="UTC")

    exported = invoke("export", "--schedules")
    assert exported.exit_code == 0, exported.output
    assert invoke("export", "--workflow", "daily-report", "--workflow", "tick-tock").stdout == (
        exported.stdout
    )
    documents = iac.loads(exported.stdout)
    assert documents == [
        {"workflow": "daily-report", "id": made["id"], "trigger": tree, "timezone": "UTC"},
        {"workflow": "tick-tock", "id": plain["id"], "cron": "*/5 * * * *", "timezone": "UTC"},
    ]
    path = write(tmp_path, documents)
    unchanged = invoke("plan", path, "--app", APP)
    assert unchanged.exit_code == 0, unchanged.output
    assert "Plan: 0 to create, 0 to update, 0 to delete, 2 unchanged." in unchanged.output

    any_tree = {"any": [{"event": "table_updated", "table_id": table}, {"cron": "0 * * * *"}]}
    changed = [
        {**documents[0], "trigger": any_tree},
        {"workflow": "daily-report", "cron": "0 6 * * *", "timezone": "Asia/Taipei"},
        {"workflow": "tick-tock"},
    ]
    path = write(tmp_path, changed)
    plan = invoke("plan", path, "--app", APP)
    assert plan.exit_code == 2, plan.output
    assert f"~ update workflow daily-report / {made['id']}" in plan.output
    assert "+ create workflow daily-report / (new id)" in plan.output
    assert f"- delete workflow tick-tock / {plain['id']}" in plan.output
    assert "1 to create, 1 to update, 1 to delete, 0 unchanged" in plan.output
    entries = json.loads(invoke("plan", path, "--app", APP, "--json").stdout)["plan"]
    assert [e["action"] for e in entries] == ["update", "create", "delete"]

    refused = invoke("apply", path, "--app", APP, stdin="n\n")
    assert refused.exit_code == 1
    assert invoke("plan", path, "--app", APP).exit_code == 2  # nothing applied
    applied = invoke("apply", path, "--app", APP, "--yes")
    assert applied.exit_code == 0, applied.output
    assert "Apply complete: 1 created, 1 updated, 1 deleted." in applied.output
    assert tocsin.schedules.get(made["id"])["description"]
    assert invoke("plan", path, "--app", APP).exit_code == 0
    again = invoke("apply", path, "--app", APP)
    assert again.exit_code == 0 and "No changes" in again.output
    after = iac.loads(invoke("export", "--schedules").stdout)
    assert [d["workflow"] for d in after] == ["daily-report", "daily-report"]
    assert after[[d["id"] for d in after].index(made["id"])]["trigger"] == any_tree
    assert invoke("plan", write(tmp_path, after), "--app", APP).exit_code == 0


def test_bad_schedule_documents_exit_1_and_write_nothing(
    env: dict[str, str], tocsin: Tocsin, tmp_path: Path
) -> None:
    good = {"workflow": "daily-report", "cron": "0 1 * * *", "timezone": "UTC"}
    gone = str(uuid.uuid4())
    event = {"event": "table_updated", "table_id": gone}
    for bad, text in [
        ({**good, "cron": "0 25 * * *"}, "25"),
        ({"workflow": "daily-report", "timezone": "UTC", "trigger": {"all": []}}, "all"),
        (
            {"workflow": "daily-report", "timezone": "UTC", "trigger": {"any": [event]}},
            messages.trigger_table_unknown("(new)", gone),
        ),
        ({"workflow": "ghost", "cron": "* * * * *"}, messages.workflow_unknown("ghost")),
    ]:
        path = write(tmp_path, [good, bad])
        for extra in ([], ["--yes"]):
            result = invoke("apply" if extra else "plan", path, "--app", APP, *extra)
            assert result.exit_code == 1, result.output
            assert "error (400): document 2: " in result.output and text in result.output
    assert tocsin.schedules.list()["total"] == 0
    unknown = invoke("plan", write(tmp_path, [good]))  # no --app: no workflow is registered
    assert unknown.exit_code == 1 and messages.workflow_unknown("daily-report") in unknown.output
    table_doc = invoke("plan", write(tmp_path, [{"table": "T"}]), "--app", APP)
    assert table_doc.exit_code == 1 and messages.IAC_TABLES_NEED_SCOPE in table_doc.output
    nothing = invoke("export")
    assert nothing.exit_code == 1 and "--scope" in nothing.output
