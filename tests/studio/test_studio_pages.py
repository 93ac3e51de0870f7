"""Studio's pages without a browser (both backends): sign-in, the session cookie, CSRF, roles,
pagination, the publish-failed badge, and the tables listing behind them (SPEC §16)."""

from __future__ import annotations

import re
import uuid
import warnings
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from tocsin.api.app import create_app
from tocsin.service import Tocsin
from tocsin.store import schedules as store_schedules

from .conftest import CHAT, FIRST
from .studio_app import WORKFLOWS

# Starlette 1.x deprecates its TestClient over httpx (as tests/api/api_support.py notes)
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

SYNCED = datetime(2026, 12, 1, tzinfo=UTC)
PAGES = (
    "/workflows/schedules",
    "/workflows/schedules/wf_nightly",
    "/workflows",
    "/workflows/nightly",
    "/tables",
)


@pytest.fixture
def t(tocsin: Tocsin) -> Tocsin:
    tocsin.register_workflows(WORKFLOWS)
    tocsin.sync_schedules(now=SYNCED)
    return tocsin


@pytest.fixture
def client(t: Tocsin) -> Iterator[TestClient]:
    with TestClient(create_app(tocsin=t), follow_redirects=False) as http:
        yield http


def writer(t: Tocsin) -> str:
    return t.create_token(
        scope="chatroom", scope_id=CHAT, role="moderator", permissions=["schedules:write"]
    )


def member(t: Tocsin) -> str:
    return t.create_token(
        scope="chatroom", scope_id=CHAT, role="member", permissions=["schedules:read"]
    )


def csrf_of(html: str) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', html)
    assert found is not None
    return found.group(1)


def test_signed_out_pages_send_to_login_and_back(client: TestClient, t: Tocsin) -> None:
    for path in PAGES:
        resp = client.get(path)
        assert resp.status_code == 303, path
        assert resp.headers["location"].startswith("/login?next=")
    token = writer(t)
    signed = client.get("/login", params={"token": token, "next": "/workflows/nightly"})
    assert signed.status_code == 303 and signed.headers["location"] == "/workflows/nightly"
    for path in PAGES:
        page = client.get(path)
        assert page.status_code == 200, path
        assert "script-src 'self'" in page.headers["content-security-policy"]


@pytest.mark.parametrize(
    "path",
    [
        "/workflows/schedules/wf_nightly/pause",
        f"/tables/{uuid.UUID(int=1)}/runs/{uuid.UUID(int=2)}/retry",
    ],
)
def test_a_signed_out_form_post_never_signs_in_back_to_a_post_only_path(
    client: TestClient, t: Tocsin, path: str
) -> None:
    """A session that expired before a button was pressed: the sign-in must not land on the
    form's POST-only path (a bare 405 JSON page); it lands on the viewer's home instead."""
    resp = client.post(path, data={"csrf": "x"})
    assert resp.status_code == 303
    location = resp.headers["location"]
    assert location.startswith("/login")
    form = client.get(location)
    next_field = re.search(r'name="next" value="([^"]*)"', form.text)
    landing = next_field.group(1) if next_field else "/workflows/schedules"
    signed = client.get("/login", params={"token": writer(t), "next": landing})
    assert signed.status_code == 303
    assert client.get(signed.headers["location"]).status_code == 200


def test_login_link_sets_an_opaque_httponly_strict_cookie(client: TestClient, t: Tocsin) -> None:
    token = writer(t)
    resp = client.get("/login", params={"token": token})
    assert resp.status_code == 303 and resp.headers["location"] == "/workflows/schedules"
    cookie = resp.headers["set-cookie"]
    assert cookie.startswith("tocsin_session=")
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie and "Path=/" in cookie
    assert token not in cookie and token not in resp.headers["location"]
    assert resp.headers["referrer-policy"] == "no-referrer"


@pytest.mark.parametrize("target", ["//evil.example/x", "https://evil.example/", "/\\evil"])
def test_login_never_redirects_off_site(client: TestClient, t: Tocsin, target: str) -> None:
    resp = client.get("/login", params={"token": writer(t), "next": target})
    assert resp.headers["location"] == "/workflows/schedules"


def test_a_bad_token_shows_the_form_again(client: TestClient) -> None:
    resp = client.get("/login", params={"token": "nope"})
    assert resp.status_code == 200 and "not valid" in resp.text
    assert "tocsin_session" not in resp.headers.get("set-cookie", "")


