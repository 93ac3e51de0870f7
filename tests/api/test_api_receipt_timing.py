"""Every receipt of a table run says when its action really started and ended (SPEC §8
extended): ``started_at``/``ended_at``, ISO instants read from the pass's clock (its ``now`` plus
the monotonic time elapsed), on actions and ``on_failure`` alerts alike, and the published
schema documents them. Time is driven explicitly (``work(now=…)``): the instants sit next to it.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from api_support import NOW, Tenant, table_url
from fastapi.testclient import TestClient
from hook_receiver import HookReceiver

from tocsin.service import Tocsin

SLOW_S = 1.0


def span(receipt: dict[str, Any]) -> tuple[datetime, datetime]:
    return datetime.fromisoformat(receipt["started_at"]), datetime.fromisoformat(
        receipt["ended_at"]
    )


def test_receipts_carry_the_real_start_and_end_of_each_action(
    client: TestClient, tocsin: Tocsin, tenant: Tenant, table: dict[str, Any]
) -> None:
    with HookReceiver(200, delay_s=SLOW_S) as slow, HookReceiver(500) as down:
        trigger = {
            "on": "created",
            "actions": [
                {"id": "slow", "type": "webhook", "url": slow.url},
                {"id": "down", "type": "webhook", "url": down.url},
            ],
            "on_failure": [{"id": "alert", "type": "notify", "message": "failed: $run.error"}],
        }
        resp = client.put(
            table_url(tenant, table, "/triggers"),
            json={"triggers": [trigger]},
            headers=tenant.moderator,
        )
        assert resp.status_code == 200, resp.text
        resp = client.post(
            table_url(tenant, table, "/records"),
            json={"data": {"Title": "x"}},
            headers=tenant.moderator,
        )
        assert resp.status_code == 201, resp.text
        assert tocsin.work(now=NOW) == 1
    (listed,) = client.get(
        table_url(tenant, table, "/trigger-runs"), headers=tenant.moderator
    ).json()["items"]
    run = client.get(
        table_url(tenant, table, f"/trigger-runs/{listed['id']}"), headers=tenant.moderator
    ).json()
    assert run["status"] == "failed"
    receipts = {r["action_id"]: r for r in run["action_results"]}
    assert [(k, r["ok"]) for k, r in receipts.items()] == [
        ("slow", True),
        ("down", False),
        ("alert", True),
    ]
    assert set(receipts["slow"]) == {"action_id", "type", "ok", "detail", "started_at", "ended_at"}
    started, ended = span(receipts["slow"])
    assert NOW <= started < NOW + timedelta(seconds=1)  # the explicit now, not the wall clock
    assert SLOW_S <= (ended - started).total_seconds() < SLOW_S + 2  # it took the receiver's 1 s
    previous = ended
    for action_id in ("down", "alert"):  # in order, each after the one before, each quick
        started, ended = span(receipts[action_id])
        assert previous <= started <= ended < started + timedelta(seconds=2)
        previous = ended
    assert previous < NOW + timedelta(seconds=SLOW_S + 4)


def test_the_run_schema_documents_the_receipt_instants(client: TestClient) -> None:
    schemas = client.get("/openapi.json").json()["components"]["schemas"]
    items = schemas["RunOut"]["properties"]["action_results"]["items"]
    assert items == {"$ref": "#/components/schemas/ActionReceipt"}
    receipt = schemas["ActionReceipt"]
    assert {"action_id", "type", "ok", "detail", "started_at", "ended_at"} <= set(
        receipt["properties"]
    )
    assert set(receipt["required"]) == {"type", "ok"}  # receipts stored before lack the rest
