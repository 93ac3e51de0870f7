"""A tenant reaches app code from a trigger only within its token's reach (SPEC §10, §15).

``start_workflow`` and ``invoke_command`` run code the app registered. Saved from a tenant route
(PUT, PATCH, IaC apply; ``actions`` and ``on_failure`` alike), such an action needs its target
exposed to tenants (``workflow(..., tenants=True)``, ``register_command(..., tenants=True)``) or
a token holding ``schedules:write``: else 403 and nothing is written. The saving token's id is
kept with the action (an unchanged re-save keeps it) and checked again at run time: a revoked or
expired token, or a target no longer exposed, fails the run and starts or invokes nothing. The
in-process facade is trusted.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import pytest
from api_support import NOW, Tenant, bearer, table_url
from api_support import put_triggers as put
from fastapi.testclient import TestClient

from tocsin import iac, messages
from tocsin.service import Tocsin
from tocsin.settings import Settings
from workflows.tenant_app import WORKFLOWS, make_greet, make_purge

PURGE = {"type": "start_workflow", "workflow_id": "admin-purge", "input": {"user_id": "$row.Title"}}
GREET = {"type": "start_workflow", "workflow_id": "greet", "input": {"user_id": "$row.Title"}}
WIPE = {"type": "invoke_command", "command": "wipe", "inputs": {"who": "$row.Title"}}
PING = {"type": "invoke_command", "command": "ping", "inputs": {"who": "$row.Title"}}
NOTE = {"type": "notify", "message": "hi"}
PURGE_REFUSED = (
    "start_workflow action: workflow 'admin-purge' is not exposed to tenants "
    "(workflow(..., tenants=True)); saving it needs a token with the 'schedules:write' permission"
)
WIPE_REFUSED = (
    "invoke_command action: command 'wipe' is not exposed to tenants "
    "(register_command(..., tenants=True)); saving it needs a token with the 'schedules:write' "
    "permission"
)
REFUSED = {"admin-purge": PURGE_REFUSED, "wipe": WIPE_REFUSED}


def created(*actions: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"on": "created", "actions": list(actions), **extra}


@pytest.fixture
def calls(tocsin: Tocsin) -> list[tuple[str, dict[str, Any]]]:
    """The app's code: both workflows, ``wipe`` (not exposed) and ``ping`` (exposed)."""
    tocsin.register_workflows(WORKFLOWS)
    seen: list[tuple[str, dict[str, Any]]] = []
    for name, tenants in (("wipe", False), ("ping", True)):
        tocsin.register_command(
            name, lambda inputs, n=name: seen.append((n, inputs)), tenants=tenants
        )
    return seen


def writer(tocsin: Tocsin, tenant: Tenant, **kw: Any) -> tuple[dict[str, str], str]:
    """A moderator token of ``tenant``'s scope that also holds ``schedules:write``, and its id."""
    token = tocsin.create_token(
        scope="chatroom",
        scope_id=tenant.scope_id,
        role="moderator",
        permissions=["schedules:write"],
        now=NOW,
        **kw,
    )
    principal = tocsin.verify_token(token, now=NOW)
    assert principal is not None and principal.token_id is not None
    return bearer(token), principal.token_id


def insert_and_work(
    tocsin: Tocsin, table: dict[str, Any], title: str, at: datetime, trigger: str | None = None
) -> dict[str, Any] | None:
    """Insert a record (its ``created`` triggers fire), run the table runs: the record's run
    (of ``trigger`` when given), or None."""
    [record_id] = tocsin.insert_records(table["id"], [{"Title": title}], now=at)
    tocsin.work(now=at)
    found = tocsin.list_runs(table["id"], now=at, record_id=record_id, trigger_id=trigger)
    assert found["total"] <= 1
    return dict(found["items"][0]) if found["items"] else None


def started(tocsin: Tocsin, workflow_id: str) -> list[Any]:
    return [r["input"] for r in tocsin.workflow_runs(workflow_id)["items"]]


