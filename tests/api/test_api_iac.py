"""Infrastructure as code over HTTP (SPEC §11, §15): export as JSON Lines, plan, apply; and the
PUT …/triggers adoption of id-less triggers."""

from __future__ import annotations

from typing import Any

from api_support import Tenant, table_url
from api_support import save_triggers as put
from fastapi.testclient import TestClient

from tocsin import iac, messages
from tocsin.service import Tocsin

REMINDER = {
    "name": "remind",
    "on": "schedule",
    "schedule": {"type": "date_column_reached", "column": "Due", "offset_minutes": 0},
    "actions": [{"type": "notify", "message": "due"}],
}
INTERVAL = {
    "name": "hourly",
    "on": "schedule",
    "schedule": {"type": "interval", "every_seconds": 3600},
    "actions": [{"type": "notify", "message": "tick"}],
}


def test_export_is_json_lines_and_plans_as_noop(
    client: TestClient, tenant: Tenant, table: dict[str, Any]
) -> None:
    put(client, tenant, table, [REMINDER, INTERVAL])
    resp = client.get(f"{tenant.prefix}/iac/export", headers=tenant.moderator)
    assert resp.status_code == 200, resp.text
    assert resp.headers["content-type"].startswith("application/jsonl")
    documents = iac.loads(resp.text)
    assert [d["table"] for d in documents] == ["Cases", "Cases"]
    assert "offset_minutes" not in documents[0]["schedule"]
    again = client.get(f"{tenant.prefix}/iac/export?table=Cases", headers=tenant.moderator)
    assert again.content == resp.content
    plan = client.post(
        f"{tenant.prefix}/iac/plan", json={"documents": documents}, headers=tenant.moderator
    )
    assert plan.status_code == 200, plan.text
    assert [e["action"] for e in plan.json()["plan"]] == ["noop", "noop"]


def test_apply_carries_out_the_plan_and_refuses_what_put_refuses(
    client: TestClient, tenant: Tenant, table: dict[str, Any]
) -> None:
    [stored] = put(client, tenant, table, [REMINDER])
    documents = [{"table": "Cases", **INTERVAL}]
    resp = client.post(
        f"{tenant.prefix}/iac/apply", json={"documents": documents}, headers=tenant.moderator
    )
    assert resp.status_code == 200, resp.text
    created, deleted = resp.json()["plan"]
    assert (created["action"], deleted["action"], deleted["trigger_id"]) == (
        "create",
        "delete",
        stored["id"],
    )
    got = client.get(table_url(tenant, table, "/triggers"), headers=tenant.moderator).json()
    assert [t["id"] for t in got["triggers"]] == [created["trigger_id"]]
    bad = [
        {"table": "Cases", **REMINDER, "schedule": {**REMINDER["schedule"], "offset_minutes": True}}
    ]
    resp = client.post(
        f"{tenant.prefix}/iac/apply", json={"documents": bad}, headers=tenant.moderator
    )
    assert resp.status_code == 400
    assert resp.json() == {"detail": messages.OFFSET_MINUTES_INVALID}
    unknown = [{"table": "Nope", **INTERVAL}]
    resp = client.post(
        f"{tenant.prefix}/iac/plan", json={"documents": unknown}, headers=tenant.moderator
    )
    assert resp.status_code == 400
    assert resp.json() == {
        "detail": messages.iac_table_unknown("Nope", "chatroom", tenant.scope_id)
    }


