"""``tocsin schedules create --trigger`` and ``show`` with latches (SPEC §13, §16)."""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime
from pathlib import Path

from support.cli import invoke
from tocsin.service import Tocsin

APP = "workflows.sample_app:WORKFLOWS"
NOW = datetime(2026, 3, 2, 8, 0, tzinfo=UTC)


def test_create_a_compound_schedule_and_show_its_latches(
    env: dict[str, str], tocsin: Tocsin, tmp_path: Path
) -> None:
    table = str(tocsin.create_table("chatroom", str(uuid.uuid4()), "Orders", {"N": "number"})["id"])
    tree = {
        "all": [
            {"cron": "0 9 * * *", "timezone": "UTC"},
            {"event": "table_updated", "table_id": table},
        ]
    }
    path = tmp_path / "trigger.json"
    path.write_text(json.dumps(tree), encoding="utf-8")
    made = invoke(
        "schedules", "create", "--app", APP, "--workflow", "daily-report",
        "--trigger", f"@{path}", "--input", '{"user_id": "u"}', "--json",
    )  # fmt: skip
    assert made.exit_code == 0, made.output
    sid = json.loads(made.output)["id"]
    shown = invoke("schedules", "show", sid)
    assert f"[1] table_updated {table}: waiting" in shown.output
    assert "[0] cron 0 9 * * * (UTC): next" in shown.output
    tocsin.insert_record(table, {"N": 1}, now=NOW)
    tocsin.tick(now=NOW)
    shown = invoke("schedules", "show", sid)
    assert f"[1] table_updated {table}: latched since 2026-03-02 08:00:00+00:00" in shown.output
    assert "and table 'Orders' was updated)" in shown.output


def test_create_refuses_a_bad_tree_with_its_text(env: dict[str, str], tocsin: Tocsin) -> None:
    bad = invoke(
        "schedules", "create", "--app", APP, "--workflow", "daily-report",
        "--trigger", '{"any": []}',
    )  # fmt: skip
    assert bad.exit_code == 1
    assert "an OR trigger ('any') needs at least one trigger inside, got none" in bad.output
    worse = invoke(
        "schedules", "create", "--app", APP, "--workflow", "daily-report", "--trigger", "{",
    )  # fmt: skip
    assert worse.exit_code == 2 and "--trigger is not valid JSON" in worse.output