def test_the_sign_in_form_needs_its_csrf_token(client: TestClient, t: Tocsin) -> None:
    token = writer(t)
    assert client.post("/login", data={"token": token}).status_code == 403
    form = client.get("/login")
    resp = client.post("/login", data={"token": token, "csrf": csrf_of(form.text)})
    assert resp.status_code == 303 and client.get("/workflows").status_code == 200


def test_a_table_token_lands_on_tables(client: TestClient, t: Tocsin) -> None:
    token = t.create_token(scope="chatroom", scope_id=CHAT, role="moderator")
    assert client.get("/login", params={"token": token}).headers["location"] == "/tables"
    refused = client.get("/workflows/schedules")
    assert refused.status_code == 403 and "schedules:read" in refused.text


def test_every_post_needs_the_sessions_csrf_token(client: TestClient, t: Tocsin) -> None:
    client.get("/login", params={"token": writer(t)})
    t.fire_schedules(now=FIRST)
    t.work(now=FIRST)
    run = t.workflow_runs("nightly")["items"][0]
    assert run["status"] == "suspended"
    posts = (
        "/workflows/schedules/wf_nightly/pause",
        f"/workflows/nightly/graph/{run['id']}/cancel",
        f"/workflows/nightly/graph/{run['id']}/resume",
        "/logout",
    )
    for path in posts:
        for form in ({}, {"csrf": "forged"}):
            resp = client.post(path, data=form)
            assert resp.status_code == 403, path
            assert "CSRF" in resp.text
    assert t.schedules.get("wf_nightly")["paused"] is False
    assert t.get_workflow_run(run["id"])["status"] == "suspended"
    csrf = csrf_of(client.get("/workflows/schedules/wf_nightly").text)
    done = client.post("/workflows/schedules/wf_nightly/pause", data={"csrf": csrf})
    assert done.status_code == 303 and t.schedules.get("wf_nightly")["paused"] is True
    page = client.get("/workflows/schedules/wf_nightly").text
    assert 'id="paused-since"' in page and "Paused since" in page


def test_a_member_sees_pages_without_buttons(client: TestClient, t: Tocsin) -> None:
    client.get("/login", params={"token": member(t)})
    page = client.get("/workflows/schedules/wf_nightly")
    assert page.status_code == 200 and "/pause" not in page.text and "<button" in page.text
    assert page.text.count("<button") == 1  # only "Sign out"
    csrf = csrf_of(page.text)
    refused = client.post("/workflows/schedules/wf_nightly/pause", data={"csrf": csrf})
    assert refused.status_code == 403 and "may look but not change" in refused.text
    assert t.schedules.get("wf_nightly")["paused"] is False


def test_a_revoked_token_signs_the_session_out(client: TestClient, t: Tocsin) -> None:
    token = writer(t)
    client.get("/login", params={"token": token})
    assert client.get("/workflows").status_code == 200
    (row,) = [r for r in t.list_tokens() if r["permissions"]]
    t.revoke_token(row["id"])
    assert client.get("/workflows").status_code == 303


def test_fire_history_is_paginated_and_shows_publish_failures(
    client: TestClient, t: Tocsin
) -> None:
    fires = [
        {
            "id": str(uuid.uuid4()),
            "schedule_id": "wf_nightly",
            "workflow_id": "nightly",
            "scheduled_for": FIRST + timedelta(days=i),
            "fired_at": FIRST + timedelta(days=i, seconds=1),
            "run_id": None,
            "publish_status": "publish_failed",
            "error": f"queue unavailable #{i}",
        }
        for i in range(45)
    ]
    with t.store.begin() as tx:
        store_schedules.insert_fires(tx, fires=fires)
    client.get("/login", params={"token": writer(t)})
    first = client.get("/workflows/schedules/wf_nightly").text
    assert first.count("data-fire-id=") == 20 and "page 1 of 3 · 45 fires" in first
    assert "publish failed" in first and "queue unavailable #44" in first  # newest first
    assert 'data-live="0"' in first  # publish failures are terminal: no polling
    last = client.get("/workflows/schedules/wf_nightly", params={"page": 3}).text
    assert last.count("data-fire-id=") == 5 and "queue unavailable #0" in last
    panel = client.get("/workflows/schedules/wf_nightly/fires", params={"page": 2}).text
    assert panel.count("data-fire-id=") == 20 and "<html" not in panel
    assert 'href="/workflows/schedules/wf_nightly?page=3"' in panel  # links to the page