def test_iac_routes_need_a_moderator_of_the_scope(
    client: TestClient, tenant: Tenant, other: Tenant, table: dict[str, Any]
) -> None:
    put(client, tenant, table, [INTERVAL])
    body = {"documents": [{"table": "Cases", **INTERVAL}]}
    assert client.get(f"{tenant.prefix}/iac/export", headers=tenant.member).status_code == 403
    assert (
        client.post(f"{tenant.prefix}/iac/plan", json=body, headers=tenant.member).status_code
        == 403
    )
    assert (
        client.post(f"{tenant.prefix}/iac/apply", json=body, headers=tenant.member).status_code
        == 403
    )
    assert client.get(f"{tenant.prefix}/iac/export").status_code == 401
    # another tenant's token, on its own scope, sees none of this scope's tables
    assert client.get(f"{other.prefix}/iac/export", headers=other.moderator).text == ""
    resp = client.post(f"{other.prefix}/iac/apply", json=body, headers=other.moderator)
    assert resp.status_code == 400
    resp = client.post(
        f"{tenant.prefix}/iac/plan", json={"documents": "x"}, headers=tenant.moderator
    )
    assert resp.status_code == 422


def test_re_put_without_ids_keeps_ids_and_does_not_fire_again(
    client: TestClient, tenant: Tenant, table: dict[str, Any], tocsin: Tocsin
) -> None:
    """An unchanged config re-sent without ids must not retire its triggers and fire
    every already-fired reminder again under new ids."""
    record = client.post(
        table_url(tenant, table, "/records"),
        json={"data": {"Due": "2026-08-27T01:00"}},
        headers=tenant.moderator,
    )
    assert record.status_code == 201, record.text
    saved = put(client, tenant, table, [REMINDER])
    resp = client.post(
        "/root/custom-tables/run-due-triggers", headers={"X-ADMIN-TOKEN": "admin-secret"}
    )
    assert resp.status_code == 200 and resp.json()["runs_created"] == 1, resp.text
    assert put(client, tenant, table, [REMINDER]) == saved
    resp = client.post(
        "/root/custom-tables/run-due-triggers", headers={"X-ADMIN-TOKEN": "admin-secret"}
    )
    assert resp.json()["runs_created"] == 0
    runs = client.get(table_url(tenant, table, "/trigger-runs"), headers=tenant.moderator).json()
    assert runs["total"] == 1


def test_ids_of_the_wrong_type_are_400_never_500(
    client: TestClient, tenant: Tenant, table: dict[str, Any]
) -> None:
    put(client, tenant, table, [INTERVAL])
    odd = {**INTERVAL, "id": ["x"], "actions": [{"id": {"a": 1}, "type": "notify", "message": "m"}]}
    resp = client.put(
        table_url(tenant, table, "/triggers"), json={"triggers": [odd]}, headers=tenant.moderator
    )
    assert resp.status_code == 400, resp.text
    for route in ("plan", "apply"):
        resp = client.post(
            f"{tenant.prefix}/iac/{route}",
            json={"documents": [{"table": "Cases", **odd}]},
            headers=tenant.moderator,
        )
        assert resp.status_code in (200, 400), resp.text
    assert resp.status_code == 400


def test_the_scope_routes_refuse_schedule_documents(
    client: TestClient, tenant: Tenant, table: dict[str, Any]
) -> None:
    """Schedules are not scoped: a moderator of one scope cannot manage them here."""
    schedule = {"workflow": "daily-report", "cron": "0 9 * * *", "timezone": "UTC"}
    for route in ("plan", "apply"):
        resp = client.post(
            f"{tenant.prefix}/iac/{route}",
            json={"documents": [{"table": "Cases", **REMINDER}, schedule]},
            headers=tenant.moderator,
        )
        assert resp.status_code == 400
        assert resp.json() == {"detail": messages.IAC_SCHEDULES_NOT_HERE}
    assert client.get(f"{tenant.prefix}/iac/export", headers=tenant.moderator).text == ""


NOTE = {"type": "notify", "message": "m"}


