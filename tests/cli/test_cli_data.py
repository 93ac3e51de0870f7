"""``tocsin tables|triggers|messages`` and ``runs list`` filters, through Typer's
runner on both backends; ids printed whole at a narrow width; no accidental database."""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml

from support.cli import runner
from tocsin import messages
from tocsin.cli import app
from tocsin.cli.data import Yaml12Loader
from tocsin.service import Tocsin

NOW = datetime(2026, 8, 27, 5, 0, tzinfo=UTC)
YAML_TRIGGERS = """\
triggers:
  - id: trg_hourly
    name: hourly
    on: schedule
    schedule: {type: interval, every_seconds: 3600}
    actions:
      - {type: notify, message: "tick $trigger.id"}
  - id: trg_created
    on: created
    actions:
      - {type: notify, message: "new $row.Title"}
"""


def invoke(*args: str, columns: int = 200) -> Any:
    result = runner.invoke(app, list(args), env={"COLUMNS": str(columns)})
    return result


def ok(*args: str, columns: int = 200) -> str:
    result = invoke(*args, columns=columns)
    assert result.exit_code == 0, result.output
    output: str = result.output
    return output


def make_table(scope_id: str) -> str:
    out = ok("tables", "create", "--scope", f"chatroom:{scope_id}", "--name", "Cases",
             "--column", "Title=text", "--column", "Due=datetime")  # fmt: skip
    return out.strip().splitlines()[-1]


def test_tables_create_list_show(env: dict[str, str], tocsin: Tocsin) -> None:
    scope_id = str(uuid.uuid4())
    table_id = make_table(scope_id)
    assert tocsin.get_table(table_id)["columns"] == {"Title": "text", "Due": "datetime"}
    page = json.loads(ok("tables", "list", "--scope", f"chatroom:{scope_id}", "--json"))
    assert [t["id"] for t in page["items"]] == [table_id] and page["total"] == 1
    shown = json.loads(ok("tables", "show", table_id))
    assert shown["name"] == "Cases" and shown["triggers"] == []
    bad = invoke("tables", "create", "--scope", f"chatroom:{scope_id}", "--name", "X",
                 "--column", "Due")  # fmt: skip
    assert bad.exit_code == 1 and "NAME=TYPE" in bad.output
    missing = invoke("tables", "show", str(uuid.uuid4()))
    assert missing.exit_code == 1 and messages.TABLE_NOT_FOUND in missing.output


def test_ids_are_printed_whole_at_a_narrow_width(env: dict[str, str]) -> None:
    scope_id = str(uuid.uuid4())
    table_id = make_table(scope_id)
    for width in (40, 20):
        out = ok("tables", "list", "--scope", f"chatroom:{scope_id}", columns=width)
        assert table_id in out and scope_id in out  # whole, on one line: copyable
        assert "…" not in out


@pytest.mark.parametrize("suffix", [".yaml", ".json"])
def test_triggers_set_from_a_file_then_list_and_show(
    env: dict[str, str], tmp_path: Path, suffix: str
) -> None:
    table_id = make_table(str(uuid.uuid4()))
    path = tmp_path / f"triggers{suffix}"
    body = yaml.load(YAML_TRIGGERS, Loader=Yaml12Loader)
    assert body["triggers"][1]["on"] == "created"  # not True, as YAML 1.1 would have it
    path.write_text(YAML_TRIGGERS if suffix == ".yaml" else json.dumps(body["triggers"]))
    out = ok("triggers", "set", "--table", table_id, "--file", str(path), columns=30)
    assert "trg_hourly" in out and "trg_created" in out
    listed = json.loads(ok("triggers", "list", "--table", table_id, "--json"))["triggers"]
    assert [t["id"] for t in listed] == ["trg_hourly", "trg_created"]
    assert all(a["id"] for t in listed for a in t["actions"])
    table_out = ok("triggers", "list", "--table", table_id, columns=40)
    assert "trg_hourly" in table_out and "notify" in table_out
    shown = json.loads(ok("triggers", "show", "--table", table_id, "trg_created"))
    assert shown == listed[1]


