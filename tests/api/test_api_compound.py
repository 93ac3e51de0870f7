"""SPEC §13 over HTTP: POST /api/schedules takes a compound trigger's JSON tree; bad trees are
400 with their exact texts before anything is written; GET shows the latches."""

from __future__ import annotations

import re
import uuid
from typing import Any

import pytest
from api_support import Clock, TestClient, bearer

from tocsin.service import Tocsin
from workflows.helpers import daily


@pytest.fixture
def write(tocsin: Tocsin, clock: Clock) -> dict[str, str]:
    tocsin.register_workflows([daily()])
    return bearer(tocsin.create_token(permissions=["schedules:write", "schedules:read"]))


def test_create_a_compound_schedule_and_watch_its_latch(
    client: TestClient, write: dict[str, str], tocsin: Tocsin, clock: Clock
) -> None:
    table = str(tocsin.create_table("chatroom", str(uuid.uuid4()), "Orders", {"N": "number"})["id"])
    tree = {
        "all": [
            {"cron": "0 9 * * *", "timezone": "Europe/Berlin"},
            {"any": [{"event": "table_updated", "table_id": table}]},
        ]
    }
    body: dict[str, Any] = {
        "workflowId": "daily-report",
        "trigger": tree,
        "inputData": {"user_id": "u"},
    }
    made = client.post("/api/schedules", json=body, headers=write)
    assert made.status_code == 201, made.text
    sid = made.json()["id"]
    assert made.json()["cron"] is None and made.json()["warnings"] == []
    tocsin.insert_record(table, {"N": 1}, now=clock.now)
    tocsin.tick(now=clock.now)
    got = client.get(f"/api/schedules/{sid}", headers=write).json()
    cron_leaf, inner = got["trigger"]["tree"]["all"]
    assert cron_leaf["repeated"] == "both" and cron_leaf["timezone"] == "Europe/Berlin"
    assert inner["any"][0]["latched_since"] is not None
    assert got["next_fire_at"] == got["trigger"]["next_instant"]


@pytest.mark.parametrize(
    ("tree", "status", "detail"),
    [
        ({"all": []}, 400, "an AND trigger ('all') needs at least one trigger inside, got none"),
        (
            {"any": [{"event": "dataset_built", "table_id": "x"}]},
            400,
            "unknown event 'dataset_built'; known events: definition_changed, "
            "schedule_succeeded, table_updated, workflow_succeeded",
        ),
        (
            {"event": "table_updated", "table_id": "nope"},
            400,
            "schedule 'sch_…': event 'table_updated' names unknown table 'nope'",
        ),
        (
            {"event": "workflow_succeeded", "workflow_id": "ghost"},
            400,
            "schedule 'sch_…': event 'workflow_succeeded' names unknown workflow 'ghost'",
        ),
    ],
)
def test_bad_trees_are_400_and_write_nothing(
    client: TestClient, write: dict[str, str], tree: object, status: int, detail: str
) -> None:
    body = {"workflowId": "daily-report", "trigger": tree}
    bad = client.post("/api/schedules", json=body, headers=write)
    assert bad.status_code == status
    assert re.sub(r"'sch_[0-9a-f]{16}'", "'sch_…'", bad.json()["detail"]) == detail
    assert client.get("/api/schedules", headers=write).json()["total"] == 0


def test_cron_and_trigger_together_or_neither_is_400(
    client: TestClient, write: dict[str, str]
) -> None:
    both = {"workflowId": "daily-report", "cron": "0 9 * * *", "trigger": {"cron": "0 9 * * *"}}
    bad = client.post("/api/schedules", json={**both, "timezone": "UTC"}, headers=write)
    assert bad.json() == {"detail": "a schedule needs exactly one of cron= or trigger=, got both"}
    neither = client.post("/api/schedules", json={"workflowId": "daily-report"}, headers=write)
    assert neither.status_code == 400


def test_an_and_of_time_triggers_is_created_with_a_warning(
    client: TestClient, write: dict[str, str]
) -> None:
    tree = {"all": [{"cron": "0 9 * * *"}, {"cron": "0 * * * *"}]}
    body = {"workflowId": "daily-report", "trigger": tree, "timezone": "UTC"}
    with pytest.warns(UserWarning):
        made = client.post("/api/schedules", json=body, headers=write)
    assert made.status_code == 201
    (note,) = made.json()["warnings"]
    assert "single, more specific time trigger" in note