@pytest.mark.parametrize("where", ["actions", "on_failure"])
@pytest.mark.parametrize("action", [PURGE, WIPE], ids=["start_workflow", "invoke_command"])
def test_put_refuses_an_unexposed_target_without_schedules_write(
    client: TestClient,
    tocsin: Tocsin,
    tenant: Tenant,
    table: dict[str, Any],
    calls: list[Any],
    action: dict[str, Any],
    where: str,
) -> None:
    trigger = created(action) if where == "actions" else created(NOTE, on_failure=[action])
    resp = put(client, tenant, table, [trigger])
    assert resp.status_code == 403, resp.text
    target = action.get("workflow_id") or action["command"]
    assert resp.json() == {"detail": REFUSED[target]}
    assert tocsin.get_triggers(table["id"]) == []  # nothing written
    assert insert_and_work(tocsin, table, "eve", NOW) is None
    assert started(tocsin, "admin-purge") == [] and calls == []


@pytest.mark.parametrize("where", ["actions", "on_failure"])
def test_patch_refuses_an_unexposed_target_without_schedules_write(
    client: TestClient,
    tocsin: Tocsin,
    tenant: Tenant,
    table: dict[str, Any],
    calls: Any,
    where: str,
) -> None:
    [saved] = put(client, tenant, table, [created(NOTE)]).json()["triggers"]
    url = table_url(tenant, table, f"/triggers/{saved['id']}")
    resp = client.patch(url, json={where: [PURGE]}, headers=tenant.moderator)
    assert resp.status_code == 403, resp.text
    assert resp.json() == {"detail": PURGE_REFUSED}
    assert tocsin.get_triggers(table["id"]) == [saved]


def test_iac_apply_refuses_an_unexposed_target_before_writing_anything(
    client: TestClient, tocsin: Tocsin, tenant: Tenant, table: dict[str, Any], calls: Any
) -> None:
    body = {"name": "Other", "columns": {"Title": "text"}}
    other = client.post(f"{tenant.prefix}/tables", json=body, headers=tenant.moderator).json()
    documents = [
        {"table": "Other", **created(NOTE)},  # fine, but in the same apply as the refused one
        {"table": "Cases", **created(NOTE, on_failure=[WIPE])},
    ]
    resp = client.post(
        f"{tenant.prefix}/iac/apply", json={"documents": documents}, headers=tenant.moderator
    )
    assert resp.status_code == 403, resp.text
    assert resp.json() == {"detail": WIPE_REFUSED}
    assert tocsin.get_triggers(table["id"]) == tocsin.get_triggers(other["id"]) == []
    writes, _ = writer(tocsin, tenant)
    done = client.post(f"{tenant.prefix}/iac/apply", json={"documents": documents}, headers=writes)
    assert done.status_code == 200, done.text
    assert [e["action"] for e in done.json()["plan"]] == ["create", "create"]


def test_iac_plan_marks_an_unexposed_target_invalid_as_apply_refuses_it(
    client: TestClient, tocsin: Tocsin, tenant: Tenant, table: dict[str, Any]
) -> None:
    documents = [{"table": "Cases", "id": "trg_purge", **created(PURGE)}]
    plan = client.post(
        f"{tenant.prefix}/iac/plan", json={"documents": documents}, headers=tenant.moderator
    )
    assert plan.status_code == 200, plan.text
    (entry,) = plan.json()["plan"]
    assert entry["action"] == "invalid"
    assert entry["detail"] == f"table 'Cases', trigger 'trg_purge': {PURGE_REFUSED}"
    writes, _ = writer(tocsin, tenant)
    allowed = client.post(
        f"{tenant.prefix}/iac/plan", json={"documents": documents}, headers=writes
    )
    assert [e["action"] for e in allowed.json()["plan"]] == ["create"]


def test_exposed_targets_are_saved_by_any_moderator_and_run(
    client: TestClient, tocsin: Tocsin, tenant: Tenant, table: dict[str, Any], calls: list[Any]
) -> None:
    resp = put(client, tenant, table, [created(GREET, PING)])
    assert resp.status_code == 200, resp.text
    run = insert_and_work(tocsin, table, "ann", NOW)
    assert run is not None and run["status"] == "done"
    assert started(tocsin, "greet") == [{"user_id": "ann"}]
    assert calls == [("ping", {"who": "ann"})]