def test_bad_input_is_4xx_never_500(client: TestClient, t: Tocsin) -> None:
    client.get("/login", params={"token": writer(t)})
    assert client.get("/workflows/schedules/nope").status_code == 404
    assert client.get("/workflows/nope").status_code == 404
    assert client.get("/workflows/nightly/graph/nope").status_code == 404
    assert client.get("/tables/nope").status_code == 404
    assert client.get("/workflows/schedules", params={"page": 0}).status_code == 422
    assert client.get("/tables/x", params={"status": "bogus"}).status_code == 422
    other = t.create_table(
        scope="chatroom", scope_id=str(uuid.uuid4()), name="Theirs", columns={"A": "text"}
    )
    assert client.get(f"/tables/{other['id']}").status_code == 404  # another tenant's


def test_list_tables_pages_one_scope(t: Tocsin) -> None:
    mine = [
        t.create_table(scope="chatroom", scope_id=CHAT, name=f"T{i}", columns={"A": "text"})
        for i in range(3)
    ]
    t.create_table(scope="chatroom", scope_id=str(uuid.uuid4()), name="X", columns={"A": "text"})
    t.trash_table(mine[1]["id"])
    page = t.list_tables("chatroom", CHAT, skip=0, limit=1)
    assert page["total"] == 2 and [x["name"] for x in page["items"]] == ["T0"]
    assert [x["name"] for x in t.list_tables("chatroom", CHAT, skip=1, limit=5)["items"]] == ["T2"]
    assert t.list_tables()["total"] == 3


def test_the_sign_in_links_token_never_reaches_the_logs() -> None:
    import logging

    from tocsin.cli.logs import JsonLinesFormatter

    line = '127.0.0.1:1 - "GET /login?token=s3cr3t-Value_1&next=/tables HTTP/1.1" 303'
    record = logging.makeLogRecord({"name": "uvicorn.access", "msg": line, "levelname": "INFO"})
    out = JsonLinesFormatter().format(record)
    assert "s3cr3t" not in out and "/login?token=[redacted]&next=/tables" in out


def test_preview_next_due_is_opt_in_and_feeds_next_fire(t: Tocsin) -> None:
    table = t.create_table(
        scope="chatroom", scope_id=CHAT, name="Cases", columns={"Due": "date"}, now=SYNCED
    )
    notify = [{"type": "notify", "message": "hi"}]
    triggers = [
        {"on": "schedule", "schedule": {"type": "cron", "expression": "0 9 * * 1"},
         "actions": notify},
        {"on": "schedule", "schedule": {"type": "date_column_reached", "column": "Due"},
         "actions": notify},
    ]  # fmt: skip
    t.set_triggers(table["id"], triggers, now=SYNCED)  # a Tuesday
    plain = t.preview(table["id"], now=SYNCED)["triggers"]
    assert all("next_due_at" not in arm for arm in plain)  # the API's SPEC §7 document
    cron, date = t.preview(table["id"], now=SYNCED, next_due=True)["triggers"]
    assert cron["next_due_at"] == "2026-12-07T09:00:00" and cron["due_at"] is None
    assert "next_due_at" not in date


def test_triggers_and_preview_arms_in_words() -> None:
    from tocsin.studio.words import preview_lines, trigger_words

    daily = {
        "on": "schedule",
        "schedule": {"type": "daily", "at": "01:30", "timezone": "Asia/Taipei"},
    }
    assert trigger_words(daily) == "Every day at 01:30 (Asia/Taipei)"
    cron = {"on": "schedule", "schedule": {"type": "cron", "expression": "0 9 * * 1-5"}}
    assert trigger_words(cron) == "At 09:00 on Monday through Friday (UTC)"
    due = {"type": "date_column_reached", "column": "Due", "offset_minutes": -1440}
    assert trigger_words({"on": "schedule", "schedule": due}) == (
        "When a record's Due is reached 1 day(s) before"
    )
    assert trigger_words({"on": "created"}) == "When a record is created"
    date_arm = {"kind": "date_column_reached", "config_status": "valid", "records_scanned": 3,
                "due_now": 1, "scheduled_for_future": 2, "truncated": False,
                "warnings": ["overdue_records_will_fire"]}  # fmt: skip
    assert preview_lines(date_arm) == [
        "3 record(s) looked at:",
        "1 due now (the next tick fires them)",
        "2 scheduled for later",
        "Overdue records will fire at the next tick.",
    ]
    busy = {"kind": "interval", "config_status": "valid", "active_run": True, "due_now": False,
            "last_consumed_window_at": "2026-01-01T00:00:00", "warnings": []}  # fmt: skip
    assert preview_lines(busy) == ["Not due: a run of this trigger is still active."]
    broken = {"kind": "invalid", "config_status": "invalid", "error_codes": ["timezone_invalid"]}
    assert preview_lines(broken) == [
        "The scheduler skips this trigger: its config is invalid (timezone_invalid)."
    ]


