"""``tocsin serve --app …`` as a real process: a chatroom moderator without ``schedules:write``
cannot start an admin workflow by saving a trigger (SPEC §10, §15). The direct route refuses it
(403), and so does ``PUT …/triggers`` with a ``start_workflow`` action naming it; a workflow the
app exposes to tenants (``tenants=True``) is saved and started by the next record insert, run
by the server's own worker, with the tenant's input."""

from __future__ import annotations

import signal
import uuid

import httpx
import pytest

from support.processes import ServedProcess, stop, tocsin_env
from support.waiting import wait_for
from tocsin import Tocsin

pytestmark = pytest.mark.slow

APP = "workflows.tenant_app:WORKFLOWS"
USER = {"user_id": "$row.Title"}
PURGE_REFUSED = (
    "start_workflow action: workflow 'admin-purge' is not exposed to tenants "
    "(workflow(..., tenants=True)); saving it needs a token with the 'schedules:write' permission"
)


@pytest.fixture
def env(store_url: str, at_head: None) -> dict[str, str]:
    return tocsin_env(store_url, tick_every_s="0.3", tests_importable=True)


@pytest.fixture
def serve_app() -> str:
    return APP


def tokens(store_url: str, room: str) -> tuple[dict[str, str], dict[str, str]]:
    """A moderator token of chatroom ``room`` (no API-wide permission) and a reader token
    (``schedules:read``), created on the server's database."""
    tocsin = Tocsin.open(store_url)
    try:
        moderator = tocsin.create_token(scope="chatroom", scope_id=room, role="moderator")
        reader = tocsin.create_token(permissions=["schedules:read"])
    finally:
        tocsin.close()
    return {"Authorization": f"Bearer {moderator}"}, {"Authorization": f"Bearer {reader}"}


def runs(http: httpx.Client, workflow_id: str, reader: dict[str, str]) -> list[dict[str, object]]:
    resp = http.get(f"/api/workflows/{workflow_id}/runs", headers=reader)
    assert resp.status_code == 200, resp.text
    items: list[dict[str, object]] = resp.json()["items"]
    return items


def test_a_moderator_cannot_start_an_admin_workflow_through_a_trigger(
    store_url: str, served: tuple[ServedProcess, str]
) -> None:
    proc, base = served
    room = str(uuid.uuid4())
    moderator, reader = tokens(store_url, room)
    prefix = f"/private/module/custom_tables/chatroom/{room}"
    with httpx.Client(base_url=base, headers=moderator, timeout=10) as http:
        direct = http.post("/api/workflows/admin-purge/start", json={"input": {"user_id": "x"}})
        assert direct.status_code == 403, direct.text
        table = http.post(f"{prefix}/tables", json={"name": "T", "columns": {"Title": "text"}})
        assert table.status_code == 201, table.text
        triggers = f"{prefix}/tables/{table.json()['id']}/triggers"

        def start(workflow_id: str) -> dict[str, object]:
            action = {"type": "start_workflow", "workflow_id": workflow_id, "input": USER}
            return {"triggers": [{"on": "created", "actions": [action]}]}

        refused = http.put(triggers, json=start("admin-purge"))
        assert refused.status_code == 403, refused.text
        assert refused.json() == {"detail": PURGE_REFUSED}
        assert http.get(triggers).json() == {"triggers": []}

        saved = http.put(triggers, json=start("greet"))
        assert saved.status_code == 200, saved.text
        record = http.post(
            f"{prefix}/tables/{table.json()['id']}/records", json={"data": {"Title": "eve"}}
        )
        assert record.status_code == 201, record.text
        greeted = wait_for("the greet run", lambda: runs(http, "greet", reader))
        assert [r["input"] for r in greeted] == [{"user_id": "eve"}]
        assert runs(http, "admin-purge", reader) == []
    assert stop(proc, signal.SIGTERM) == 0