def test_a_schedules_write_token_may_save_any_target_and_it_runs(
    client: TestClient, tocsin: Tocsin, tenant: Tenant, table: dict[str, Any], calls: list[Any]
) -> None:
    writes, _ = writer(tocsin, tenant)
    resp = put(client, tenant, table, [created(PURGE, WIPE)], headers=writes)
    assert resp.status_code == 200, resp.text
    assert (insert_and_work(tocsin, table, "bob", NOW) or {}).get("status") == "done"
    assert started(tocsin, "admin-purge") == [{"user_id": "bob"}]
    assert calls == [("wipe", {"who": "bob"})]


def test_an_unchanged_action_keeps_its_token_and_a_revoked_one_stops_it(
    client: TestClient, tocsin: Tocsin, tenant: Tenant, table: dict[str, Any], calls: list[Any]
) -> None:
    """A plain moderator re-saves (PUT round trip, PATCH of another trigger, IaC export →
    apply, an id-less PUT that adopts it) a config holding an action a ``schedules:write`` token
    saved: accepted, and the action still runs as that token's; revoking it stops the action
    at run time."""
    writes, token_id = writer(tocsin, tenant)
    first = put(client, tenant, table, [created(PURGE)], headers=writes)
    assert first.status_code == 200, first.text
    purge = first.json()["triggers"][0]["id"]
    shown = client.get(table_url(tenant, table, "/triggers"), headers=tenant.moderator).json()
    assert "saved_by_token" not in str(shown)  # the server's: never shown
    resp = put(client, tenant, table, [*shown["triggers"], created(NOTE)])
    assert resp.status_code == 200, resp.text
    note = resp.json()["triggers"][1]
    url = table_url(tenant, table, f"/triggers/{note['id']}")
    patch = client.patch(url, json={"name": "n"}, headers=tenant.moderator)
    assert patch.status_code == 200, patch.text
    exported = client.get(f"{tenant.prefix}/iac/export", headers=tenant.moderator)
    documents = [{**d, "name": "renamed"} for d in iac.loads(exported.text)]
    applied = client.post(
        f"{tenant.prefix}/iac/apply", json={"documents": documents}, headers=tenant.moderator
    )
    assert applied.status_code == 200, applied.text
    resent = put(client, tenant, table, [{**created(PURGE), "name": "renamed"}])  # no ids
    assert resent.status_code == 200, resent.text  # adopted: the same trigger and action
    assert resent.json()["triggers"][0]["id"] == purge
    ran = insert_and_work(tocsin, table, "cy", NOW, trigger=purge)
    assert ran is not None and ran["status"] == "done", ran
    assert started(tocsin, "admin-purge") == [{"user_id": "cy"}]  # ran as the writer's

    changed = {**PURGE, "input": {"user_id": "everyone"}}
    resp = put(client, tenant, table, [created(changed)])
    assert resp.status_code == 403 and resp.json() == {"detail": PURGE_REFUSED}

    tocsin.revoke_token(token_id, now=NOW)
    later = NOW + timedelta(minutes=1)
    run = insert_and_work(tocsin, table, "dee", later, trigger=purge)
    assert run is not None and run["status"] == "failed"
    assert run["error"] == (
        "start_workflow action refused: workflow 'admin-purge' is not exposed to tenants and "
        f"token {token_id}, which saved this action, no longer holds the 'schedules:write' "
        "permission (revoked, expired or deleted); no workflow was started"
    )
    assert started(tocsin, "admin-purge") == [{"user_id": "cy"}]  # nothing new


def test_an_expired_token_stops_the_action_at_run_time(
    client: TestClient, tocsin: Tocsin, tenant: Tenant, table: dict[str, Any], calls: list[Any]
) -> None:
    """(The route authenticates on the wall clock, the run is stamped past the expiry.)"""
    expiry = Tocsin.wall_clock() + timedelta(hours=1)
    writes, token_id = writer(tocsin, tenant, expires_at=expiry)
    assert put(client, tenant, table, [created(WIPE)], headers=writes).status_code == 200
    run = insert_and_work(tocsin, table, "x", expiry + timedelta(hours=1))
    assert run is not None and run["status"] == "failed"
    assert run["error"] == messages.target_refused("invoke_command", "wipe", token_id)
    assert run["error"].endswith("no command was invoked") and calls == []