def bad_documents(other: Tenant) -> dict[str, tuple[list[dict[str, Any]], str]]:
    """Six bundles apply refuses, each with the ``detail`` plan gives its refused document."""
    many = [{"table": "Cases", "name": "n", "on": "created", "actions": [NOTE]}] * 101
    ftp = {"type": "webhook", "url": "ftp://files.example/in"}
    elsewhere = {**NOTE, "chatroom_id": other.scope_id}
    cron = {"type": "cron", "expression": "99 99 * * *"}
    return {
        "actions boom": (
            [{"table": "Cases", "name": "boom", "on": "created", "actions": "boom"}],
            "table 'Cases', trigger #1 'boom': action invalid: actions must be a list of action "
            "objects",
        ),
        "101 triggers": (
            many,
            "table 'Cases', trigger #101 'n': a table may have at most 100 triggers "
            "(TOCSIN_MAX_TRIGGERS_PER_TABLE); got 101",
        ),
        "id ../../x": (
            [{"table": "Cases", "id": "../../x", "on": "created", "actions": [NOTE]}],
            "table 'Cases', trigger '../../x': trigger invalid: id '../../x' must be 1-64 "
            "letters, digits, '_', '-', '.' or ':' (omit it to get a new one)",
        ),
        "cron 99 99": (
            [
                {
                    "table": "Cases",
                    "name": "c",
                    "on": "schedule",
                    "schedule": cron,
                    "actions": [NOTE],
                }
            ],
            "table 'Cases', trigger #1 'c': cron schedule invalid: minute value '99' out of range "
            "0-59 in '99 99 * * *'",
        ),
        "ftp url": (
            [{"table": "Cases", "id": "trg_ftp", "on": "created", "actions": [ftp]}],
            "table 'Cases', trigger 'trg_ftp': action invalid: webhook action url must be an "
            "http:// or https:// URL with a host (got 'ftp://files.example/in')",
        ),
        "cross-tenant notify": (
            [{"table": "Cases", "id": "trg_x", "on": "created", "actions": [elsewhere]}],
            f"table 'Cases', trigger 'trg_x': notify chatroom_id '{other.scope_id}' is not this "
            "table's chatroom: a notify posts only to the chatroom the table belongs to (omit "
            "chatroom_id to post there)",
        ),
    }


def test_plan_answers_invalid_for_each_document_apply_refuses(
    client: TestClient, tenant: Tenant, other: Tenant, table: dict[str, Any]
) -> None:
    """Plan runs apply's own check: never "create" for what apply then answers 400 for."""
    [stored] = put(client, tenant, table, [INTERVAL])
    cases = bad_documents(other)
    for case, (documents, detail) in cases.items():
        plan = client.post(
            f"{tenant.prefix}/iac/plan", json={"documents": documents}, headers=tenant.moderator
        )
        assert plan.status_code == 200, (case, plan.text)
        *created, refused, deleted = plan.json()["plan"]
        assert (refused["action"], refused["detail"]) == ("invalid", detail), case
        assert [e["action"] for e in created] == ["create"] * (len(documents) - 1), case
        assert (deleted["action"], deleted["trigger_id"]) == ("delete", stored["id"]), case
        applied = client.post(
            f"{tenant.prefix}/iac/apply", json={"documents": documents}, headers=tenant.moderator
        )
        assert applied.status_code == 400, (case, applied.text)
        assert detail.endswith(f": {applied.json()['detail']}"), case  # the same refusal
    one_each = [doc for case, (docs, _) in cases.items() if case != "101 triggers" for doc in docs]
    plan = client.post(
        f"{tenant.prefix}/iac/plan", json={"documents": one_each}, headers=tenant.moderator
    )
    assert plan.status_code == 200, plan.text
    entries = plan.json()["plan"]
    assert [e["action"] for e in entries] == ["invalid"] * 5 + ["delete"]
    expected = [d for case, (_, d) in cases.items() if case != "101 triggers"]
    # numbered by position in the table's documents: the cron document is the third here
    expected[2] = expected[2].replace("trigger #1 'c'", "trigger #3 'c'")
    assert [e["detail"] for e in entries[:5]] == expected
    got = client.get(table_url(tenant, table, "/triggers"), headers=tenant.moderator).json()
    assert got["triggers"] == [stored]  # plan and the refused applies wrote nothing
