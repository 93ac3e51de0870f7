"""Studio in a real browser against a real ``tocsin serve`` (SPEC §16).

Time is driven explicitly: the server ticks once an hour on the real clock and every schedule
fires once a year, so fires happen only when a test calls ``fire_schedules`` / ``tick`` with an
explicit ``now`` on the same database. The page's polling is real (every 5 s): the tests wait for
what it shows, never for the scheduler. Where a test waits for the next poll, it installs
Playwright's clock in the page and jumps it one period ahead (``next_poll``), so the pending
refresh runs now rather than up to 5 s later; the page's clock otherwise flows in real time, so a
refresh scheduled after the jump still comes, one period later.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from playwright.sync_api import expect

from support.waiting import wait_for

from .conftest import FIRST, SECOND, World
from .studio_app import LANE_ID, drive_lane

pytestmark = pytest.mark.slow
POLL_WAIT_MS = 20_000  # a few 5-second polls
POLL_MS = 5_000  # studio.js POLL_MS


def next_poll(page: Any) -> None:
    """Run the page's pending refresh now: its clock jumps one polling period (``page.clock``
    must have been installed before the page loaded)."""
    page.wait_for_load_state()  # a page just navigated to has scheduled its refresh
    page.clock.fast_forward(POLL_MS)


def sign_in(page: Any, world: World, token: str, next_path: str = "") -> None:
    page.goto(world.url("/login" + (f"?next={next_path}" if next_path else "")))
    page.fill("#token", token)
    page.click("button[type=submit]")


def shot(page: Any, world: World, name: str, *, full: bool = True) -> None:
    page.screenshot(path=str(world.shots / f"{name}.png"), full_page=full)


def test_sign_in_list_filter_detail_pause_and_resume(page: Any, world: World) -> None:
    page.goto(world.url("/workflows/schedules"))
    expect(page).to_have_url(re.compile(r"/login\?next="))  # signed out: to the sign-in page
    shot(page, world, "login")
    page.fill("#token", "not-a-token")
    page.click("button[type=submit]")
    expect(page.locator("[role=alert]")).to_contain_text("not valid")
    page.fill("#token", world.writer)
    page.click("button[type=submit]")
    expect(page).to_have_url(world.url("/workflows/schedules"))
    rows = page.locator("#schedules tbody tr")
    expect(rows).to_have_count(4)  # morning, evening, nightly, digest
    expect(page.locator("tr[data-schedule-id=wf_report__morning]")).to_contain_text(
        "At 00:00 on day 1 of the month in January"
    )
    shot(page, world, "schedules")

    page.fill("#workflowId", "report")
    page.click(".filter button")
    expect(page).to_have_url(world.url("/workflows/schedules?workflowId=report"))
    expect(rows).to_have_count(2)
    shot(page, world, "schedules-filtered")

    page.click("a[href='/workflows/schedules/wf_report__morning']")
    expect(page.locator("h1")).to_contain_text("wf_report__morning")
    expect(page.locator("#state")).to_have_text("active")
    expect(page.locator("#fires .empty")).to_contain_text("No fires yet")
    page.click("button:has-text('Pause')")
    expect(page.locator("#state")).to_have_text("paused")
    assert world.t.schedules.get("wf_report__morning")["paused"] is True
    shot(page, world, "schedule-paused")

    # the next tick: the witness fires, the paused schedule does not
    assert world.t.fire_schedules(now=FIRST) == 2  # evening + nightly
    page.reload()
    expect(page.locator("#state")).to_have_text("paused")
    expect(page.locator("#fires tbody tr")).to_have_count(0)
    assert world.t.schedules.fires("wf_report__evening")["total"] == 1

    page.click("button:has-text('Resume')")
    expect(page.locator("#state")).to_have_text("active")
    assert world.t.schedules.get("wf_report__morning")["paused"] is False
    page.goto(world.url("/workflows/schedules?workflowId=report"))
    expect(page.locator("tr[data-schedule-id=wf_report__morning] .badge-paused")).to_have_count(0)


def test_a_fire_appears_while_polling_and_polling_stops_once_terminal(
    page: Any, world: World
) -> None:
    t = world.t
    page.clock.install()
    assert t.fire_schedules(now=FIRST) == 3
    t.work(now=FIRST)  # nightly's run suspends (waits for approval); the server may race us
    first = wait_for(
        "the first nightly run to suspend",
        lambda: [r for r in t.workflow_runs("nightly")["items"] if r["status"] == "suspended"],
    )[0]
    sign_in(page, world, world.writer, "/workflows/schedules/wf_nightly")
    expect(page).to_have_url(world.url("/workflows/schedules/wf_nightly"))
    panel = page.locator("#fires")
    expect(panel).to_have_attribute("data-live", "1")
    expect(panel).to_have_attribute("data-polling", "on")
    expect(page.locator("#fires tbody tr")).to_have_count(1)
    expect(page.locator("#fires tbody tr .badge")).to_have_text("suspended")
    time_cell = page.locator("#fires tbody tr td time").first
    expect(time_cell).to_have_attribute("title", "2027-01-01 00:00:00 UTC")
    shot(page, world, "schedule-live")

    # a second fire while the page polls: it appears without a reload
    assert t.fire_schedules(now=SECOND) == 3
    next_poll(page)
    expect(page.locator("#fires tbody tr")).to_have_count(2, timeout=POLL_WAIT_MS)

    # resume the first from its run graph (the Resume form), the second through the facade
    page.goto(world.url(f"/workflows/nightly/graph/{first['id']}"))
    expect(page.locator("#run-status")).to_have_text("suspended")
    expect(page.locator(".stage.parallel .step")).to_have_count(2)  # count ‖ measure
    shot(page, world, "graph-suspended")
    page.fill("#data", '{"ok": true}')
    page.click("form[action$='/resume'] button")
    t.work(now=SECOND)
    next_poll(page)
    expect(page.locator("#run-status")).to_have_text("success", timeout=POLL_WAIT_MS)
    expect(page.locator("[data-step-id=measure] .badge")).to_have_text("success")
    shot(page, world, "graph")
    assert t.get_workflow_run(first["id"])["output"] is not None

    page.goto(world.url("/workflows/schedules/wf_nightly"))
    expect(page.locator("#fires")).to_have_attribute("data-polling", "on")
    second = next(r for r in t.workflow_runs("nightly")["items"] if r["status"] == "suspended")
    t.resume_workflow_run(second["id"], {"ok": True}, now=SECOND)
    next_poll(page)
    expect(page.locator("#fires")).to_have_attribute("data-polling", "off", timeout=POLL_WAIT_MS)
    expect(page.locator("#fires tbody tr .badge-success")).to_have_count(2)
    polls = page.evaluate("window.tocsinStudio")
    assert polls["timers"] == 0  # no refresh is scheduled any more
    shot(page, world, "schedule-terminal")


def test_schedules_header_action_for_zero_one_and_several(page: Any, world: World) -> None:
    sign_in(page, world, world.writer, "/workflows")
    expect(page).to_have_url(world.url("/workflows"))
    expect(page.locator("article[data-workflow-id]")).to_have_count(4)
    shot(page, world, "workflows")

    page.goto(world.url("/workflows/adhoc"))
    expect(page.locator("h1")).to_have_text("adhoc")
    expect(page.locator("#schedules-action")).to_have_count(0)  # none: hidden

    page.goto(world.url("/workflows/nightly"))
    action = page.locator("#schedules-action")
    expect(action).to_have_attribute("href", "/workflows/schedules/wf_nightly")  # one: direct
    shot(page, world, "workflow")
    action.click()
    expect(page).to_have_url(world.url("/workflows/schedules/wf_nightly"))

    page.goto(world.url("/workflows/report"))
    action = page.locator("#schedules-action")
    expect(action).to_have_attribute("href", "/workflows/schedules?workflowId=report")
    expect(action).to_have_text("Schedules (2)")
    action.click()
    expect(page.locator("#schedules tbody tr")).to_have_count(2)


def test_failed_table_run_is_retried_from_the_ui_and_ends_done(page: Any, world: World) -> None:
    t = world.t
    page.clock.install()
    counts = t.tick(now=FIRST)
    assert counts["runs_created"] == 1
    t.work(now=FIRST)  # the receiver answers 500: the run fails
    run = wait_for(
        "the table run to fail",
        lambda: [
            r for r in t.list_runs(world.table_id, now=FIRST)["items"] if r["status"] == "failed"
        ],
    )[0]
    sign_in(page, world, world.writer, "/tables")
    expect(page.locator("#tables tbody tr")).to_have_count(1)
    shot(page, world, "tables")
    page.click("#tables a")
    trigger = page.locator("article.trigger")
    expect(trigger).to_contain_text("At 00:00 on day 1 of the month in January (UTC)")
    expect(trigger.locator(".next-fire time")).to_have_attribute("title", "2028-01-01 00:00:00 UTC")
    page.click("nav.tabs a:has-text('stuck')")  # failed runs are stuck too (SPEC §8)
    expect(page.locator(f"tr[data-run-id='{run['id']}']")).to_contain_text("failed")
    page.click("nav.tabs a:has-text('failed')")
    row = page.locator(f"tr[data-run-id='{run['id']}']")
    expect(row).to_contain_text("answered 500")
    shot(page, world, "table-failed")

    world.receiver.code = 200  # type: ignore[attr-defined]
    row.locator("button:has-text('Retry')").click()
    expect(page).to_have_url(re.compile(r"/tables/.+\?status=failed"))

    def done() -> bool:
        t.work(now=FIRST)  # the server's worker may have executed it first
        return t.get_run(world.table_id, run["id"])["status"] == "done"

    page.click("nav.tabs a:has-text('all')")  # pending there (polling) or already done
    wait_for("the retried run to end done", done)
    next_poll(page)
    badge = page.locator(f"tr[data-run-id='{run['id']}'] td[data-label=Status] .badge")
    expect(badge).to_have_text("done", timeout=POLL_WAIT_MS)  # without a reload
    expect(page.locator("#runs-panel")).to_have_attribute("data-polling", "off")
    page.click("nav.tabs a:has-text('done')")
    expect(page.locator(f"tr[data-run-id='{run['id']}'] .badge")).to_have_text("done")
    shot(page, world, "table")


def test_member_sees_no_buttons_and_posts_without_csrf_are_refused(
    chromium: Any, page: Any, world: World
) -> None:
    t = world.t
    t.fire_schedules(now=FIRST)
    t.work(now=FIRST)
    sign_in(page, world, world.member, "/workflows/schedules/wf_report__morning")
    expect(page.locator("h1")).to_contain_text("wf_report__morning")
    expect(page.locator("main button")).to_have_count(0)
    shot(page, world, "member-schedule")
    page.goto(world.url("/tables"))
    page.click("#tables a")
    expect(page.locator("main")).to_contain_text("need a moderator token")
    expect(page.locator("main button")).to_have_count(0)
    run = t.workflow_runs("nightly")["items"][0]
    page.goto(world.url(f"/workflows/nightly/graph/{run['id']}"))
    expect(page.locator("#run-status")).to_have_text(re.compile("suspended|running|pending"))
    expect(page.locator("main button")).to_have_count(0)

    # the member's own session and CSRF token: still refused (read-only)
    csrf = page.locator("form.who input[name=csrf]").get_attribute("value")
    refused = page.request.post(
        world.url("/workflows/schedules/wf_report__morning/pause"), form={"csrf": csrf}
    )
    assert refused.status == 403 and "may look but not change" in refused.text()

    # a writer's POST without the CSRF token, or with a wrong one: refused, nothing written
    writer = chromium.new_context()
    try:
        tab = writer.new_page()
        sign_in(tab, world, world.writer, "/workflows/schedules/wf_report__morning")
        expect(tab.locator("button:has-text('Pause')")).to_have_count(1)
        url = world.url("/workflows/schedules/wf_report__morning/pause")
        assert tab.request.post(url, form={}).status == 403
        assert tab.request.post(url, form={"csrf": "forged"}).status == 403
        assert t.schedules.get("wf_report__morning")["paused"] is False
        good = tab.locator("form[action$='/pause'] input[name=csrf]").get_attribute("value")
        assert tab.request.post(url, form={"csrf": good}).status == 200  # after the redirect
        assert t.schedules.get("wf_report__morning")["paused"] is True
        tab.goto(world.url("/workflows/schedules/no-such-schedule"))
        expect(tab.locator("[role=alert]")).to_have_text("schedule not found")
        shot(tab, world, "error-404")
    finally:
        writer.close()


def test_phone_width_dark_mode_and_the_browsers_time_zone(chromium: Any, world: World) -> None:
    context = chromium.new_context(
        viewport={"width": 390, "height": 844},
        color_scheme="dark",
        is_mobile=True,
        timezone_id="Asia/Taipei",
        locale="en-US",
    )
    errors: list[str] = []
    try:
        tab = context.new_page()
        tab.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        sign_in(tab, world, world.writer)
        expect(tab.locator("#schedules tbody tr")).to_have_count(4)
        # times in the browser's zone (UTC+8 here), UTC on hover
        nightly = tab.locator("tr[data-schedule-id=wf_nightly] td[data-label='Next fire'] time")
        expect(nightly).to_have_attribute("title", "2027-01-01 00:00:00 UTC")
        expect(nightly).to_contain_text("8:00:00 AM")
        background = tab.evaluate("getComputedStyle(document.body).backgroundColor")
        assert background == "rgb(18, 21, 28)"  # the dark palette
        # the page itself never scrolls sideways; wide tables scroll inside their wrapper
        width = tab.evaluate("document.documentElement.scrollWidth")
        assert width <= 390
        shot(tab, world, "phone-schedules")
        tab.goto(world.url("/workflows/schedules/wf_nightly"))
        assert tab.evaluate("document.documentElement.scrollWidth") <= 390
        shot(tab, world, "phone-schedule")
        tab.goto(world.url("/workflows/schedules/wf_digest"))  # a compound trigger's tree
        expect(tab.locator("#trigger .badge-waiting")).to_have_count(2)
        assert tab.evaluate("document.documentElement.scrollWidth") <= 390
        shot(tab, world, "phone-schedule-tree")
        drive_lane(world.t)
        tab.goto(world.url(f"/lanes/{LANE_ID}"))
        expect(tab.locator("#attempts tbody tr")).to_have_count(7)
        assert tab.evaluate("document.documentElement.scrollWidth") <= 390
        shot(tab, world, "phone-lane")
    finally:
        context.close()
    assert errors == []


def digest_latch(world: World) -> object:
    """Tick at ``FIRST``, then the ``report succeeded`` leaf's latch of ``wf_digest`` (None:
    waiting)."""
    world.t.tick(now=FIRST)
    tree = world.t.schedules.get("wf_digest", now=FIRST)["trigger"]["tree"]
    return tree["all"][1]["any"][0]["latched_since"]


def test_a_compound_schedule_shows_its_tree_with_latches(page: Any, world: World) -> None:
    sign_in(page, world, world.writer, "/workflows/schedules")
    row = page.locator("tr[data-schedule-id=wf_digest]")
    expect(row.locator("td[data-label='When']")).to_contain_text(
        "At 12:00 on day 29 of the month in February (Europe/Berlin) and"
    )
    expect(row.locator("code.cron")).to_have_count(0)  # a tree has no cron column
    row.locator("a[href='/workflows/schedules/wf_digest']").click()
    expect(page.locator("h1")).to_contain_text("wf_digest")
    tree = page.locator("#trigger .ttree")
    expect(tree.locator(".tgroup-all > .tlabel")).to_have_text("ALL of:")
    expect(tree.locator(".tgroup-all .tgroup-any > .tlabel")).to_have_text("ANY of:")
    expect(tree.locator(".tleaf-event")).to_have_count(2)
    expect(tree.locator(".badge-waiting")).to_have_count(2)
    expect(tree.locator(".tleaf-event").first).to_contain_text("workflow report succeeded")
    # noon in Berlin (CET) on the next 29 February: the leaf's and the whole tree's next instant
    leap = "2028-02-29 11:00:00 UTC"
    expect(tree.locator(".tleaf-time time")).to_have_attribute("title", leap)
    expect(page.locator("#could-fire time")).to_have_attribute("title", leap)
    expect(page.locator("#satisfied-now")).to_contain_text("no")
    shot(page, world, "schedule-tree-waiting")

    # a report run succeeds: a tick latches the digest's event leaf (it does not fire: no instant)
    t = world.t
    assert t.fire_schedules(now=FIRST) == 3
    t.work(now=FIRST)  # the server may race us to the runs; either way they succeed
    wait_for("the digest's latch", lambda: digest_latch(world))
    page.reload()
    expect(tree.locator(".badge-latched")).to_have_count(1)
    expect(tree.locator(".badge-latched")).to_contain_text("satisfied since")
    expect(tree.locator(".badge-waiting")).to_have_count(1)  # nightly's definition did not change
    assert t.schedules.fires("wf_digest")["total"] == 0
    shot(page, world, "schedule-tree-latched")


def test_lanes_list_detail_and_the_decision_filter(page: Any, world: World) -> None:
    """Runs recorded by another process (the test's facade, explicit instants) show up on the
    served lane pages with their layers and decision badges; the filter narrows them."""
    drive_lane(world.t)
    sign_in(page, world, world.member, "/lanes")
    expect(page).to_have_url(world.url("/lanes"))
    expect(page.locator("nav a[aria-current=page]")).to_have_text("Lanes")
    lane = page.locator(f"tr[data-lane-id={LANE_ID}]")
    expect(lane).to_contain_text("At 00:00 on day 1 of the month in January")
    expect(lane).to_contain_text("Asia/Taipei")
    expect(lane.locator(".badge-decision-ready")).to_have_count(1)  # the last decision
    expect(lane.locator(".badge-not-registered")).to_have_count(0)  # the served app has it
    shot(page, world, "lanes")

    page.click(f"a[href='/lanes/{LANE_ID}']")
    rows = page.locator("#attempts tbody tr")
    expect(rows).to_have_count(7)
    ready = page.locator("#attempts tr[data-decision=ready]").last
    expect(ready).to_contain_text("post-zh")
    expect(ready).to_contain_text("policy excluded")
    expect(ready).to_contain_text("outside window")
    expect(ready.locator(".badge-succeeded")).to_have_count(1)
    # instants in the browser's zone, UTC on hover
    expect(ready.locator("time").first).to_have_attribute("title", "2026-09-09 23:30:00 UTC")
    shot(page, world, "lane")

    page.click("nav.tabs a[data-decision=stopped]")
    expect(page).to_have_url(world.url(f"/lanes/{LANE_ID}?decision=stopped"))
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text("timeout")
    expect(rows.first.locator(".badge-decision-stopped")).to_have_count(1)
    shot(page, world, "lane-stopped")
    page.click("nav.tabs a[data-decision=noop]")
    expect(rows).to_have_count(2)
    expect(page.locator("#attempts")).to_contain_text("source_empty")
    expect(page.locator("#attempts")).to_contain_text("no_eligible_input")
    expect(page.locator("#trigger-manual")).to_have_count(0)  # a reader gets no form

    # a writer triggers a manual run over a window read in the lane's zone
    sign_in(page, world, world.writer, f"/lanes/{LANE_ID}")
    page.click("#trigger-manual summary")
    page.fill("input[name=start]", "2026-09-20T07:30:00")
    page.fill("input[name=end]", "2026-09-21T07:30:00")
    shot(page, world, "lane-trigger")
    page.click("#trigger-manual button[type=submit]")
    expect(page).to_have_url(world.url(f"/lanes/{LANE_ID}"))
    expect(rows).to_have_count(8)
    expect(rows.first.locator(".badge-manual")).to_have_count(1)
    expect(rows.first.locator("time").first).to_have_attribute("title", re.compile("UTC"))
    newest = world.t.lanes.contracts(LANE_ID, limit=1)["items"][0]["contract"]
    assert newest["window"]["start_inclusive"] == "2026-09-20T07:30:00+08:00"


def test_a_paused_schedules_skipped_instants_show_in_its_history(page: Any, world: World) -> None:
    """Pause from the page, two yearly instants pass (ticks with an explicit now),
    resume: the history shows one ``paused`` skip row for both; the next fire is listed above
    it (one time-ordered history)."""
    sid = "wf_report__morning"
    sign_in(page, world, world.writer, f"/workflows/schedules/{sid}")
    expect(page).to_have_url(world.url(f"/workflows/schedules/{sid}"))
    expect(page.locator("#next-fires li")).to_have_count(5)
    expect(page.locator("#next-fires li time").first).to_have_attribute(
        "title", "2027-01-01 00:00:00 UTC"
    )
    expect(page.locator("#fires tr.skip")).to_have_count(0)
    page.click("button:has-text('Pause')")
    expect(page.locator("#state")).to_have_text("paused")
    expect(page.locator("#next-fires")).to_contain_text("none while paused")
    world.t.tick(now=FIRST)
    world.t.tick(now=SECOND)
    assert world.t.schedules.fires("wf_nightly")["total"] == 2  # the witness (overlap allow)
    assert world.t.schedules.fires(sid)["total"] == 0
    world.t.schedules.resume(sid, now=SECOND.replace(hour=1))  # the resume's instant: explicit
    page.reload()
    expect(page.locator("#state")).to_have_text("active")
    row = page.locator("#fires tr.skip[data-skip-reason=paused]")
    expect(row).to_have_count(1)
    expect(row).to_contain_text("skipped 2 occurrences")
    expect(row).to_contain_text("— paused")
    expect(row.locator("time").first).to_have_attribute("title", "2027-01-01 00:00:00 UTC")
    expect(row.locator("time").last).to_have_attribute("title", "2028-01-01 00:00:00 UTC")
    expect(page.locator("#fires tbody tr[data-fire-id]")).to_have_count(0)  # none while paused
    world.t.tick(now=SECOND.replace(year=2029))
    page.reload()
    rows = page.locator("#fires tbody tr")
    expect(rows).to_have_count(2)
    expect(rows.first).to_have_attribute("data-fire-id", re.compile("."))  # the 2029 fire
    expect(rows.last).to_have_attribute("data-skip-reason", "paused")  # below it: the skip
    shot(page, world, "schedule-skips")


def test_a_lane_paused_from_its_page_shows_its_paused_instants(page: Any, world: World) -> None:
    """Pause the yearly lane from its page, two of its instants pass (ticks with an explicit
    now), resume: its fire history shows one ``paused`` row for both and no run; the next
    instant's run shows above it."""
    lane = f"/lanes/{LANE_ID}"
    sign_in(page, world, world.writer, lane)
    expect(page).to_have_url(world.url(lane))
    expect(page.locator("#state")).to_have_text("active")
    expect(page.locator("#fires .empty")).to_contain_text("No scheduled run yet")
    page.click("button:has-text('Pause')")
    expect(page.locator("#state")).to_have_text("paused")
    expect(page.locator("#next-run")).to_contain_text("none while paused")
    assert world.t.lanes.get(LANE_ID)["paused"] is True
    shot(page, world, "lane-paused")
    assert world.t.tick(now=FIRST)["lanes_fired"] == 0
    assert world.t.tick(now=SECOND)["lanes_fired"] == 0
    world.t.lanes.resume(LANE_ID, now=SECOND.replace(hour=1))  # the resume's instant: explicit
    page.reload()
    expect(page.locator("#state")).to_have_text("active")
    row = page.locator("#fires tr.skip[data-skip-reason=paused]")
    expect(row).to_have_count(1)
    expect(row).to_contain_text("skipped 2 occurrences")
    expect(page.locator("#fires tbody tr[data-fire-id]")).to_have_count(0)  # none while paused
    assert world.t.tick(now=SECOND.replace(year=2029))["lanes_fired"] == 1
    page.reload()
    rows = page.locator("#fires tbody tr")
    expect(rows).to_have_count(2)
    # admitted; the served worker may be running it or have run it (a no-op handler: "noop")
    expect(rows.first).to_have_attribute("data-status", re.compile("^(pending|running|noop)$"))
    expect(rows.last).to_have_attribute("data-skip-reason", "paused")
    shot(page, world, "lane-fires")
    page.click("button:has-text('Pause')")
    expect(page.locator("#state")).to_have_text("paused")
    page.click("button:has-text('Resume')")
    expect(page.locator("#state")).to_have_text("active")