def test_a_target_no_longer_exposed_stops_the_action_at_run_time(
    client: TestClient,
    tocsin: Tocsin,
    tenant: Tenant,
    table: dict[str, Any],
    calls: list[Any],
    settings: Settings,
) -> None:
    """The app is redeployed with ``greet`` and ``ping`` no longer exposed: a plain moderator's
    actions that reach them fail and start or invoke nothing."""
    principal = tocsin.verify_token(tenant.moderator["Authorization"].split()[1], now=NOW)
    assert principal is not None and principal.token_id is not None
    assert put(client, tenant, table, [created(GREET), created(PING)]).status_code == 200
    redeployed = Tocsin.open(settings=settings, workflows=[make_greet(tenants=False), make_purge()])
    try:
        redeployed.register_command("ping", lambda inputs: calls.append(("ping", inputs)))
        redeployed.insert_records(table["id"], [{"Title": "zed"}], now=NOW)
        redeployed.work(now=NOW)
        runs = redeployed.list_runs(table["id"], now=NOW)["items"]
        assert {r["status"] for r in runs} == {"failed"}
        assert sorted(r["error"] for r in runs) == [
            messages.target_refused("invoke_command", "ping", principal.token_id),
            messages.target_refused("start_workflow", "greet", principal.token_id),
        ]
        assert started(redeployed, "greet") == [] and calls == []
    finally:
        redeployed.close()


def test_the_token_id_is_the_servers_never_the_authors(
    client: TestClient, tocsin: Tocsin, tenant: Tenant, table: dict[str, Any], calls: Any
) -> None:
    """A moderator cannot borrow a ``schedules:write`` token by naming its id in the action."""
    _, token_id = writer(tocsin, tenant)
    forged = {**PURGE, "saved_by_token": token_id}
    resp = put(client, tenant, table, [created(forged)])
    assert resp.status_code == 400, resp.text
    assert "saved_by_token" in resp.json()["detail"]
    assert tocsin.get_triggers(table["id"]) == []


def test_the_in_process_facade_is_trusted(
    tocsin: Tocsin, table: dict[str, Any], calls: list[Any]
) -> None:
    [saved] = tocsin.set_triggers(table["id"], [created(PURGE, WIPE)], now=NOW)
    assert "saved_by_token" not in str(saved)
    assert (insert_and_work(tocsin, table, "ops", NOW) or {}).get("status") == "done"
    assert started(tocsin, "admin-purge") == [{"user_id": "ops"}]
    assert calls == [("wipe", {"who": "ops"})]


def test_a_workflows_tenants_flag_must_be_a_bool() -> None:
    from tocsin import workflow
    from tocsin.errors import ConfigError

    with pytest.raises(ConfigError) as caught:
        workflow(id="w", tenants="yes")  # type: ignore[arg-type]
    assert caught.value.detail == "workflow 'w': tenants must be True or False"


def test_a_schedule_run_checks_the_token_frozen_into_its_definition(
    client: TestClient, tocsin: Tocsin, tenant: Tenant, table: dict[str, Any], calls: list[Any]
) -> None:
    """A schedule run executes the definition frozen when it fired, token id included."""
    writes, token_id = writer(tocsin, tenant)
    action = {**PURGE, "input": {"user_id": "$trigger.id"}}
    hourly = {"on": "schedule", "schedule": {"type": "interval", "every_seconds": 3600}}
    resp = put(client, tenant, table, [{**hourly, "actions": [action]}], headers=writes)
    assert resp.status_code == 200, resp.text
    trigger_id = resp.json()["triggers"][0]["id"]
    for hours in (1, 2):
        at = NOW + timedelta(hours=hours, seconds=1)
        tocsin.tick(now=at)
        if hours == 2:
            tocsin.revoke_token(token_id, now=at)
        tocsin.work(now=at)
    first, second = reversed(tocsin.list_runs(table["id"], now=NOW + timedelta(hours=3))["items"])
    assert first["status"] == "done" and second["status"] == "failed"
    assert second["error"] == messages.target_refused("start_workflow", "admin-purge", token_id)
    assert started(tocsin, "admin-purge") == [{"user_id": trigger_id}]
