"""The OpenAPI schema describes triggers with real models: discriminated unions per
schedule kind and action type, and it accepts every trigger example the README and the guide
show (and the demo seeds), while refusing malformed ones. Validation itself is unchanged: the
SPEC's 400 texts still come from the core (tests/api/test_api_triggers.py)."""

from __future__ import annotations

import json
import re
import uuid
from pathlib import Path
from typing import Any

import jsonschema_rs
import pytest

from tocsin.api.app import create_app
from tocsin.cli.demo import demo_triggers
from tocsin.service import Tocsin
from tocsin.settings import Settings

ROOT = Path(__file__).resolve().parents[2]


def openapi() -> dict[str, Any]:
    facade = Tocsin.open("sqlite://", settings=Settings(database_url="sqlite://"))
    try:
        document: dict[str, Any] = create_app(tocsin=facade).openapi()
        return document
    finally:
        facade.close()


DOC = openapi()


def validator(component: str) -> Any:
    schema = {"$ref": f"#/components/schemas/{component}", "components": DOC["components"]}
    return jsonschema_rs.Draft202012Validator(schema)


def readme_trigger_bodies() -> list[Any]:
    """Every ``-d '{"triggers": …}'`` body of the README's curl examples."""
    text = (ROOT / "README.md").read_text()
    bodies = re.findall(r"-d '(\{\"triggers\".*?)'", text, flags=re.S)
    return [json.loads(body) for body in bodies]


def guide_trigger_examples() -> list[Any]:
    """Every ```json block of docs/guide.md that is a trigger (has "on") or a PUT body."""
    text = (ROOT / "docs" / "guide.md").read_text()
    found = []
    for block in re.findall(r"```json\n(.*?)```", text, flags=re.S):
        value = json.loads(block)
        if isinstance(value, dict) and "triggers" in value:
            found.append(value)
        elif isinstance(value, dict) and "on" in value:
            found.append({"triggers": [value]})
    return found


# a retry policy, failure alerts and a webhook method (docs/retries-alerts-webhooks.md)
RETRYING = {
    "on": "schedule",
    "schedule": {"type": "interval", "every_seconds": 3600},
    "actions": [{"type": "webhook", "url": "https://example.com/hook", "method": "PUT"}],
    "retry": {
        "max_attempts": 5,
        "backoff_s": 30,
        "factor": 2,
        "max_backoff_s": 3600,
        "jitter": True,
    },
    "on_failure": [{"type": "notify", "message": "hourly hook failed: $run.error"}],
}


def test_the_readme_and_guide_have_trigger_examples_to_check() -> None:
    assert len(readme_trigger_bodies()) >= 1
    assert len(guide_trigger_examples()) >= 7


@pytest.mark.parametrize(
    "body",
    [
        *readme_trigger_bodies(),
        *guide_trigger_examples(),
        {"triggers": demo_triggers("http://127.0.0.1:8000")},
        {"triggers": [RETRYING]},
    ],
)
def test_the_put_body_schema_accepts_the_documented_examples(body: Any) -> None:
    errors = [e.message for e in validator("TriggersPut").iter_errors(body)]
    assert errors == []


BAD_TRIGGERS = [
    {"on": "schedule", "schedule": {"type": "yearly"}, "actions": []},
    {"on": "schedule", "schedule": {"type": "interval", "every_seconds": 5}, "actions": []},
    {"on": "created", "actions": [{"type": "notify"}]},
    {"on": "created", "actions": [{"type": "teleport", "message": "x"}]},
    {"on": "created", "actions": [{"type": "api_call", "method": "BREW", "url": "http://x"}]},
    {"on": "sometimes", "actions": []},
    {"on": "created", "actions": [], "colour": "red"},
    {**RETRYING, "retry": {"max_attempts": 0}},
    {**RETRYING, "actions": [{"type": "webhook", "url": "https://x", "method": "GET"}]},
]


@pytest.mark.parametrize("trigger", BAD_TRIGGERS)
def test_the_put_body_schema_refuses_malformed_triggers(trigger: dict[str, Any]) -> None:
    assert not validator("TriggersPut").is_valid({"triggers": [trigger]})


def test_schedules_and_actions_are_discriminated_unions() -> None:
    trigger = DOC["components"]["schemas"]["Trigger"]["properties"]
    schedule = next(s for s in trigger["schedule"]["anyOf"] if "oneOf" in s)
    assert schedule["discriminator"]["propertyName"] == "type"
    assert set(schedule["discriminator"]["mapping"]) == {
        "date_column_reached",
        "interval",
        "daily",
        "cron",
    }
    actions = trigger["actions"]["items"]
    assert actions["discriminator"]["propertyName"] == "type"
    assert "webhook" in actions["discriminator"]["mapping"]


def test_one_trigger_routes_publish_their_models() -> None:
    path = DOC["paths"][
        "/private/module/custom_tables/{scope}/{scope_id}/tables/{table_id}/triggers/{trigger_id}"
    ]
    assert set(path) == {"get", "patch", "delete"}
    body = path["patch"]["requestBody"]["content"]["application/json"]["schema"]
    assert body == {"$ref": "#/components/schemas/TriggerPatch"}
    assert validator("TriggerPatch").is_valid({"schedule": {"at": "02:00"}, "name": None})
    assert not validator("TriggerPatch").is_valid({"on": "sometimes"})


@pytest.mark.parametrize("body", guide_trigger_examples())
def test_the_guide_examples_also_save(body: dict[str, Any], tocsin: Tocsin) -> None:
    """The examples are real: the core validation accepts each one as written."""
    columns = {"Title": "text", "Due": "datetime", "Status": "text"}
    table = tocsin.create_table("chatroom", str(uuid.uuid4()), "Cases", columns)
    saved = tocsin.set_triggers(table["id"], body["triggers"])
    assert [t["on"] for t in saved] == [t["on"] for t in body["triggers"]]