def test_triggers_set_refuses_bad_files_and_bad_configs(
    env: dict[str, str], tmp_path: Path
) -> None:
    table_id = make_table(str(uuid.uuid4()))
    broken = tmp_path / "broken.yaml"
    broken.write_text("triggers: [unclosed")
    result = invoke("triggers", "set", "--table", table_id, "--file", str(broken))
    assert result.exit_code == 1 and "cannot read triggers from" in result.output
    absent = invoke("triggers", "set", "--table", table_id, "--file", str(tmp_path / "no.json"))
    assert absent.exit_code == 1 and "cannot read triggers from" in absent.output
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([{"on": "schedule", "schedule": {"type": "yearly"}, "actions": []}]))
    refused = invoke("triggers", "set", "--table", table_id, "--file", str(bad))
    assert refused.exit_code == 1
    assert "invalid schedule type 'yearly'" in refused.output
    assert "error (400)" in refused.output
    unknown = invoke("triggers", "show", "--table", table_id, "trg_nope")
    assert unknown.exit_code == 1 and messages.TRIGGER_NOT_FOUND in unknown.output


def test_triggers_pause_and_resume_through_the_cli(
    env: dict[str, str], tmp_path: Path, tocsin: Tocsin
) -> None:
    table_id = make_table(str(uuid.uuid4()))
    path = tmp_path / "triggers.yaml"
    path.write_text(YAML_TRIGGERS)
    ok("triggers", "set", "--table", table_id, "--file", str(path))
    paused = json.loads(ok("triggers", "pause", "--table", table_id, "trg_hourly"))
    assert paused["paused"] is True and paused["paused_at"]
    preview = tocsin.preview(table_id, now=datetime.now(UTC))
    [hourly] = [t for t in preview["triggers"] if t["trigger_id"] == "trg_hourly"]
    assert hourly["paused"] is True
    resumed = json.loads(ok("triggers", "resume", "--table", table_id, "trg_hourly"))
    assert resumed["paused"] is False
    row_event = invoke("triggers", "pause", "--table", table_id, "trg_created")
    assert row_event.exit_code == 1 and "Traceback" not in row_event.output
    unknown = invoke("triggers", "pause", "--table", table_id, "trg_nope")
    assert unknown.exit_code == 1 and messages.TRIGGER_NOT_FOUND in unknown.output


def test_runs_list_filters_by_trigger_record_and_window(
    env: dict[str, str], tocsin: Tocsin
) -> None:
    table_id = make_table(str(uuid.uuid4()))
    config = yaml.load(YAML_TRIGGERS, Loader=Yaml12Loader)["triggers"]
    tocsin.set_triggers(table_id, config, now=NOW)  # saved at NOW: the interval is due at NOW
    first = tocsin.insert_record(table_id, {"Title": "a"}, now=NOW)["id"]
    tocsin.tick(now=NOW)
    second = tocsin.insert_record(table_id, {"Title": "b"}, now=NOW + timedelta(hours=2))["id"]

    def listed(*args: str) -> list[tuple[str, str | None]]:
        page = json.loads(ok("runs", "list", "--table", table_id, "--json", *args))
        return [(r["trigger_id"], r["record_id"]) for r in page["items"]]

    assert listed("--trigger", "trg_created") == [("trg_created", second), ("trg_created", first)]
    assert listed("--record", first) == [("trg_created", first)]
    assert listed("--since", "2026-08-27T06:00") == [("trg_created", second)]
    assert listed("--since", "2026-08-27T08:00+01:00") == [("trg_created", second)]
    assert sorted(listed("--until", "2026-08-27T06:00"), key=str) == [
        ("trg_created", first),
        ("trg_hourly", None),
    ]
    bad = invoke("runs", "list", "--table", table_id, "--since", "yesterday")
    assert bad.exit_code == 1 and "--since 'yesterday' must be a datetime" in bad.output
    narrow = ok("runs", "list", "--table", table_id, "--trigger", "trg_hourly", columns=40)
    (run,) = tocsin.list_runs(table_id, trigger_id="trg_hourly", now=NOW)["items"]
    assert run["id"] in narrow and "trg_hourly" in narrow


