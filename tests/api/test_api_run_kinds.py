"""A table trigger's run and a workflow run are rows of one table (``runs``, by kind): each
surface reads its own kind only. A tenant's trigger-run routes given a workflow run's id, and the
workflow run routes given a table run's id, answer 404 and change nothing; neither list shows the
other kind's runs."""

from __future__ import annotations

from typing import Any

import pytest
from api_support import COLUMNS, NOW, TestClient, bearer, make_tenant, save_triggers

from tocsin import messages, step, workflow
from tocsin.service import Tocsin


@step(id="echo")
def echo(data: Any) -> Any:
    return data


@pytest.fixture
def admin(tocsin: Tocsin) -> dict[str, str]:
    tocsin.register_workflows([workflow(id="echo-flow").then(echo).commit()])
    return bearer(tocsin.create_token(permissions=["schedules:read", "schedules:write"]))


def test_each_run_route_reads_its_own_kind_only(
    client: TestClient, admin: dict[str, str], tocsin: Tocsin
) -> None:
    tenant = make_tenant(tocsin)
    table = tocsin.create_table("chatroom", tenant.scope_id, "Cases", COLUMNS, now=NOW)
    greet = {"name": "greet", "on": "created", "actions": [{"type": "notify", "message": "hi"}]}
    save_triggers(client, tenant, table, [greet])
    tocsin.insert_record(table["id"], {"Title": "a"}, now=NOW)
    (table_run,) = tocsin.list_runs(table["id"], now=NOW)["items"]
    flow_run = tocsin.start_workflow("echo-flow", {"n": 1}, now=NOW)

    runs_url = f"{tenant.prefix}/tables/{table['id']}/trigger-runs"
    for answer in (
        client.get(f"{runs_url}/{flow_run['id']}", headers=tenant.moderator),
        client.post(f"{runs_url}/{flow_run['id']}/retry", headers=tenant.moderator),
    ):
        assert answer.status_code == 404, answer.text
        assert answer.json() == {"detail": messages.RUN_NOT_FOUND}
    listed = client.get(runs_url, headers=tenant.moderator).json()["items"]
    assert [run["id"] for run in listed] == [table_run["id"]]

    flow_url = f"/api/workflows/runs/{table_run['id']}"
    for answer in (
        client.get(flow_url, headers=admin),
        client.post(f"{flow_url}/cancel", headers=admin),
        client.post(f"{flow_url}/resume", json={}, headers=admin),
    ):
        assert answer.status_code == 404, answer.text
        assert answer.json() == {"detail": messages.WORKFLOW_RUN_NOT_FOUND}
    assert [run["id"] for run in tocsin.workflow_runs()["items"]] == [flow_run["id"]]

    # nothing changed: the table run is still pending, the workflow run as it ended; each runs
    # as its own kind
    assert tocsin.get_run(table["id"], table_run["id"])["status"] == "pending"
    ended = tocsin.get_workflow_run(flow_run["id"])
    assert ended["status"] == "success" and ended["output"] == {"n": 1}
    tocsin.work(now=NOW)
    assert tocsin.get_run(table["id"], table_run["id"])["status"] == "done"
    assert tocsin.get_workflow_run(flow_run["id"]) == ended
