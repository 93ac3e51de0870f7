"""A table trigger's page in a real browser against a real ``tocsin serve``: its fire history
(its scheduled runs, scheduled vs fired time and status, skipped occurrences between them) as a
workflow schedule's, polled while a run is not finished; Pause / Resume return to it. Time is
driven explicitly (see ``test_studio_browser``)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from playwright.sync_api import expect

from support.waiting import wait_for

from .conftest import FIRST, World
from .test_studio_browser import POLL_WAIT_MS, next_poll, shot, sign_in

pytestmark = pytest.mark.slow
THIRD = datetime(2029, 1, 1, 0, 0, 5, tzinfo=UTC)


def test_a_table_triggers_page_shows_its_fires_and_skips(page: Any, world: World) -> None:
    t, table_id = world.t, world.table_id
    [trigger] = t.get_triggers(table_id)
    world.receiver.code = 200  # type: ignore[attr-defined]
    page.clock.install()
    assert t.tick(now=FIRST)["runs_created"] == 1

    def finished() -> bool:
        t.work(now=FIRST)  # the server's worker may have executed it first
        return all(r["status"] == "done" for r in t.list_runs(table_id, now=FIRST)["items"])

    wait_for("the 2027 run to end done", finished)
    assert t.tick(now=THIRD)["runs_created"] == 1  # 2028 coalesced into 2029

    sign_in(page, world, world.writer, f"/tables/{table_id}")
    page.click(f"article.trigger[data-trigger-id='{trigger['id']}'] h3 a")
    expect(page).to_have_url(world.url(f"/tables/{table_id}/triggers/{trigger['id']}"))
    expect(page.locator("h1")).to_contain_text("Post the yearly summary")
    rows = page.locator("#fires tbody tr")
    expect(rows).to_have_count(3)
    newest, skipped, oldest = rows.nth(0), rows.nth(1), rows.nth(2)
    expect(newest.locator("td[data-label=Scheduled] time")).to_have_attribute(
        "title", "2029-01-01 00:00:00 UTC"
    )
    expect(skipped).to_have_attribute("data-skip-reason", "coalesced")
    expect(skipped).to_contain_text("— ")
    expect(oldest.locator("td[data-label=Scheduled] time")).to_have_attribute(
        "title", "2027-01-01 00:00:00 UTC"
    )
    expect(oldest.locator("td[data-label=Fired] time")).to_have_attribute(
        "title", "2027-01-01 00:00:05 UTC"
    )
    expect(oldest.locator(".badge")).to_have_text("done")
    shot(page, world, "trigger-fires")

    # the 2029 run ends: the panel shows it without a reload, then stops polling
    def all_done() -> bool:
        t.work(now=THIRD)
        return all(r["status"] == "done" for r in t.list_runs(table_id, now=THIRD)["items"])

    wait_for("the 2029 run to end done", all_done)
    next_poll(page)
    expect(newest.locator(".badge")).to_have_text("done", timeout=POLL_WAIT_MS)
    expect(page.locator("#fires")).to_have_attribute("data-polling", "off", timeout=POLL_WAIT_MS)

    page.click("button:has-text('Pause')")
    expect(page).to_have_url(world.url(f"/tables/{table_id}/triggers/{trigger['id']}"))
    expect(page.locator("#state")).to_have_text("paused")
    page.click("button:has-text('Resume')")
    expect(page.locator("#state")).to_have_text("active")


def test_another_tenants_trigger_page_is_404(page: Any, world: World) -> None:
    t = world.t
    [trigger] = t.get_triggers(world.table_id)
    other = t.create_token(
        scope="chatroom",
        scope_id="11111111-2222-4333-8444-555555555555",
        role="moderator",
        permissions=["schedules:write"],
    )
    sign_in(page, world, other, "/tables")
    expect(page).to_have_url(world.url("/tables"))
    for path in ("", "/fires"):  # the context's session; no page load (a 404 logs an error)
        resp = page.request.get(
            world.url(f"/tables/{world.table_id}/triggers/{trigger['id']}{path}")
        )
        assert resp.status == 404 and "not found" in resp.text().lower()
    sign_in(page, world, world.writer, "/tables")
    expect(page).to_have_url(world.url("/tables"))
    resp = page.request.get(world.url(f"/tables/{world.table_id}/triggers/trg_000000000099"))
    assert resp.status == 404 and "not found" in resp.text().lower()
    ok = page.request.get(world.url(f"/tables/{world.table_id}/triggers/{trigger['id']}"))
    assert ok.status == 200