def test_messages_lists_the_feed_newest_first(env: dict[str, str], tocsin: Tocsin) -> None:
    scope_id = str(uuid.uuid4())
    table_id = make_table(scope_id)
    config = [{"on": "created", "actions": [{"type": "notify", "message": "new $row.Title"}]}]
    tocsin.set_triggers(table_id, config, now=NOW)
    for minute, title in enumerate(("one", "two")):
        tocsin.insert_record(table_id, {"Title": title}, now=NOW + timedelta(minutes=minute))
        tocsin.work(now=NOW + timedelta(minutes=minute))
    page = json.loads(ok("messages", "--chatroom", scope_id, "--json"))
    assert [m["text"] for m in page["items"]] == ["new two", "new one"]
    table_out = ok("messages", "--chatroom", scope_id, columns=40)
    assert page["items"][0]["id"] in table_out
    bad = invoke("messages", "--chatroom", "not-a-uuid")
    assert bad.exit_code == 1


def test_no_database_is_refused_instead_of_created(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TOCSIN_DATABASE_URL", raising=False)
    monkeypatch.chdir(tmp_path)
    scope = f"chatroom:{uuid.uuid4()}"
    for args in (
        ["tables", "list", "--scope", scope],
        ["runs", "list", "--table", "t"],
        ["triggers", "list", "--table", "t"],
        ["preview", "--table", "t"],
        ["tables", "create", "--scope", scope, "--name", "A"],
    ):
        result = runner.invoke(app, args)
        assert result.exit_code == 1, args
        assert messages.no_database("tocsin.db") in " ".join(result.output.split()), args
        assert messages.TABLE_NOT_FOUND not in result.output
        assert not (tmp_path / "tocsin.db").exists()
    created = runner.invoke(app, ["tables", "create", "--scope", scope, "--name", "A", "--create"])
    assert created.exit_code == 0, created.output
    assert (tmp_path / "tocsin.db").exists()
    listed = runner.invoke(app, ["tables", "list", "--scope", scope, "--json"])  # it exists now
    assert listed.exit_code == 0 and json.loads(listed.output)["total"] == 1


HOSTILE = "[bold]B[/bold] \x1b]0;pwned\x07\x1b[31m end"


def test_tenant_text_reaches_the_terminal_literally(env: dict[str, str], tocsin: Tocsin) -> None:
    """Names and messages are tenants' data: Rich markup in them is printed as written, and a
    control character (ESC: terminal title, colours, OSC 52 clipboard) is shown as ``\\xNN``,
    never sent raw to the operator's terminal."""
    table_id = make_table(str(uuid.uuid4()))
    notify = {"type": "notify", "message": "m"}
    trigger = {"id": "trg_x", "name": HOSTILE, "on": "created", "actions": [notify]}
    tocsin.set_triggers(table_id, [trigger], now=NOW)
    out = ok("triggers", "list", "--table", table_id)
    assert "\x1b" not in out and "\x07" not in out
    assert "[bold]B[/bold]" in out and "\\x1b]0;pwned\\x07" in out


def test_the_plan_shows_tenant_text_literally() -> None:
    from io import StringIO

    from rich.console import Console

    from tocsin.cli.iac import render

    out = StringIO()
    entries = [
        {
            "table": "T\x1b[2J",
            "trigger_id": "trg_x",
            "name": HOSTILE,
            "action": "update",
            "changes": [{"path": "when\x1b[2J", "before": 1, "after": 2}],
        }
    ]
    render(Console(file=out, width=200), entries)
    text = out.getvalue()
    assert "\x1b" not in text and "\x07" not in text
    assert "[bold]B[/bold]" in text and "T\\x1b[2J" in text and "when\\x1b[2J" in text


def test_workflow_and_lane_tables_show_text_literally(capsys: pytest.CaptureFixture[str]) -> None:
    """A step's or a source's error text can carry what a remote service answered."""
    from tocsin.cli.render import print_rows

    print_rows("runs", ["id", "error"], [{"id": "wfr_1", "error": HOSTILE}])
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x07" not in out and "[bold]B[/bold]" in out