def test_a_moderator_pauses_and_resumes_a_schedule_trigger(client: TestClient, t: Tocsin) -> None:
    table = t.create_table(
        scope="chatroom", scope_id=CHAT, name="Hourly", columns={"Title": "text"}, now=SYNCED
    )
    notify = [{"type": "notify", "message": "hi"}]
    t.set_triggers(
        table["id"],
        [
            {
                "id": "trg_hourly",
                "on": "schedule",
                "schedule": {"type": "interval", "every_seconds": 3600},
                "actions": notify,
            },
            {"id": "trg_new", "on": "created", "actions": notify},
        ],
        now=SYNCED,
    )
    page_url, base = f"/tables/{table['id']}", f"/tables/{table['id']}/triggers/trg_hourly"

    def paused() -> bool:
        arms = t.preview(table["id"], now=datetime.now(UTC))["triggers"]
        return bool(next(a for a in arms if a["trigger_id"] == "trg_hourly").get("paused"))

    client.get("/login", params={"token": member(t)})
    csrf = csrf_of(client.get("/workflows").text)
    refused = client.post(f"{base}/pause", data={"csrf": csrf})
    assert refused.status_code == 403 and not paused()
    client.post("/logout", data={"csrf": csrf})
    client.get("/login", params={"token": t.create_token(scope="chatroom", scope_id=CHAT,
                                                         role="moderator")})  # fmt: skip
    page = client.get(page_url).text
    assert f'action="{base}/pause"' in page
    assert "/triggers/trg_new/pause" not in page  # a row-event trigger has no schedule to pause
    assert client.post(f"{base}/pause", data={}).status_code == 403 and not paused()
    done = client.post(f"{base}/pause", data={"csrf": csrf_of(page)})
    assert done.status_code == 303 and done.headers["location"] == page_url and paused()
    page = client.get(page_url).text
    assert f'action="{base}/resume"' in page and "badge-paused" in page
    assert "Paused: the scheduler fires nothing" in page
    done = client.post(f"{base}/resume", data={"csrf": csrf_of(page)})
    assert done.status_code == 303 and not paused()
    assert client.post(f"/tables/{table['id']}/triggers/trg_nope/pause",
                       data={"csrf": csrf_of(page)}).status_code == 404  # fmt: skip


def test_a_malformed_address_is_an_html_page_and_the_api_keeps_json(
    client: TestClient, t: Tocsin
) -> None:
    client.get("/login", params={"token": writer(t)})
    page = client.get("/workflows/schedules", params={"page": 0})
    assert page.status_code == 422 and page.headers["content-type"].startswith("text/html")
    assert "this address is not one Studio can show: query page:" in page.text
    bad_id = client.get("/tables/not%20an%20id")
    assert bad_id.status_code == 422 and "<html" in bad_id.text
    api = client.post(
        "/root/custom-tables/run-due-triggers",
        params={"tablelimit": 5},
        headers={"X-ADMIN-TOKEN": "admin-secret"},  # tests/conftest.py's settings
    )
    assert api.status_code == 422 and api.json()["detail"][0]["loc"] == ["query", "tablelimit"]


def test_a_run_page_shows_its_attempt_retry_policy_and_alert(tocsin: Tocsin) -> None:
    from tocsin import step, workflow

    @step(id="flaky")
    def flaky(data: object) -> object:
        raise RuntimeError("upstream 503")

    def page_someone(run: dict[str, object]) -> None:
        raise RuntimeError("pager down")

    policy = {"max_attempts": 2, "backoff_s": 30, "jitter": False}
    wf = workflow(id="shaky", retry=policy, on_failure=page_someone).then(flaky).commit()
    tocsin.register_workflows([wf])
    run = tocsin.start_workflow("shaky", {}, now=SYNCED)
    with TestClient(create_app(tocsin=tocsin), follow_redirects=False) as http:
        http.get("/login", params={"token": writer(tocsin)})
        html = http.get(f"/workflows/shaky/graph/{run['id']}").text
        assert re.search(r'id="run-attempt">2 of 2<', html)
        assert 'id="run-next-attempt"' in html and '"backoff_s": 30.0' in html
        tocsin.work(now=SYNCED + timedelta(seconds=30))
        html = http.get(f"/workflows/shaky/graph/{run['id']}").text
        assert 'id="run-next-attempt"' not in html
        assert "on_failure callable raised: pager down" in html
